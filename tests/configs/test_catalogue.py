"""The catalogue of Kafka 3.9's configs: Kafka's parsing, validators and messages."""

from __future__ import annotations

import pytest

from shim.configs.catalogue import BROKER_CONFIGS, TOPIC_CONFIGS, ConfigError, ConfigType, broker_synonyms, dynamic


@pytest.mark.parametrize("name, raw, message", [
    ("retention.ms", "abc", "Invalid value abc for configuration retention.ms: Not a number of type LONG"),
    ("retention.ms", "-5", "Invalid value -5 for configuration retention.ms: Value must be at least -1"),
    ("segment.bytes", "13", "Invalid value 13 for configuration segment.bytes: Value must be at least 14"),
    ("segment.bytes", "4294967296", "Invalid value 4294967296 for configuration segment.bytes: Not a number of type INT"),
    ("compression.type", "gzipx", "Invalid value gzipx for configuration compression.type: String must be one of: "
     "uncompressed, zstd, lz4, snappy, gzip, producer"),
    ("cleanup.policy", "delete,x", "Invalid value x for configuration cleanup.policy: String must be one of: "
     "compact, delete"),
    ("preallocate", "yes", "Invalid value yes for configuration preallocate: Expected value to be either true or false"),
    ("min.cleanable.dirty.ratio", "1.5",
     "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value must be no more than 1"),
    ("compression.gzip.level", "0",
     "Invalid value 0 for configuration compression.gzip.level: Value must be between 1 and 9 or equal to -1"),
])
def test_bad_values_get_kafkas_config_exception_message(name, raw, message):
    with pytest.raises(ConfigError) as e:
        TOPIC_CONFIGS[name].parse(raw)
    assert str(e.value) == message


@pytest.mark.parametrize("name, raw, rendered", [
    ("cleanup.policy", " delete , compact ", "delete,compact"),
    ("preallocate", "TRUE", "true"),
    ("retention.ms", " 1000 ", "1000"),
    ("compression.gzip.level", "-1", "-1"),
    ("min.cleanable.dirty.ratio", "0.25", "0.25"),
])
def test_values_are_rendered_as_kafka_renders_them(name, raw, rendered):
    assert TOPIC_CONFIGS[name].canonical(raw) == rendered


def test_topic_configs_name_their_broker_synonym_and_types():
    assert TOPIC_CONFIGS["retention.ms"].synonym == "log.retention.ms"
    assert broker_synonyms("log.retention.ms") == ("log.retention.ms", "log.retention.minutes", "log.retention.hours")
    assert TOPIC_CONFIGS["max.message.bytes"].synonym == "message.max.bytes"
    assert TOPIC_CONFIGS["leader.replication.throttled.replicas"].synonym is None
    assert TOPIC_CONFIGS["cleanup.policy"].config_type == ConfigType.LIST
    assert TOPIC_CONFIGS["segment.jitter.ms"].default == "0"
    assert TOPIC_CONFIGS["delete.retention.ms"].default == "86400000"  # "(1 day)" stripped


def test_broker_configs_carry_update_mode_and_sensitivity():
    assert dynamic("message.max.bytes") and dynamic("listeners")
    assert not dynamic("auto.create.topics.enable") and not dynamic("no.such.config")
    assert BROKER_CONFIGS["ssl.keystore.password"].sensitive
    assert BROKER_CONFIGS["group.initial.rebalance.delay.ms"].default == "3000"
    assert BROKER_CONFIGS["log.retention.hours"].default == "168" and BROKER_CONFIGS["log.retention.ms"].default is None
    # every synonym a topic config names is a broker config
    assert all(k.synonym in BROKER_CONFIGS for k in TOPIC_CONFIGS.values() if k.synonym)


def _reference(folder, entries):
    """A kafka_config.html of ConfigDef.toHtml's shape: (name, doc, type, default, update mode)."""
    items = "".join(
        f'<li>\n<h4><a id="{n}"></a><a id="brokerconfigs_{n}" href="#brokerconfigs_{n}">{n}</a></h4>\n<p>{doc}</p>\n'
        f"<table><tbody>\n<tr><th>Type:</th><td>{t}</td></tr>\n<tr><th>Default:</th><td>{d}</td></tr>\n"
        f"<tr><th>Valid Values:</th><td></td></tr>\n<tr><th>Importance:</th><td>low</td></tr>\n"
        f"<tr><th>Update Mode:</th><td>{m}</td></tr>\n</tbody></table>\n</li>\n" for n, doc, t, d, m in entries)
    folder.mkdir(parents=True)
    (folder / "kafka_config.html").write_text(f'<ul class="config-list">\n{items}</ul>\n')
    return folder


def test_the_generator_gives_each_releases_added_broker_configs_and_reports_the_rest(tmp_path):
    import io

    from shim.configs.generate import added
    old = _reference(tmp_path / "39" / "generated", [("a.ms", "A", "int", "1", "read-only"),
                                                      ("gone", "G", "string", "null", "read-only")])
    new = _reference(tmp_path / "40" / "generated", [("a.ms", "A", "int", "2 (2 ms)", "cluster-wide"),
                                                      ("b", "<p>B</p>", "int", "", "read-only")])
    report = io.StringIO()
    assert added([old, new], report) == {"4.0": [{"name": "b", "type": "int", "default": None, "valid": "",
                                                  "importance": "low", "doc": "<p>B</p>", "update_mode": "read-only"}]}
    assert report.getvalue().splitlines() == ["4.0 default a.ms: '1' -> '2'",
                                              "4.0 update_mode a.ms: 'read-only' -> 'cluster-wide'",
                                              "4.0 removed gone"]
