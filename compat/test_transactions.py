"""Transactions and isolation levels with the Python clients (kafka-python, aiokafka,
confluent-kafka), each scenario once per client through the adapters of compat/txn_clients.py.

They run against ``compat_target``: an in-process kafka-shim by default, or an Apache Kafka given
with ``--kafka-bootstrap`` / ``KAFKA_SHIM_TARGET``; nothing here looks inside the broker, so every
expectation must hold on Apache Kafka too. Where Kafka writes markers asynchronously after
answering EndTxn, the tests wait for the marker's offset before the next write, so the offsets of
compat/scenarios/ are exact on both.
"""

from __future__ import annotations

import re
import time

import pytest

from compat.targets import finalized_features

from compat.txn_clients import CLIENT_NAMES, expect_failure, settle, wait_for

READ_UNCOMMITTED, READ_COMMITTED = 0, 1
RC, RU = "read_committed", "read_uncommitted"


def each_client(*, cell: bool = True):
    """Run the test once per client library; ``cell``: it fills that client's cell of the matrix
    (the scenario comes from the test's own compat marker)."""
    return pytest.mark.parametrize("client_name", [
        pytest.param(n, id=n, marks=[pytest.mark.compat(client=n)] if cell else []) for n in CLIENT_NAMES])


@pytest.fixture
def name(compat_target, clients):
    """``name("seed")``: a topic or transactional id unique to this run, scenario and client."""
    return lambda what: f"{compat_target.prefix}-{what}-{clients.name}"


@pytest.fixture
def topic(request, wire, compat_target):
    """A fresh one-partition topic named after the test and its parameters."""
    t = compat_target.prefix + "-" + re.sub(r"[^a-zA-Z0-9._-]+", "-", request.node.name.removeprefix("test_")).strip("-")
    wire.create_topic(t)
    return t


def wait_for_end(wire, topic, offset, isolation=READ_UNCOMMITTED):
    """Until ListOffsets latest is ``offset`` (Kafka writes markers after answering EndTxn)."""
    wait_for(lambda: wire.list_offset(topic, 0, isolation, check=False) == offset, 20, 0.02,
             f"{topic} latest offset {offset} ({'LSO' if isolation else 'HW'})")


@pytest.mark.compat(scenario="txn.seed")
@each_client()
def test_seed_aborted_plain_committed(clients, wire, name, topic):
    a = clients.txn_producer(name("seed-a"))
    a.begin()
    assert (a.send(topic, b"a-1"), a.send(topic, b"a-2")) == (0, 1)
    a.abort()
    wait_for_end(wire, topic, 3)  # the ABORT marker at 2
    assert clients.plain_producer().send(topic, b"plain-1") == 3
    b = clients.txn_producer(name("seed-b"))
    b.begin()
    assert (b.send(topic, b"b-1"), b.send(topic, b"b-2")) == (4, 5)
    b.commit()
    wait_for_end(wire, topic, 7)  # the COMMIT marker at 6

    rc, ru = clients.consumer(RC, topic), clients.consumer(RU, topic)
    assert settle(rc, 7) == [(3, b"plain-1"), (4, b"b-1"), (5, b"b-2")]
    assert settle(ru, 7) == [(0, b"a-1"), (1, b"a-2"), (3, b"plain-1"), (4, b"b-1"), (5, b"b-2")]
    assert rc.end_offset() == ru.end_offset() == 7
    assert wire.list_offset(topic, 0, READ_COMMITTED) == wire.list_offset(topic, 0, READ_UNCOMMITTED) == 7


@pytest.mark.parametrize("outcome", [pytest.param(o, marks=pytest.mark.compat(scenario=f"txn.open_lso_{o}"))
                                     for o in ("commit", "abort")])
