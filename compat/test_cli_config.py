"""``kafka-shim serve --config server.properties --override name=value``: Kafka's property names
reach the broker, DescribeConfigs shows them as static broker configs, topics take their defaults
from them, and a bad value stops the start with Kafka's message."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.shim_only("starts the kafka-shim command itself")
CONSOLE_SCRIPT = Path(sys.executable).parent / "kafka-shim"
STATIC, DEFAULT = 4, 5


def describe(bootstrap: str, kind: str, name: str) -> dict:
    from confluent_kafka.admin import AdminClient, ConfigResource

    admin = AdminClient({"bootstrap.servers": bootstrap})
    (future,) = admin.describe_configs([ConfigResource(kind, name)]).values()
    return {k: (v.value, int(v.source)) for k, v in future.result(15).items()}


def test_properties_file_and_overrides_set_the_broker(tmp_path, shim_process):
    props = tmp_path / "server.properties"
    props.write_text("# a Kafka server.properties\nnum.partitions=3\nlog.retention.hours = 1\n"
                     "compression.type: zstd\nmessage.max.bytes=100\n")
    broker = shim_process(tmp_path / "data", 0, console_script=True,
                          args=["--config", str(props), "--override", "message.max.bytes=2000000"])
    bootstrap = broker.wait_ready(timeout=15)
    b = describe(bootstrap, "broker", "0")
    assert b["num.partitions"] == ("3", STATIC)
    assert b["log.retention.hours"] == ("1", STATIC)
    assert b["message.max.bytes"] == ("2000000", STATIC)  # --override wins over the file
    assert b["group.initial.rebalance.delay.ms"] == ("0", STATIC)  # the fixture's --override
    assert b["listeners"][0] == f"PLAINTEXT://{bootstrap.split(',')[0]}"  # broker 0's (of a cluster: the first)

    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    producer.send("auto", b"x").get(15)  # auto-created with num.partitions
    assert len(producer.partitions_for("auto")) == 3
    producer.close()
    t = describe(bootstrap, "topic", "auto")
    assert t["compression.type"] == ("zstd", STATIC)
    assert t["retention.ms"] == ("3600000", DEFAULT)  # from log.retention.hours; Kafka lists no synonym here
    broker.proc.send_signal(signal.SIGTERM)
    assert broker.wait(timeout=15) == 0


def test_a_bad_property_value_stops_the_start_with_kafkas_message(tmp_path):
    out = subprocess.run([str(CONSOLE_SCRIPT), "serve", "--listen", "127.0.0.1:0", "--data-dir", str(tmp_path / "d"),
                          "--override", "num.partitions=0"], capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert "Invalid value 0 for configuration num.partitions: Value must be at least 1" in out.stderr
