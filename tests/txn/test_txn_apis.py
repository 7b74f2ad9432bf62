"""The transactional APIs on the wire (kio requests through shim.apis.dispatch.dispatch): error
codes per request version, the produce-time checks, and the admin APIs of KIP-664."""

from __future__ import annotations

import datetime

import pytest

from kafka.protocol.admin.transactions import DescribeTransactionsResponse
from shim.apis.dispatch import dispatch
from shim.coordinators.txn.state import TxnState
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, encode_request, make, request_class, request_module
from txn_helpers import (
    DESCRIBE_PRODUCERS, DESCRIBE_TRANSACTIONS, INIT_PRODUCER_ID, LIST_TRANSACTIONS, TOPIC, Producer, add_offsets,
    add_partitions, call, end_txn, init_producer_id, produce, wall_ms, write_marker,
)

TP0, TP1 = (TOPIC, 0), (TOPIC, 1)
FENCED, OLD_FENCED = ErrorCode.producer_fenced, ErrorCode.invalid_producer_epoch


async def begin(node, txn_id="tx", partitions=(TP0,), timeout_ms=60_000):
    r = await init_producer_id(node, txn_id, timeout_ms=timeout_ms)
    assert r.error_code == ErrorCode.none
    if partitions:
        assert set((await add_partitions(node, txn_id, r.producer_id, r.producer_epoch, partitions)).values()) == {
            ErrorCode.none}
    return r.producer_id, r.producer_epoch


async def fenced_identity(node, txn_id="tx"):
    """A producer id/epoch that a second InitProducerId has fenced."""
    pid, epoch = await begin(node, txn_id, partitions=())
    again = await init_producer_id(node, txn_id)
    assert (again.producer_id, again.producer_epoch) == (pid, epoch + 1)
    return pid, epoch


# -- InitProducerId -------------------------------------------------------------------------


@pytest.mark.parametrize("version", range(0, 6))
async def test_init_without_transactional_id_gives_a_new_producer_id_with_epoch_0(txn_node, version):
    a = await call(txn_node, INIT_PRODUCER_ID, version, transactional_id=None, transaction_timeout=2**31 - 1,
                   producer_id=-1, producer_epoch=-1)
    b = await call(txn_node, INIT_PRODUCER_ID, version, transactional_id=None, transaction_timeout=2**31 - 1,
                   producer_id=-1, producer_epoch=-1)
    assert (a.error_code, a.producer_epoch, b.error_code, b.producer_epoch) == (0, 0, 0, 0)
    assert a.producer_id != b.producer_id


@pytest.mark.parametrize("version", range(0, 6))
async def test_init_request_errors(txn_node, version):
    assert (await init_producer_id(txn_node, "", version=version)).error_code == ErrorCode.invalid_request
    for timeout in (0, 900_001):
        r = await init_producer_id(txn_node, "tx", timeout_ms=timeout, version=version)
        assert (r.error_code, r.producer_id, r.producer_epoch) == (ErrorCode.invalid_transaction_timeout, -1, -1)


@pytest.mark.parametrize("version", [3, 4, 5])
@pytest.mark.parametrize(("pid", "epoch"), [(5, -1), (-1, 0)])
async def test_init_with_only_one_of_producer_id_and_epoch_is_invalid_request(txn_node, version, pid, epoch):
    r = await init_producer_id(txn_node, "tx", pid=pid, epoch=epoch, version=version)
    assert r.error_code == ErrorCode.invalid_request
    assert "tx" not in txn_node.txn.txns or txn_node.txn.txns["tx"].producer_epoch == -1


@pytest.mark.parametrize(("version", "code"), [(3, OLD_FENCED), (4, FENCED), (5, FENCED)])
async def test_init_with_a_fenced_identity_per_version(txn_node, version, code):
    """Kafka: InitProducerId below v4 reports PRODUCER_FENCED as INVALID_PRODUCER_EPOCH."""
    pid, epoch = await fenced_identity(txn_node)
    r = await init_producer_id(txn_node, "tx", pid=pid, epoch=epoch, version=version)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (code, -1, -1)


