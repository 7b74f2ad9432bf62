"""Broker settings by Kafka's property names: properties files, --override, the old flags as
aliases, and the static configs a broker describes."""

from __future__ import annotations

import pytest

from shim.broker import Broker
from shim.cli import _parser, config_from_args
from shim.config import BrokerConfig
from shim.configs.properties import config_from_properties, read_properties_file, static_properties


def args(*argv):
    return config_from_args(_parser().parse_args(["serve", *argv]))


def test_properties_file_syntax(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("# comment\n! also a comment\n\nnum.partitions=3\nlog.dirs : /var/kafka\n"
                    "listeners=PLAINTEXT://0.0.0.0:9093\nlong.value=a,\\\n  b\n")
    assert read_properties_file(path) == {"num.partitions": "3", "log.dirs": "/var/kafka",
                                          "listeners": "PLAINTEXT://0.0.0.0:9093", "long.value": "a,b"}


def test_kafka_names_set_the_fields_the_broker_acts_on(tmp_path):
    path = tmp_path / "server.properties"
    path.write_text("listeners=PLAINTEXT://127.0.0.1:9093\nlog.dirs=/tmp/x\nnum.partitions=2\n"
                    "log.retention.minutes=5\nlog.flush.interval.messages=1\ngroup.min.session.timeout.ms=500\n")
    c = args("--config", str(path), "--override", "num.partitions=4", "--override", "auto.create.topics.enable=false")
    assert (c.listen, str(c.data_dir), c.num_partitions, c.retention_ms) == ("127.0.0.1:9093", "/tmp/x", 4, 300_000)
    assert (c.fsync, c.group_min_session_timeout_ms, c.auto_create_topics) == ("always", 500, False)


def test_the_old_flags_are_aliases_and_win(tmp_path):
    c = args("--override", "num.partitions=4", "--num-partitions", "6", "--listen", "127.0.0.1:0",
             "--retention-ms", "1000", "--fsync", "always", "--no-auto-create-topics")
    assert (c.num_partitions, c.listen, c.retention_ms, c.fsync, c.auto_create_topics) == (6, "127.0.0.1:0", 1000,
                                                                                           "always", False)
    assert c.extra["num.partitions"] == "6"


def test_defaults_match_kafka_where_kafka_has_one():
    c = args()
    assert c.group_initial_rebalance_delay_ms == 3000 == BrokerConfig().group_initial_rebalance_delay_ms
    assert (c.listen, str(c.data_dir)) == ("127.0.0.1:9092", ".kafka-shim")


@pytest.mark.parametrize("override, message", [
    ("num.partitions=0", "Invalid value 0 for configuration num.partitions: Value must be at least 1"),
    ("auto.create.topics.enable=maybe",
     "Invalid value maybe for configuration auto.create.topics.enable: Expected value to be either true or false"),
    ("listeners=PLAINTEXT://h", "listeners entries are NAME://host:port, not 'PLAINTEXT://h'"),
    ("listeners=FOO://h:1", "listener FOO has no entry in listener.security.protocol.map"),
])
def test_bad_values_are_refused_with_kafkas_message(override, message):
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        args("--override", override)


def test_static_properties_are_what_was_set_and_our_own_defaults():
    c = config_from_properties({"log.retention.hours": "2", "compression.type": "zstd"}, BrokerConfig())
    props = static_properties(c)
    assert props["log.retention.hours"] == "2" and props["compression.type"] == "zstd"
    assert "log.retention.ms" not in props  # the field follows the hours; they were what was set
    assert "log.segment.bytes" not in props  # kafka-shim's default is Kafka's, 1 GiB
    assert static_properties(config_from_properties({"log.segment.bytes": "1073741824"}, BrokerConfig()))[
        "log.segment.bytes"] == "1073741824"  # set, even to the default: a static broker config, as in Kafka
    assert "message.max.bytes" not in props  # equal to Kafka's default, not set


def test_list_settings_are_described_as_kafkas_comma_separated_text():
    # kafka-shim's default mechanisms differ from Kafka's (GSSAPI), so they are shown as set
    assert static_properties(BrokerConfig())["sasl.enabled.mechanisms"] == "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    c = config_from_properties({"sasl.enabled.mechanisms": "SCRAM-SHA-512, PLAIN"}, BrokerConfig())
    assert c.sasl_enabled_mechanisms == "SCRAM-SHA-512,PLAIN"
    assert static_properties(c)["sasl.enabled.mechanisms"] == "SCRAM-SHA-512,PLAIN"  # ConfigDef.convertToString


def test_a_property_in_extra_that_its_field_contradicts_is_refused():
    # BrokerConfig(extra=...) only carries properties through; one that names a field (here
    # retention_check_interval_ms) would silently do nothing, so the broker refuses to start
    with pytest.raises(ValueError, match="retention_check_interval_ms=100"):
        Broker(extra={"log.retention.check.interval.ms": "100"})
    Broker(config_from_properties({"log.retention.check.interval.ms": "100", "num.partitions": "3"}))
    Broker(extra={"num.partitions": str(BrokerConfig().num_partitions), "log.cleaner.backoff.ms": "20"})
