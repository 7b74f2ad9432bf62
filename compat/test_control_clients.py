"""Stock clients against faults armed through the control plane (README.md, Fault injection).

Each test arms its faults with ``kafka_shim.control`` (the pytest fixture's broker), waits on the
rules' ``fired`` counts and the request log rather than on time, and checks what the client made
of it: no duplicate and no gap after lost Produce responses, transactions that survive a failing
coordinator, read_committed consumers held at the LSO while markers are held, a transaction
expired by advancing the clock, a consumer group that rides out coordinator errors. The Python
clients here; Java in compat/test_control_java.py.
"""

from __future__ import annotations

import pytest

from compat.groups_support import create_topic, start_member
from compat.support import wait_for
from compat.txn_clients import CLIENT_NAMES, Clients, expect_failure, settle
from compat.wire import Wire

pytestmark = pytest.mark.shim_only("drives the broker's control plane")
RC = "read_committed"


@pytest.fixture
def clients(request, kafka_shim):
    c = Clients(request.param, kafka_shim.bootstrap_servers)
    yield c
    c.close_all()


@pytest.fixture
def wire(kafka_shim):
    w = Wire(kafka_shim.bootstrap_servers)
    yield w
    w.close()


each_client = pytest.mark.parametrize("clients", CLIENT_NAMES, indirect=True)


def fetches(control, since: int) -> int:
    return len(control.requests(api="Fetch", since=since)["requests"])


# -- lost Produce responses ------------------------------------------------------------------


@pytest.mark.parametrize("client", ["kafka-python", "confluent-kafka", "aiokafka"])
def test_idempotent_producer_across_lost_responses(kafka_shim, wire, client, monkeypatch):
    from compat import test_idempotent_retries as idem

    monkeypatch.setattr(idem, "N", 1500)
    topic = f"control-idempotent-{client}"
    wire.create_topic(topic)
    control = kafka_shim.control
    control.log_requests()
    rule = control.close(api="Produce", when="after", skip=3, count=4)["rule"]

    offsets = idem.PRODUCE[client](kafka_shim.bootstrap_servers, topic)

    assert control.wait(rule=rule, fired=4)["fired"] == 4  # four responses were lost after the append
    closed = [e for e in control.requests(api="Produce")["requests"] if e["outcome"] == "closed after"]
    assert len(closed) == 4
    assert offsets == list(range(idem.N)), "acknowledged offsets are not one per record in order"
    headers = wire.fetch_batches(topic, 0, idem.N)
    assert len({h.producer_id for h in headers}) == 1
    expected = 0
    for h in headers:  # each sequence once, no gap: the retried batches were recognised as duplicates
        assert h.base_sequence == expected
        expected += h.records_count
    assert expected == idem.N == wire.list_offset(topic, 0, 0)


# -- transactions ---------------------------------------------------------------------------


@each_client
@pytest.mark.parametrize("error", ["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS"])
def test_transaction_survives_a_failing_coordinator(kafka_shim, clients, wire, error):
    topic = f"control-txn-coord-{clients.name}-{error}"
    wire.create_topic(topic, 2)
    control = kafka_shim.control
    t = clients.txn_producer(f"txn-coord-{clients.name}")
    t.begin()
    assert t.send(topic, b"one", 0) == 0
    mid = control.fail_coordinator(coordinator="transaction", error=error, count=2)["rule"]
    assert t.send(topic, b"two", 1) == 0  # adds partition 1: the coordinator fails twice first
    assert control.wait(rule=mid, fired=2, timeout_ms=0)["fired"] == 2
    end = control.fail_coordinator(coordinator="transaction", error=error, count=1)["rule"]
    t.commit()  # EndTxn fails once, then is retried
    assert control.wait(rule=end, fired=1, timeout_ms=0)["fired"] == 1
    assert settle(clients.consumer(RC, topic, 0), 2) == [(0, b"one")]
    assert settle(clients.consumer(RC, topic, 1), 2) == [(0, b"two")]


@each_client
def test_a_producer_whose_commit_response_is_lost(kafka_shim, clients, wire):
    topic = f"control-lost-commit-{clients.name}"
    wire.create_topic(topic)
    control = kafka_shim.control
    control.log_requests()
    t = clients.txn_producer(f"txn-lost-commit-{clients.name}")
    t.begin()
    assert t.send(topic, b"once") == 0
    rule = control.close(api="EndTxn", when="after")["rule"]
    t.commit()  # the commit is applied, its answer lost; the client retries and is told it committed
    assert control.wait(rule=rule, fired=1, timeout_ms=0)["fired"] == 1
    end_txns = control.requests(api="EndTxn")["requests"]
    assert [e["outcome"] for e in end_txns] == ["closed after", "answered"] and end_txns[1]["error"] is None
    t.begin()
    assert t.send(topic, b"next") == 2  # after the COMMIT marker at 1: written once
    t.commit()
    assert settle(clients.consumer(RC, topic), 4) == [(0, b"once"), (2, b"next")]


@each_client
def test_held_markers_keep_read_committed_consumers_at_the_lso(kafka_shim, clients, wire):
    topic = f"control-held-{clients.name}"
    wire.create_topic(topic)
    control = kafka_shim.control
    control.log_requests()
    control.hold_markers()
    t = clients.txn_producer(f"txn-held-{clients.name}")
    t.begin()
    assert (t.send(topic, b"a"), t.send(topic, b"b")) == (0, 1)
    t.commit()  # answered; the markers wait
    consumer = clients.consumer(RC, topic)
    since = control.requests(limit=1)["requests"][-1]["seq"]
    # Three fetch round trips after the commit, and the consumer is still at the LSO (0).
    wait_for(lambda: (consumer.pump(0.05) or True) and fetches(control, since) >= 3, 20, 0, "three fetches")
    assert consumer.records == [] and consumer.position() in (0, None)
    assert wire.list_offset(topic, 0, 1) == 0 and wire.list_offset(topic, 0, 0) == 2
    assert control.release_markers()["released"] == [f"txn-held-{clients.name}"]
    assert settle(consumer, 3) == [(0, b"a"), (1, b"b")]