@pytest.mark.parametrize("version", [3, 4, 5])
async def test_init_kip360_bump_and_retry_on_the_wire(txn_node, version):
    pid, epoch = await begin(txn_node, partitions=())
    r = await init_producer_id(txn_node, "tx", pid=pid, epoch=epoch, version=version)
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 1)
    r = await init_producer_id(txn_node, "tx", pid=pid, epoch=epoch, version=version)  # the retry
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 1)


async def test_init_while_ongoing_is_concurrent_transactions_then_epoch_plus_2(txn_node):
    pid, epoch = await begin(txn_node)
    r = await init_producer_id(txn_node, "tx")
    assert (r.error_code, r.producer_id, r.producer_epoch) == (ErrorCode.concurrent_transactions, -1, -1)
    assert txn_node.txn.txns["tx"].state is TxnState.COMPLETE_ABORT
    r = await init_producer_id(txn_node, "tx")
    assert (r.error_code, r.producer_id, r.producer_epoch) == (0, pid, epoch + 2)


# -- AddPartitionsToTxn / AddOffsetsToTxn / EndTxn ------------------------------------------


@pytest.mark.parametrize(("version", "code"), [(0, OLD_FENCED), (1, OLD_FENCED), (2, FENCED), (3, FENCED)])
async def test_add_partitions_fenced_per_version(txn_node, version, code):
    pid, epoch = await fenced_identity(txn_node)
    assert await add_partitions(txn_node, "tx", pid, epoch, [TP0, TP1], version=version) == {TP0: code, TP1: code}
    assert txn_node.txn.txns["tx"].state is TxnState.EMPTY


@pytest.mark.parametrize(("version", "code"), [(0, OLD_FENCED), (1, OLD_FENCED), (2, FENCED), (3, FENCED), (4, FENCED)])
async def test_add_offsets_fenced_per_version(txn_node, version, code):
    pid, epoch = await fenced_identity(txn_node)
    assert await add_offsets(txn_node, "tx", pid, epoch, "g", version=version) == code


@pytest.mark.parametrize(("version", "code"), [(0, OLD_FENCED), (1, OLD_FENCED), (2, FENCED), (3, FENCED), (4, FENCED)])
async def test_end_txn_fenced_per_version(txn_node, version, code):
    pid, epoch = await begin(txn_node)
    await init_producer_id(txn_node, "tx")  # aborts the transaction, epoch + 1 (CONCURRENT_TRANSACTIONS)
    assert await end_txn(txn_node, "tx", pid, epoch, True, version=version) == code
    assert await end_txn(txn_node, "tx", pid, epoch, False, version=version) == code


async def test_add_partitions_with_an_unknown_partition_attempts_nothing(txn_node):
    pid, epoch = await begin(txn_node, partitions=())
    got = await add_partitions(txn_node, "tx", pid, epoch, [TP0, (TOPIC, 7), ("missing", 0)])
    assert got == {TP0: ErrorCode.operation_not_attempted, (TOPIC, 7): ErrorCode.unknown_topic_or_partition,
                   ("missing", 0): ErrorCode.unknown_topic_or_partition}
    assert txn_node.txn.txns["tx"].state is TxnState.EMPTY


async def test_add_partitions_refuses_internal_topics_without_an_authorizer(txn_node):
    """Kafka: handleAddPartitionsToTxnRequest authorizes the request's topics less the internal ones,
    so an internal topic is TOPIC_AUTHORIZATION_FAILED and the rest OPERATION_NOT_ATTEMPTED."""
    pid, epoch = await begin(txn_node, partitions=())
    txn_node.logs.ensure_topic("__consumer_offsets", 1)
    got = await add_partitions(txn_node, "tx", pid, epoch, [TP0, ("__consumer_offsets", 0)])
    assert got == {TP0: ErrorCode.operation_not_attempted,
                   ("__consumer_offsets", 0): ErrorCode.topic_authorization_failed}
    assert txn_node.txn.txns["tx"].state is TxnState.EMPTY