@each_client()
def test_open_transaction_holds_the_lso(clients, wire, name, topic, outcome):
    plain = clients.plain_producer()
    assert plain.send(topic, b"p-0") == 0
    t = clients.txn_producer(name(f"open-{outcome}"))
    t.begin()
    assert t.send(topic, b"t-1") == 1
    assert (plain.send(topic, b"p-2"), plain.send(topic, b"p-3")) == (2, 3)

    ru, rc = clients.consumer(RU, topic), clients.consumer(RC, topic)
    assert settle(ru, 4) == [(0, b"p-0"), (1, b"t-1"), (2, b"p-2"), (3, b"p-3")]
    assert settle(rc, 1) == [(0, b"p-0")]  # held at the open transaction's first offset
    # Lag is measured against the LSO under read_committed: the end offset is the LSO.
    assert (rc.end_offset(), ru.end_offset()) == (1, 4)
    assert (wire.list_offset(topic, 0, READ_COMMITTED), wire.list_offset(topic, 0, READ_UNCOMMITTED)) == (1, 4)
    assert rc.end_offset() - rc.position() == 0
    # What the client took from the fetch responses: HighWatermark 4 and (where it keeps it) LastStableOffset 1.
    wait_for(lambda: rc.pump(0.05) == [] and rc.highwater() == 4 and rc.lso() in (1, None), 10, 0,
             f"the client's high watermark 4 and LSO 1 (got {rc.highwater()}, {rc.lso()})")
    if clients.name != "kafka-python":  # kafka-python does not keep the last stable offset
        assert rc.lso() == 1
    assert rc.records == [(0, b"p-0")]

    t.commit() if outcome == "commit" else t.abort()
    wait_for_end(wire, topic, 5, READ_COMMITTED)  # the marker at 4 moved the LSO
    after = [(1, b"t-1"), (2, b"p-2"), (3, b"p-3")] if outcome == "commit" else [(2, b"p-2"), (3, b"p-3")]
    assert settle(rc, 5) == [(0, b"p-0")] + after  # the same consumer carries on
    assert rc.end_offset() == 5
    if clients.name != "kafka-python":
        wait_for(lambda: rc.pump(0.05) == [] and rc.lso() == 5, 10, 0, "the client's LSO 5")


@pytest.mark.compat(scenario="txn.zombie_fencing")
@each_client()
def test_zombie_fencing(clients, wire, name, topic):
    zombie = clients.txn_producer(name("zombie"))
    zombie.begin()
    assert zombie.send(topic, b"zombie-1") == 0
    fencer = clients.txn_producer(name("zombie"))  # same transactional.id: aborts the zombie's transaction
    wait_for_end(wire, topic, 2)  # its ABORT marker at 1
    fencer.begin()
    assert fencer.send(topic, b"fencer-1") == 2
    fencer.commit()
    wait_for_end(wire, topic, 4)

    send_error = expect_failure(zombie.send, topic, b"zombie-2")
    assert clients.fenced(send_error), repr(send_error)
    commit_error = expect_failure(zombie.commit)
    assert clients.fenced(commit_error), repr(commit_error)

    rc, ru = clients.consumer(RC, topic), clients.consumer(RU, topic)
    assert settle(rc, 4) == [(2, b"fencer-1")]
    assert settle(ru, 4) == [(0, b"zombie-1"), (2, b"fencer-1")]
    assert wire.list_offset(topic, 0, READ_UNCOMMITTED) == 4  # zombie-2 was never written


