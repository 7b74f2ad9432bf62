"""KIP-848 GROUP configs with confluent-kafka: its AdminClient sets consumer.session.timeout.ms and
consumer.heartbeat.interval.ms on a GROUP resource (incremental_alter_configs) and describes them
(describe_configs: the broker's values as DEFAULT_CONFIG, the group's as GROUP_CONFIG); a value
outside the broker's group.consumer.min/max bounds is INVALID_CONFIG; and a group.protocol=consumer
member killed with SIGKILL is fenced after its group's session timeout (6 s) where the broker's
(45 s) would keep it. Synchronised on the group's state (ConsumerGroupDescribe), never on sleeps."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest

from compat.groups_support import create_topic, wait_for
from compat.test_groups_consumer_protocol import consumer_group_describe

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(client="confluent-kafka", scenario="consumer.group_configs"),
              pytest.mark.shim_only("Kafka 4.1 emulation with lowered group.consumer minimums")]

BROKER_SESSION_MS = 45_000
GROUP_SESSION_MS = 6_000

MEMBER = """
import sys, confluent_kafka as ck
c = ck.Consumer({"bootstrap.servers": sys.argv[1], "group.id": sys.argv[2], "group.protocol": "consumer",
                 "auto.offset.reset": "earliest"})
c.subscribe([sys.argv[3]])
while True:
    c.poll(0.2)
"""


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("kip848-configs"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0,
                      extra={"group.consumer.min.session.timeout.ms": str(GROUP_SESSION_MS)}) as b:
        yield b


def alter(bootstrap, group, **configs):
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [ConfigEntry(k, v, incremental_operation=AlterConfigOpType.SET) for k, v in configs.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    return admin.incremental_alter_configs([resource])[resource].result(timeout=30)


def describe(bootstrap, group, prefix="consumer."):
    from confluent_kafka.admin import AdminClient, ConfigResource, ResourceType

    resource = ConfigResource(ResourceType.GROUP, group)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    entries = admin.describe_configs([resource])[resource].result(timeout=30)
    return {name: (e.value, e.source) for name, e in entries.items() if name.startswith(prefix)}


def test_group_configs_through_the_admin_client(broker):
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import ConfigSource

    bootstrap = broker.bootstrap_servers
    assert describe(bootstrap, "cfg-admin") == {
        "consumer.session.timeout.ms": (str(BROKER_SESSION_MS), ConfigSource.DEFAULT_CONFIG.value),
        "consumer.heartbeat.interval.ms": ("5000", ConfigSource.DEFAULT_CONFIG.value)}
    alter(bootstrap, "cfg-admin", **{"consumer.session.timeout.ms": "50000", "consumer.heartbeat.interval.ms": "6000"})
    assert describe(bootstrap, "cfg-admin") == {
        "consumer.session.timeout.ms": ("50000", ConfigSource.GROUP_CONFIG.value),
        "consumer.heartbeat.interval.ms": ("6000", ConfigSource.GROUP_CONFIG.value)}
    with pytest.raises(KafkaException) as e:
        alter(bootstrap, "cfg-admin", **{"consumer.session.timeout.ms": "70000"})
    assert e.value.args[0].code() == KafkaError.INVALID_CONFIG
    assert "group.consumer.max.session.timeout.ms" in e.value.args[0].str()


def test_streams_group_configs_are_taken_without_the_streams_protocol(broker):
    """Kafka 4.1 defines KIP-1071's streams.* GROUP configs whatever group.coordinator.rebalance.protocols
    enables (here classic and consumer, its default): they are set, described and checked against the
    broker's group.streams.* bounds like the others."""
    from confluent_kafka import KafkaError, KafkaException
    from confluent_kafka.admin import ConfigSource

    bootstrap = broker.bootstrap_servers
    default = ConfigSource.DEFAULT_CONFIG.value
    assert describe(bootstrap, "cfg-streams", "streams.") == {
        "streams.session.timeout.ms": ("45000", default), "streams.heartbeat.interval.ms": ("5000", default),
        "streams.num.standby.replicas": ("0", default)}
    alter(bootstrap, "cfg-streams", **{"streams.num.standby.replicas": "2", "streams.session.timeout.ms": "50000"})
    group = ConfigSource.GROUP_CONFIG.value
    assert describe(bootstrap, "cfg-streams", "streams.") == {
        "streams.session.timeout.ms": ("50000", group), "streams.heartbeat.interval.ms": ("5000", default),
        "streams.num.standby.replicas": ("2", group)}
    with pytest.raises(KafkaException) as e:
        alter(bootstrap, "cfg-streams", **{"streams.num.standby.replicas": "3"})
    assert e.value.args[0].code() == KafkaError.INVALID_CONFIG
    assert "group.streams.max.standby.replicas" in e.value.args[0].str()


def test_a_killed_member_is_fenced_after_its_groups_session_timeout(broker):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, "cfg-t", 3)
    alter(bootstrap, "cfg-fence", **{"consumer.session.timeout.ms": str(GROUP_SESSION_MS)})
    proc = subprocess.Popen([sys.executable, "-c", MEMBER, bootstrap, "cfg-fence", "cfg-t"])
    try:
        def joined():
            described = consumer_group_describe(bootstrap, "cfg-fence")
            return described if described and described[2] and all(e > 0 for e in described[2].values()) else None
        wait_for(joined, 60, "the member to join")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        killed = time.monotonic()
        # the broker's own session timeout (45 s) would keep the member past this wait
        wait_for(lambda: consumer_group_describe(bootstrap, "cfg-fence")[2] == {}, BROKER_SESSION_MS / 1000 - 15,
                 "the member to be fenced after the group's session timeout")
        assert time.monotonic() - killed >= GROUP_SESSION_MS / 1000 - 1
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