@pytest.mark.parametrize("version", range(0, 4))
async def test_add_partitions_identity_and_state_errors(txn_node, version):
    pid, epoch = await begin(txn_node, partitions=())
    assert await add_partitions(txn_node, "", pid, epoch, [TP0], version=version) == {TP0: ErrorCode.invalid_request}
    assert await add_partitions(txn_node, "nope", pid, epoch, [TP0], version=version) == {
        TP0: ErrorCode.invalid_producer_id_mapping}
    assert await add_partitions(txn_node, "tx", pid + 1, epoch, [TP0], version=version) == {
        TP0: ErrorCode.invalid_producer_id_mapping}
    assert await add_partitions(txn_node, "tx", pid, epoch, [TP0, TP1], version=version) == {
        TP0: ErrorCode.none, TP1: ErrorCode.none}
    txn_node.txn._move(txn_node.txn.txns["tx"], TxnState.PREPARE_COMMIT, wall_ms())
    assert await add_partitions(txn_node, "tx", pid, epoch, [TP0], version=version) == {
        TP0: ErrorCode.concurrent_transactions}


@pytest.mark.parametrize("version", range(0, 5))
async def test_add_offsets_adds_the_offsets_partition(txn_node, version):
    pid, epoch = await begin(txn_node, partitions=())
    assert await add_offsets(txn_node, "tx", pid, epoch, "g", version=version) == ErrorCode.none
    assert {t for t, _ in txn_node.txn.txns["tx"].partitions} == {"__consumer_offsets"}
    assert await add_offsets(txn_node, "tx", pid + 1, epoch, "g", version=version) == ErrorCode.invalid_producer_id_mapping
    assert await add_offsets(txn_node, "", pid, epoch, "g", version=version) == ErrorCode.invalid_request


@pytest.mark.parametrize("version", range(0, 5))
async def test_end_txn_codes(txn_node, version):
    pid, epoch = await begin(txn_node, partitions=())
    assert await end_txn(txn_node, "tx", pid, epoch, True, version=version) == ErrorCode.invalid_txn_state  # Empty
    assert await end_txn(txn_node, "tx", pid, epoch, False, version=version) == ErrorCode.invalid_txn_state
    await add_partitions(txn_node, "tx", pid, epoch, [TP0])
    assert await end_txn(txn_node, "tx", pid + 1, epoch, True, version=version) == ErrorCode.invalid_producer_id_mapping
    assert await end_txn(txn_node, "", pid, epoch, True, version=version) == ErrorCode.invalid_request
    assert await end_txn(txn_node, "tx", pid, epoch, False, version=version) == ErrorCode.none
    assert await end_txn(txn_node, "tx", pid, epoch, False, version=version) == ErrorCode.none  # retry
    assert await end_txn(txn_node, "tx", pid, epoch, True, version=version) == ErrorCode.invalid_txn_state
    await add_partitions(txn_node, "tx", pid, epoch, [TP0])
    assert await end_txn(txn_node, "tx", pid, epoch, True, version=version) == ErrorCode.none
    assert await end_txn(txn_node, "tx", pid, epoch, True, version=version) == ErrorCode.none  # retry
    assert await end_txn(txn_node, "tx", pid, epoch, False, version=version) == ErrorCode.invalid_txn_state


# -- Produce: the transactional checks ------------------------------------------------------


async def test_a_non_transactional_batch_from_a_producer_with_an_open_transaction(txn_node):
    pid, epoch = await begin(txn_node)
    p = Producer(pid, epoch)
    assert (await produce(txn_node, 0, p.batch(0), transactional_id="tx")).error_code == ErrorCode.none
    r = await produce(txn_node, 0, p.batch(0, transactional=False), transactional_id="tx")
    assert r.error_code == ErrorCode.invalid_txn_state


@pytest.mark.parametrize(("version", "code"), [
    (9, ErrorCode.invalid_txn_state), (10, ErrorCode.invalid_txn_state), (11, ErrorCode.transaction_abortable)])
async def test_a_transactional_batch_to_a_partition_not_added(txn_node, version, code):
    """Kafka 3.9: TRANSACTION_ABORTABLE from verification, INVALID_TXN_STATE for Produce below v11."""
    pid, epoch = await begin(txn_node, partitions=(TP0,))
    r = await produce(txn_node, 1, Producer(pid, epoch).batch(1), transactional_id="tx", version=version)
    assert (r.error_code, r.base_offset) == (code, -1)
    assert txn_node.logs.get(*TP1).log_end_offset == 0


