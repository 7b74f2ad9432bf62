"""A static classic member inside a consumer group (KIP-848 mixed group), with kafka-python and
aiokafka: a classic consumer with ``group_instance_id`` joins a consumer group beside a
confluent-kafka ``group.protocol=consumer`` member and gets half the partitions; it is killed with
SIGKILL (no LeaveGroup) and a new process with the same instance id takes its place, as Kafka's
GroupMetadataManager replaces a static member: the old member id is gone at once, the new one has
the old target assignment, and the group epoch does not move (no rebalance). Synchronised on the
group's state in the broker, never on sleeps."""

from __future__ import annotations

import signal
import subprocess
import sys

import pytest

from compat.groups_support import create_topic, wait_for
from compat.test_groups_consumer_protocol import member, settle

pytest.importorskip("confluent_kafka")

pytestmark = [pytest.mark.compat(scenario="consumer.group_protocol_static_classic"),
              pytest.mark.shim_only("reads the group's state in the broker")]

KAFKA_PYTHON = """
import sys
from kafka import KafkaConsumer
c = KafkaConsumer(sys.argv[3], bootstrap_servers=sys.argv[1], group_id=sys.argv[2], group_instance_id="inst",
                  session_timeout_ms=30000, heartbeat_interval_ms=500, auto_offset_reset="earliest")
while True:
    c.poll(timeout_ms=200)
"""

AIOKAFKA = """
import asyncio, sys
from aiokafka import AIOKafkaConsumer
async def main():
    c = AIOKafkaConsumer(sys.argv[3], bootstrap_servers=sys.argv[1], group_id=sys.argv[2], group_instance_id="inst",
                         session_timeout_ms=30000, heartbeat_interval_ms=500, auto_offset_reset="earliest")
    await c.start()
    while True:
        await c.getmany(timeout_ms=200)
asyncio.run(main())
"""


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    from shim import BrokerThread

    with BrokerThread(data_dir=tmp_path_factory.mktemp("static-classic"), listen="127.0.0.1:0", kafka_version="4.1",
                      group_initial_rebalance_delay_ms=0, group_consumer_heartbeat_interval_ms=500,
                      extra={"group.consumer.min.heartbeat.interval.ms": "500"}) as b:
        yield b


def state(broker, group):
    """(group epoch, {member id: (classic?, instance id, assigned partitions, target partitions)})."""
    def read():
        g = broker.node.groups.consumer.groups.get(group)
        if g is None:
            return None
        count = lambda a: sum(len(ps) for ps in a.values())  # noqa: E731
        return g.group_epoch, {m.member_id: (m.uses_classic_protocol, m.instance_id, count(m.assigned),
                                             dict(g.target_of(m))) for m in g.members.values()}
    return broker.call(read)


def classic_process(code, bootstrap, group, topic):
    return subprocess.Popen([sys.executable, "-c", code, bootstrap, group, topic])


def replace_static_member(broker, code, group, topic):
    bootstrap = broker.bootstrap_servers
    create_topic(bootstrap, topic, 6)
    modern = member(bootstrap, [topic], group)
    procs = []
    try:
        settle([modern], [6], topics=(topic,))
        procs.append(classic_process(code, bootstrap, group, topic))

        def classic_owns_three():
            s = state(broker, group)
            classic = {mid: v for mid, v in (s[1].items() if s else ()) if v[0] and v[1] == "inst" and v[2] == 3}
            return (s[0], next(iter(classic)), classic[next(iter(classic))][3]) if classic else None
        epoch, old, target = wait_for(classic_owns_three, 60, "the classic static member to own three partitions")
        wait_for(lambda: len(modern.assignment()) == 3, 60, "the consumer-protocol member to keep three")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait(timeout=10)
        procs.append(classic_process(code, bootstrap, group, topic))

        def replaced():
            s = state(broker, group)
            new = [mid for mid, v in s[1].items() if v[1] == "inst" and mid != old]
            return (s, new[0]) if new else None
        (epoch_after, members), new = wait_for(replaced, 60, "a new member with the instance id")
        assert old not in members  # replaced at once, not after its 30 s session
        assert members[new][0] and members[new][3] == target
        assert epoch_after == epoch  # no rebalance
        wait_for(lambda: state(broker, group)[1][new][2] == 3, 60, "the new process to own the three partitions")
        assert state(broker, group)[0] == epoch
        assert len(modern.assignment()) == 3
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        modern.close()


@pytest.mark.compat(client="kafka-python")
def test_kafka_python_static_member_replaces_itself_in_a_consumer_group(broker):
    replace_static_member(broker, KAFKA_PYTHON, "static-kp", "static-kp-t")


@pytest.mark.compat(client="aiokafka")
def test_aiokafka_static_member_replaces_itself_in_a_consumer_group(broker):
    replace_static_member(broker, AIOKAFKA, "static-aio", "static-aio-t")