@each_client
def test_transaction_expires_when_the_clock_advances(kafka_shim, clients, wire):
    topic = f"control-expire-{clients.name}"
    wire.create_topic(topic)
    txn_id = f"txn-expire-{clients.name}"
    t = clients.txn_producer(txn_id, timeout_ms=600_000)
    t.begin()
    assert t.send(topic, b"x") == 0
    assert kafka_shim.control.advance_clock(ms=300_000)["aborted_transactions"] == []
    got = kafka_shim.control.advance_clock(ms=600_001, clock="transactions")
    assert got == {"aborted_transactions": [txn_id], "expired_transactional_ids": [], "expired_members": []}
    assert wire.list_offset(topic, 0, 1) == 2  # the ABORT marker at 1: the LSO is past it at once
    commit_error = expect_failure(t.commit)
    assert clients.fenced(commit_error), repr(commit_error)
    assert settle(clients.consumer(RC, topic), 2) == []


@each_client
def test_fencing_a_transactional_id(kafka_shim, clients, wire):
    topic = f"control-fence-{clients.name}"
    wire.create_topic(topic)
    txn_id = f"txn-fence-{clients.name}"
    t = clients.txn_producer(txn_id)
    t.begin()
    assert t.send(topic, b"x") == 0
    kafka_shim.control.fence(transactional_id=txn_id)
    error = expect_failure(t.commit)
    assert clients.fenced(error), repr(error)
    assert settle(clients.consumer(RC, topic), 2) == []


# -- consumer groups ------------------------------------------------------------------------


@pytest.mark.parametrize("client", CLIENT_NAMES)
@pytest.mark.parametrize("error", ["NOT_COORDINATOR", "COORDINATOR_LOAD_IN_PROGRESS"])
def test_consumer_group_survives_coordinator_errors(kafka_shim, client, error):
    bootstrap = kafka_shim.bootstrap_servers
    topic, group = f"control-group-{client}-{error}", f"control-group-{client}"
    create_topic(bootstrap, topic, 2)
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    values = {"a": [b"a%d" % i for i in range(10)], "b": [b"b%d" % i for i in range(10)]}
    member = start_member(client, bootstrap, topic, group)
    got: list = []

    def received(n):
        got.extend(member.take())
        return len(got) >= n
    try:
        [producer.send(topic, v, partition=i % 2).get(10) for i, v in enumerate(values["a"])]
        wait_for(lambda: received(10), 60, 0.02, "the first ten records")
        member.commit()
        control = kafka_shim.control
        # Heartbeats (NOT_COORDINATOR) or the commits and fetches of offsets meet a failing coordinator.
        rule = control.fail_coordinator(coordinator="group", error=error, count=2)["rule"]
        [producer.send(topic, v, partition=i % 2).get(10) for i, v in enumerate(values["b"])]
        wait_for(lambda: received(20), 60, 0.02, "ten records more")
        if error == "COORDINATOR_LOAD_IN_PROGRESS":  # heartbeats are answered (as Kafka's): the commit meets it
            member.commit()  # and the client retries it
        assert control.wait(rule=rule, fired=2)["fired"] == 2
        if error == "NOT_COORDINATOR":  # the heartbeats met it; the member found the coordinator again
            member.commit()
        assert member.call(lambda m: (m.committed(0), m.committed(1))) == (10, 10)
    finally:
        member.close()
        producer.close()
    assert sorted(v for _, _, v in got) == sorted(values["a"] + values["b"])


@pytest.mark.parametrize("client", CLIENT_NAMES)
def test_a_session_expires_when_the_group_clock_advances(kafka_shim, client):
    bootstrap = kafka_shim.bootstrap_servers
    topic, group = f"control-session-{client}", f"control-session-{client}"
    create_topic(bootstrap, topic, 1)
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap)
    member = start_member(client, bootstrap, topic, group)
    got: list = []

    def received(n):
        got.extend(member.take())
        return len(got) >= n
    try:
        producer.send(topic, b"before", partition=0).get(10)
        wait_for(lambda: received(1), 60, 0.02, "the first record")
        expired = kafka_shim.control.advance_clock(ms=60_000, clock="groups")
        assert expired["aborted_transactions"] == [] and len(expired["expired_members"]) == 1
        assert expired["expired_members"][0].startswith(f"{group}/")
        old = expired["expired_members"][0].split("/", 1)[1]

        def rejoined():  # the member learns it was removed (UNKNOWN_MEMBER_ID) and joins again
            _, summary = kafka_shim.call(lambda: kafka_shim.node.groups.describe_group(group))
            received(0)
            return summary.state == "Stable" and [m.member_id for m in summary.members] not in ([], [old])
        wait_for(rejoined, 60, 0.05, "the member back in the group under a new member id")
        producer.send(topic, b"after", partition=0).get(10)
        wait_for(lambda: received(2), 60, 0.02, "the record sent after the expiry")
        assert kafka_shim.control.advance_clock(ms=0, clock="groups")["expired_members"] == []
    finally:
        member.close()
        producer.close()
    assert [v for _, _, v in got][-1] == b"after"