async def test_a_transactional_batch_after_commit_needs_a_new_add_partitions(txn_node):
    pid, epoch = await begin(txn_node)
    p = Producer(pid, epoch)
    await produce(txn_node, 0, p.batch(0), transactional_id="tx")
    await end_txn(txn_node, "tx", pid, epoch, True)
    r = await produce(txn_node, 0, p.batch(0), transactional_id="tx")
    assert r.error_code == ErrorCode.invalid_txn_state


async def test_a_transactional_batch_without_transactional_id(txn_node):
    pid, epoch = await begin(txn_node)
    r = await produce(txn_node, 0, Producer(pid, epoch).batch(0), transactional_id=None)
    assert r.error_code == ErrorCode.transactional_id_authorization_failed
    assert txn_node.logs.get(*TP0).log_end_offset == 0


async def test_fenced_epochs_get_invalid_producer_epoch(txn_node):
    pid, epoch = await begin(txn_node, partitions=(TP0, TP1))
    old = Producer(pid, epoch)
    assert (await produce(txn_node, 0, old.batch(0), transactional_id="tx")).error_code == ErrorCode.none
    await init_producer_id(txn_node, "tx")  # fences: ABORT markers with epoch + 1 in both partitions
    # In a partition that has the fencing marker (producer state check) ...
    assert (await produce(txn_node, 0, old.batch(0), transactional_id="tx")).error_code == ErrorCode.invalid_producer_epoch
    # ... and in one it never wrote to (the coordinator's verification, PRODUCER_FENCED mapped).
    assert (await produce(txn_node, 1, old.batch(1), transactional_id="tx")).error_code == ErrorCode.invalid_producer_epoch
    plain = Producer(pid, epoch)
    r = await produce(txn_node, 0, plain.batch(0, transactional=False), transactional_id=None)
    assert r.error_code == ErrorCode.invalid_producer_epoch


async def test_verification_while_the_transaction_completes_is_retriable(txn_node):
    """Kafka: CONCURRENT_TRANSACTIONS from verification becomes NOT_ENOUGH_REPLICAS for the producer."""
    pid, epoch = await begin(txn_node)
    txn_node.txn._move(txn_node.txn.txns["tx"], TxnState.PREPARE_COMMIT, wall_ms())
    r = await produce(txn_node, 0, Producer(pid, epoch).batch(0), transactional_id="tx")
    assert r.error_code == ErrorCode.not_enough_replicas


@pytest.mark.parametrize("case", ["unknown transactional id", "another producer id"])
async def test_a_transactional_batch_whose_producer_id_the_coordinator_does_not_map(txn_node, case):
    """Kafka 3.9 passes the coordinator's INVALID_PRODUCER_ID_MAPPING through to the producer."""
    pid, epoch = await begin(txn_node)
    if case == "unknown transactional id":
        r = await produce(txn_node, 0, Producer(pid, epoch).batch(0), transactional_id="unknown")
    else:
        r = await produce(txn_node, 0, Producer(pid + 50, 0).batch(0), transactional_id="tx")
    assert r.error_code == ErrorCode.invalid_producer_id_mapping


# -- DescribeTransactions / ListTransactions ------------------------------------------------


async def describe(node, *ids):
    r = await call(node, DESCRIBE_TRANSACTIONS, 0, transactional_ids=tuple(ids))
    return {s.transactional_id: s for s in r.transaction_states}


def ms(dt) -> int:
    return -1 if dt is None else round(dt.timestamp() * 1000)


async def test_describe_transactions_field_values(txn_node):
    before = wall_ms()
    pid, epoch = await begin(txn_node, "open", partitions=(TP1, TP0), timeout_ms=45_000)
    after = wall_ms()
    o = (await describe(txn_node, "open"))["open"]
    assert (o.error_code, o.transaction_state, o.producer_id, o.producer_epoch) == (0, "Ongoing", pid, epoch)
    assert o.transaction_timeout == datetime.timedelta(milliseconds=45_000)
    assert before <= ms(o.transaction_start_time) <= after
    assert [(t.topic, tuple(t.partitions)) for t in o.topics] == [(TOPIC, (0, 1))]
    await end_txn(txn_node, "open", pid, epoch, True)
    c = (await describe(txn_node, "open"))["open"]
    assert (c.transaction_state, c.topics) == ("CompleteCommit", ())
    assert ms(c.transaction_start_time) == ms(o.transaction_start_time)  # Kafka keeps txnStartTimestamp


