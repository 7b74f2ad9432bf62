"""kafka-clients 4.x against 3.9, 4.0 and 4.1 emulation: the broker defaults Kafka 4.0 changed
(KIP-1030) as a Java client meets them. log.message.timestamp.after.max.ms fell from Long.MAX_VALUE
to an hour, so a record stamped two hours ahead is refused (InvalidTimestampException) where 3.9
takes it, and the topic describes the new bound as its default. The scenario is
compat/java/ConfigScenarios.java's topic.future_timestamps. Also the configs 4.0 removed and its
1 MiB minimum segment.bytes, as the Java Admin client meets them (topic.release_configs)."""

from __future__ import annotations

import pytest

import shim

pytestmark = pytest.mark.shim_only("starts brokers emulating 3.9, 4.0 and 4.1")

LONG_MAX = "9223372036854775807"


def error(outcome) -> str | None:
    """The cause's class name (the send future wraps it in an ExecutionException)."""
    return None if outcome is None else outcome["chain"][-1].rsplit(".", 1)[-1]


@pytest.mark.parametrize("release,after_max_ms,refused", [
    ("3.9", LONG_MAX, None), ("4.0", "3600000", "InvalidTimestampException"),
    ("4.1", "3600000", "InvalidTimestampException")])
def test_records_stamped_ahead_of_the_broker(tmp_path, java4, release, after_max_ms, refused):
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        out = java4.run("KafkaDriver", ["topic.future_timestamps"], broker.bootstrap_servers, timeout=200,
                        prefix=f"j4d{release.replace('.', '')}", timeout_s=60)
    result = out["results"]["topic.future_timestamps"]
    assert result["ok"], result["error"]
    obs = result["observed"]
    described = obs["after_max_ms"]
    assert (described["value"], described["source"]) == (after_max_ms, "DEFAULT_CONFIG")
    assert described["synonyms"] == [{"name": "log.message.timestamp.after.max.ms", "value": after_max_ms,
                                      "source": "DEFAULT_CONFIG"}]
    assert error(obs["two_hours_ahead"]) == refused
    assert obs["a_minute_ahead"] is None


@pytest.mark.parametrize("release", ["3.9", "4.0", "4.1"])
def test_configs_kafka_4_removed_and_its_segment_minimum(tmp_path, java4, release):
    """Kafka 4.0 removed message.format.version and message.downconversion.enable (unknown topic config
    names from then on); 4.1 raised the topic's minimum segment.bytes to 1 MiB (KIP-1030, KAFKA-19080);
    3.9 takes both.
    The scenario is compat/java/ConfigScenarios.java's topic.release_configs."""
    with shim.BrokerThread(data_dir=tmp_path / "data", listen="127.0.0.1:0", kafka_version=release) as broker:
        out = java4.run("KafkaDriver", ["topic.release_configs"], broker.bootstrap_servers, timeout=200,
                        prefix=f"j4r{release.replace('.', '')}", timeout_s=60)
    result = out["results"]["topic.release_configs"]
    assert result["ok"], result["error"]
    obs = result["observed"]
    if release == "3.9":
        assert [obs[k] for k in ("create_removed", "create_small_segments", "alter_removed",
                                 "alter_small_segments")] == [None] * 4
        assert {"message.format.version", "message.downconversion.enable"} <= set(obs["described"])
        return
    for key, name in (("create_removed", "message.format.version"), ("alter_removed", "message.downconversion.enable")):
        assert error(obs[key]) == "InvalidConfigurationException"
        assert f"Unknown topic config name: {name}" in obs[key]["message"]
    for key in ("create_small_segments", "alter_small_segments"):
        if release == "4.0":
            assert obs[key] is None
            continue
        assert error(obs[key]) == "InvalidConfigurationException"
        assert "Value must be at least 1048576" in obs[key]["message"]
    assert not {"message.format.version", "message.downconversion.enable",
                "message.timestamp.difference.max.ms"} & set(obs["described"])
    assert "segment.bytes" in obs["described"]