@pytest.mark.compat(scenario="txn.timeout")
@each_client()
def test_transaction_timeout(clients, wire, name, topic, compat_target):
    txn_id = name("timeout")
    t = clients.txn_producer(txn_id, timeout_ms=2000)
    t.begin()
    started = time.monotonic()
    assert t.send(topic, b"t-1") == 0
    assert wire.list_offset(topic, 0, READ_COMMITTED) == 0  # the LSO, while open
    wait_for_end(wire, topic, 2, READ_COMMITTED)  # aborted by the broker: ABORT marker at 1
    assert time.monotonic() - started >= 1.9  # not before transaction.timeout.ms

    # Kafka moves to CompleteAbort once the markers are written, so just after the one seen above.
    described = wait_for(lambda: (d := wire.describe_transaction(txn_id)).transaction_state == "CompleteAbort" and d,
                         10, message="the transaction described as CompleteAbort")
    assert (described.error_code, described.topics) == (0, ())
    (state,) = wire.describe_producers(topic, 0)
    assert state.producer_id == described.producer_id
    assert state.producer_epoch == described.producer_epoch  # the marker carries the fencing epoch
    assert state.current_txn_start_offset == -1

    send_error = expect_failure(t.send, topic, b"t-2")
    assert clients.fenced(send_error), repr(send_error)
    commit_error = expect_failure(t.commit)
    # Kafka 4.x aborts with the finalized transaction version 2 and keeps the fenced-from epoch as
    # the last one, so a client's KIP-360 bump from it succeeds (kafka-python's does, leaving it
    # with no transaction to commit); Kafka 3.x fences that bump too.
    if finalized_features(compat_target.bootstrap_servers).get("transaction.version", 0) < 2:
        assert clients.fenced(commit_error), repr(commit_error)
    assert settle(clients.consumer(RC, topic), 2) == []
    assert wire.list_offset(topic, 0, READ_UNCOMMITTED) == 2


@pytest.mark.compat(scenario="consumer.position_past_markers")
@each_client()
def test_position_advances_past_markers_and_aborted_batches(clients, wire, name, topic):
    a = clients.txn_producer(name("markers-a"))
    a.begin()
    assert (a.send(topic, b"a-0"), a.send(topic, b"a-1")) == (0, 1)
    a.abort()
    wait_for_end(wire, topic, 3)
    a.begin()
    assert a.send(topic, b"a-3") == 3
    a.abort()
    wait_for_end(wire, topic, 5)

    rc = clients.consumer(RC, topic)
    assert settle(rc, 5) == []  # polls return nothing, yet the position is the log end
    for marker in (2, 4):
        rc.seek(marker)
        assert settle(rc, 5) == []
    ru = clients.consumer(RU, topic)
    assert settle(ru, 5) == [(0, b"a-0"), (1, b"a-1"), (3, b"a-3")]


@each_client(cell=False)
def test_position_advances_past_a_trailing_commit_marker(clients, wire, name, topic):
    t = clients.txn_producer(name("commit-tail"))
    t.begin()
    assert t.send(topic, b"c-0") == 0
    t.commit()
    wait_for_end(wire, topic, 2)
    rc = clients.consumer(RC, topic)
    assert settle(rc, 2) == [(0, b"c-0")]  # 2: past the COMMIT marker at 1
    assert rc.end_offset() == 2


@each_client(cell=False)
def test_write_txn_markers_aborts_a_hanging_transaction(clients, wire, name, topic):
    """What kafka-transactions.sh --abort does: DescribeProducers gives the open transaction's
    producer id, epoch and coordinator epoch (-1 means 0), and WriteTxnMarkers to the partition
    leader writes its ABORT marker."""
    plain = clients.plain_producer()
    assert plain.send(topic, b"p-0") == 0
    hanging = clients.txn_producer(name("hanging"))
    hanging.begin()
    assert hanging.send(topic, b"hang-1") == 1
    assert plain.send(topic, b"p-2") == 2
    rc = clients.consumer(RC, topic)
    assert settle(rc, 1) == [(0, b"p-0")]

    (open_txn,) = [s for s in wire.describe_producers(topic, 0) if s.current_txn_start_offset >= 0]
    assert open_txn.current_txn_start_offset == 1
    codes = wire.write_txn_markers(open_txn.producer_id, open_txn.producer_epoch, max(open_txn.coordinator_epoch, 0),
                                   False, topic, [0])
    assert codes == {0: 0}
    assert wire.list_offset(topic, 0, READ_COMMITTED) == 4  # past the ABORT marker at 3
    assert settle(rc, 4) == [(0, b"p-0"), (2, b"p-2")]
    assert settle(clients.consumer(RU, topic), 4) == [(0, b"p-0"), (1, b"hang-1"), (2, b"p-2")]
    (after,) = [s for s in wire.describe_producers(topic, 0) if s.producer_id == open_txn.producer_id]
    assert after.current_txn_start_offset == -1