async def describe_raw(node, *ids):
    """DescribeTransactions decoded by kafka-python's protocol classes: kio refuses to read the -1
    (no start time) that Kafka sends for an Empty transaction."""
    request = make(request_class(DESCRIBE_TRANSACTIONS, 0), transactional_ids=tuple(ids))
    raw = await dispatch(node, encode_request(RequestHeader(DESCRIBE_TRANSACTIONS, 0, 1, "txn-tests"), request))
    r = DescribeTransactionsResponse.decode(raw, version=0, header=True)
    return {s.transactional_id: s for s in r.transaction_states}


async def test_describe_transactions_without_a_start_time(txn_node):
    """Empty (no transaction yet): TransactionStartTimeMs -1; unknown id: TRANSACTIONAL_ID_NOT_FOUND;
    empty id: INVALID_REQUEST (Kafka: TransactionCoordinator.handleDescribeTransactions)."""
    pid, epoch = await begin(txn_node, "empty", partitions=(), timeout_ms=30_000)
    d = await describe_raw(txn_node, "empty", "unknown", "")
    e = d["empty"]
    assert (e.error_code, e.transaction_state, e.transaction_start_time_ms, e.topics) == (0, "Empty", -1, [])
    assert (e.transaction_timeout_ms, e.producer_id, e.producer_epoch) == (30_000, pid, epoch)
    assert d["unknown"].error_code == ErrorCode.transactional_id_not_found
    assert d[""].error_code == ErrorCode.invalid_request
    # an error entry carries the id and the error alone: Kafka leaves the rest at their zero defaults
    u = d["unknown"]
    assert (u.transaction_start_time_ms, u.producer_id, u.producer_epoch, u.transaction_state) == (0, 0, 0, "")


async def list_txns(node, *, states=(), pids=(), duration=-1, version=1, pattern=None):
    extra = {} if version < 2 else {"transactional_id_pattern": pattern}
    r = await call(node, LIST_TRANSACTIONS, version, state_filters=tuple(states), producer_id_filters=tuple(pids),
                   duration_filter=duration, **extra)
    assert r.error_code == ErrorCode.none
    return {s.transactional_id: (s.producer_id, s.transaction_state) for s in r.transaction_states}, \
        tuple(r.unknown_state_filters)


@pytest.fixture
async def five_transactions(txn_node):
    return _five_transactions(txn_node)


@pytest.fixture
def node41(nodes):
    """A node emulating Kafka 4.1 (ListTransactions v2), with the five transactions."""
    node = nodes(kafka_version="4.1")
    node.logs.create_topic(TOPIC, 2)
    return node, _five_transactions(node)


def _five_transactions(node):
    """old (Ongoing for 10 s), young (Ongoing for 0.1 s), committed, aborted, empty."""
    coord, now = node.txn, wall_ms()
    pids = {}
    for txn_id, start in [("old", now - 10_000), ("young", now - 100), ("committed", now - 100),
                          ("aborted", now - 100), ("empty", None)]:
        pid, epoch = coord.init_producer_id(txn_id, 60_000, -1, -1, now)
        pids[txn_id] = pid
        if start is not None:
            coord.add_partitions(txn_id, pid, epoch, {TP0}, start)
        if txn_id in ("committed", "aborted"):
            coord.end_txn(txn_id, pid, epoch, txn_id == "committed", now)
    return pids


async def test_list_transactions_filters(txn_node, five_transactions):
    pids = five_transactions
    listed, unknown = await list_txns(txn_node)
    assert listed == {"old": (pids["old"], "Ongoing"), "young": (pids["young"], "Ongoing"),
                      "committed": (pids["committed"], "CompleteCommit"),
                      "aborted": (pids["aborted"], "CompleteAbort"), "empty": (pids["empty"], "Empty")}
    assert unknown == ()
    assert set((await list_txns(txn_node, states=["Ongoing"]))[0]) == {"old", "young"}
    assert await list_txns(txn_node, states=["Ongoing", "Bogus"]) == (
        {"old": (pids["old"], "Ongoing"), "young": (pids["young"], "Ongoing")}, ("Bogus",))
    assert await list_txns(txn_node, states=["Bogus"]) == ({}, ("Bogus",))
    assert set((await list_txns(txn_node, states=["CompleteCommit", "Empty"]))[0]) == {"committed", "empty"}
    assert set((await list_txns(txn_node, pids=[pids["aborted"], pids["young"], 12345]))[0]) == {"aborted", "young"}
    assert set((await list_txns(txn_node, states=["Ongoing"], pids=[pids["aborted"]]))[0]) == set()


async def test_list_transactions_duration_filter(txn_node, five_transactions):
    """v1: only transactions that started more than DurationFilter ms ago (Kafka: now - txnStartTimestamp >
    filter); v0 has no such filter."""
    listed, _ = await list_txns(txn_node, states=["Ongoing", "CompleteCommit", "CompleteAbort"], duration=5_000)
    assert set(listed) == {"old"}
    listed, _ = await list_txns(txn_node, states=["Ongoing", "CompleteCommit", "CompleteAbort"], duration=50)
    assert set(listed) == {"old", "young", "committed", "aborted"}
    assert len((await list_txns(txn_node, version=0))[0]) == 5


async def test_list_transactions_duration_filter_keeps_empty_ones_as_kafka_does(txn_node, five_transactions):
    """Kafka keeps a transaction unless now - txnStartTimestamp <= filter; an Empty one has -1."""
    listed, _ = await list_txns(txn_node, duration=5_000)
    assert set(listed) == {"old", "empty"}


async def test_list_transactions_pattern_filter(node41):
    """v2 (KIP-1152): the whole transactional id matches the pattern (RE2/J's matches()), ANDed with
    the other filters; a null or empty pattern filters nothing."""
    assert set((await list_txns(node41[0], version=2, pattern="o.*"))[0]) == {"old"}
    assert set((await list_txns(node41[0], version=2, pattern="o"))[0]) == set()  # a whole match, not a search
    assert set((await list_txns(node41[0], version=2, pattern="(young|empty|old)"))[0]) == {"young", "empty", "old"}
    assert set((await list_txns(node41[0], version=2, pattern="(young|empty|old)", states=["Ongoing"]))[0]) == {
        "young", "old"}
    for nothing in (None, ""):
        assert len((await list_txns(node41[0], version=2, pattern=nothing))[0]) == 5


async def test_list_transactions_invalid_pattern(node41):
    r = await call(node41[0], LIST_TRANSACTIONS, 2, state_filters=(), producer_id_filters=(), duration_filter=-1,
                   transactional_id_pattern="(unclosed")
    assert (r.error_code, r.transaction_states) == (ErrorCode.invalid_regular_expression, ())


# -- DescribeProducers ----------------------------------------------------------------------


async def describe_producers(node, topic=TOPIC, partitions=(0,)):
    m = request_module(DESCRIBE_PRODUCERS, 0)
    r = await call(node, DESCRIBE_PRODUCERS, 0, topics=(m.TopicRequest(name=topic, partition_indexes=partitions),))
    (t,) = r.topics
    return {p.partition_index: p for p in t.partitions}


async def test_describe_producers_field_values(txn_node):
    idem = Producer(900, 3)
    batch = idem.batch(0, b"a", b"b", b"c", transactional=False)
    assert (await produce(txn_node, 0, batch)).error_code == ErrorCode.none
    pid, epoch = await begin(txn_node)
    txn = Producer(pid, epoch)
    first = (await produce(txn_node, 0, txn.batch(0, b"x", b"y"), transactional_id="tx")).base_offset
    (p,) = (await describe_producers(txn_node)).values()
    states = {s.producer_id: s for s in p.active_producers}
    assert p.error_code == ErrorCode.none
    s = states[900]
    assert (s.producer_epoch, s.last_sequence, s.coordinator_epoch, s.current_txn_start_offset) == (3, 2, -1, -1)
    t = states[pid]
    assert (t.producer_epoch, t.last_sequence, t.coordinator_epoch, t.current_txn_start_offset) == (epoch, 1, -1, first)
    assert abs(t.last_timestamp - wall_ms()) < 60_000
    await end_txn(txn_node, "tx", pid, epoch, True)
    t = {s.producer_id: s for s in (await describe_producers(txn_node))[0].active_producers}[pid]
    assert (t.coordinator_epoch, t.current_txn_start_offset) == (0, -1)


async def test_describe_producers_unknown_partition(txn_node):
    parts = await describe_producers(txn_node, partitions=(0, 9))
    assert (parts[0].error_code, parts[9].error_code) == (ErrorCode.none, ErrorCode.unknown_topic_or_partition)
    assert (await describe_producers(txn_node, topic="missing"))[0].error_code == ErrorCode.unknown_topic_or_partition


async def test_describe_producers_gives_a_message_only_for_topic_errors(txn_node):
    """Kafka's handleDescribeProducersRequest: a topic-level error carries a message (ApiError's),
    a partition's own error from ReplicaManager.activeProducerState none."""
    parts = await describe_producers(txn_node, partitions=(0, 9))
    assert (parts[9].error_code, parts[9].error_message) == (ErrorCode.unknown_topic_or_partition, None)
    assert parts[0].error_message is None
    (p,) = (await describe_producers(txn_node, topic="missing")).values()
    assert (p.error_code, p.error_message) == (
        ErrorCode.unknown_topic_or_partition, "This server does not host this topic-partition.")
    (p,) = (await describe_producers(txn_node, topic="no good")).values()
    assert (p.error_code, p.error_message) == (ErrorCode.invalid_topic_exception, "Topic name is invalid: 'no good' "
                                               "contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'")


# -- WriteTxnMarkers ------------------------------------------------------------------------


async def test_write_txn_markers_aborts_an_open_transaction(txn_node):
    pid, epoch = await begin(txn_node)
    p = Producer(pid, epoch)
    await produce(txn_node, 0, p.batch(0, b"a", b"b"), transactional_id="tx")
    plog = txn_node.logs.get(*TP0)
    assert plog.last_stable_offset == 0
    assert await write_marker(txn_node, pid, epoch, False, [TP0]) == {TP0: ErrorCode.none}
    assert plog.last_stable_offset == plog.high_watermark == 3
    assert [(a.producer_id, a.first_offset, a.last_offset) for a in plog.aborted] == [(pid, 0, 2)]


async def test_a_partition_named_many_times_in_a_marker_gets_one_marker(txn_node):
    """Kafka keys a marker's partitions by TopicPartition; the stateful fuzzer's WriteTxnMarkers
    naming one partition 2,601 times wrote 2,601 control batches and held the loop for seconds."""
    pid, epoch = await begin(txn_node)
    await produce(txn_node, 0, Producer(pid, epoch).batch(0, b"a"), transactional_id="tx")
    plog = txn_node.logs.get(*TP0)
    assert await write_marker(txn_node, pid, epoch, False, [TP0] * 50) == {TP0: ErrorCode.none}
    assert plog.log_end_offset == 2  # the record and one marker


async def test_write_txn_markers_errors(txn_node):
    pid, epoch = await begin(txn_node, partitions=(TP0, TP1))
    p = Producer(pid, epoch)
    await produce(txn_node, 0, p.batch(0), transactional_id="tx")
    await produce(txn_node, 1, p.batch(1), transactional_id="tx")
    assert await write_marker(txn_node, pid, epoch - 1, False, [TP0, (TOPIC, 5), ("missing", 0)]) == {
        TP0: ErrorCode.invalid_producer_epoch, (TOPIC, 5): ErrorCode.unknown_topic_or_partition,
        ("missing", 0): ErrorCode.unknown_topic_or_partition}
    assert await write_marker(txn_node, pid, epoch, True, [TP0], coordinator_epoch=5) == {TP0: ErrorCode.none}
    assert await write_marker(txn_node, pid, epoch, True, [TP0], coordinator_epoch=3) == {
        TP0: ErrorCode.transaction_coordinator_fenced}
    assert await write_marker(txn_node, pid, epoch, False, [TP1], coordinator_epoch=3) == {TP1: ErrorCode.none}
