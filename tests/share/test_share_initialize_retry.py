"""``group.share.initialize.retry.interval.ms`` (Kafka 4.1, 30 s, never below offsets.commit.timeout.ms):
a share partition left initializing -- here by a crash at the ``share.initializing`` point, between
the key-15 record that says so and the state write -- is initialized again only by a heartbeat once
the interval has passed since the record was replayed (Kafka: GroupMetadataManager.replay stamps
the initializing topics, subscribedTopicsChangeMap skips the younger ones). ``advance_clock`` brings
the retry forward. A state write answered with an error takes the partitions out of initializing
at once (Kafka: uninitializeShareGroupState), so the next heartbeat retries without waiting."""

from __future__ import annotations

import uuid

import pytest

from node_support import crash
from share.test_share_admin_apis import G, T, describe, heartbeat, offsets, open_node
from share.test_share_state_metadata import _records
from shim.control import CRASH_EXIT_CODE
from shim.control.ops import call as control
from shim.coordinators.share import members as sm
from shim.coordinators.share import share_settings
from shim.coordinators.share import state_metadata as spm
from shim.errors import ErrorCode as E
from shim.errors import KafkaError


class Stopped(Exception):
    pass


def _open(path, **extra):
    n = open_node(path, extra=extra) if extra else open_node(path)
    n.finalize_features({"share.version": 1})
    return n


def _states(n):
    return [r.value for r in _records(n, sm.STATE_PARTITION_METADATA)]


async def _crash_while_initializing(path, **extra):
    """A member joins; the broker stops between the initializing record and the state write."""
    n = _open(path, **extra)
    codes = []

    def stop(code):
        codes.append(code)
        raise Stopped

    n.control.exit = stop
    await control(n.control, "crash", {"point": "share.initializing"})
    member = str(uuid.uuid4())
    with pytest.raises(Stopped):
        await heartbeat(n, member, 0)
    assert codes == [CRASH_EXIT_CODE]
    tid = n.logs.topics[T].topic_id
    assert _states(n) == [spm.PartitionMetadata({tid: spm.Topic(T, frozenset({0, 1}))}, {}, {})]
    crash(n)
    return member, tid


async def test_a_partition_left_initializing_waits_out_the_retry_interval(tmp_path):
    member, tid = await _crash_while_initializing(tmp_path / "data")
    n = _open(tmp_path / "data")
    try:
        both = spm.Topic(T, frozenset({0, 1}))
        for _ in range(3):  # heartbeats within the interval neither initialize nor assign
            r = await heartbeat(n, member, 0)
            assert (r.error_code, r.assignment.topic_partitions) == (E.none, ())
        assert n.share.initialized.get(G) == spm.PartitionMetadata({tid: both}, {}, {})
        assert len(_states(n)) == 1 and offsets(await describe(n)) == {}
        early = await control(n.control, "advance_clock", {"ms": 20_000, "clock": "groups"})
        assert early["share_initializations_due"] == []
        await heartbeat(n, member, 1)
        assert len(_states(n)) == 1
        due = await control(n.control, "advance_clock", {"ms": 30_000, "clock": "groups"})
        assert due["share_initializations_due"] == [G]
        await heartbeat(n, member, 1)  # the retry: InitializeShareGroupState, then initialized
        assert _states(n)[1:] == [spm.PartitionMetadata({tid: both}, {}, {}), spm.PartitionMetadata({}, {tid: both}, {})]
        assert offsets(await describe(n)) == {(T, 0): (-1, E.none), (T, 1): (-1, E.none)}
        r = await heartbeat(n, member, 1)  # and the heartbeat after assigns them
        assert r.member_epoch == 2
        assert [(t.topic_id, sorted(t.partitions)) for t in r.assignment.topic_partitions] == [(tid, [0, 1])]
    finally:
        n.close()


async def test_the_interval_is_the_configured_one_and_never_below_the_commit_timeout(tmp_path):
    assert share_settings({}).retry_interval_ms == 30_000
    assert share_settings({"group.share.initialize.retry.interval.ms": "1000"}).retry_interval_ms == 5_000
    assert share_settings({"group.share.initialize.retry.interval.ms": "1000",
                           "offsets.commit.timeout.ms": "2000"}).retry_interval_ms == 2_000
    longer = {"group.share.initialize.retry.interval.ms": "90000"}
    member, _ = await _crash_while_initializing(tmp_path / "data", **longer)
    n = _open(tmp_path / "data", **longer)
    try:
        assert (await control(n.control, "advance_clock", {"ms": 60_000}))["share_initializations_due"] == []
        await heartbeat(n, member, 0)
        assert len(_states(n)) == 1
        assert (await control(n.control, "advance_clock", {"ms": 90_000}))["share_initializations_due"] == [G]
        assert (await heartbeat(n, member, 0)).error_code == E.none  # its session expired too: it joins again
        assert len(_states(n)) == 3
    finally:
        n.close()


def test_an_interval_below_one_is_refused_at_start_up(tmp_path):
    from shim.config import BrokerConfig

    with pytest.raises(ValueError, match="group.share.initialize.retry.interval.ms: Value must be at least 1"):
        BrokerConfig(data_dir=tmp_path, extra={"group.share.initialize.retry.interval.ms": "0"})


async def test_a_failed_state_write_is_undone_and_retried_by_the_next_heartbeat(tmp_path, monkeypatch):
    n = _open(tmp_path / "data")
    try:
        real = n.share.store.initialize_keys
        failures = []

        def failing(keys):
            failures.extend(sorted({k[0] for k in keys}))
            raise KafkaError(E.kafka_storage_error, "the share state could not be written")

        monkeypatch.setattr(n.share.store, "initialize_keys", failing)
        member = str(uuid.uuid4())
        r = await heartbeat(n, member, 0)
        assert (r.error_code, r.member_epoch) == (E.none, 1)  # the answer does not wait for the state
        tid = n.logs.topics[T].topic_id
        both = spm.Topic(T, frozenset({0, 1}))
        assert failures == [G]
        assert _states(n) == [spm.PartitionMetadata({tid: both}, {}, {}), spm.EMPTY]  # initializing, undone
        monkeypatch.setattr(n.share.store, "initialize_keys", real)
        await heartbeat(n, member, 1)  # no interval to wait out
        assert _states(n)[2:] == [spm.PartitionMetadata({tid: both}, {}, {}), spm.PartitionMetadata({}, {tid: both}, {})]
        assert (await heartbeat(n, member, 1)).member_epoch == 2
    finally:
        n.close()


@pytest.mark.parametrize("release", ["4.0", "4.1"])
async def test_describe_configs_lists_the_internal_config_only_where_set(tmp_path, release):
    """Kafka 4.1 defines it internal (ConfigHelper.allConfigs: the originals and the non-internal
    values), so a broker describes it only when its properties set it; 4.0 does not know the name."""
    from configs.test_config_apis import BROKER, SET, by_name, describe, incremental
    from shim.config import BrokerConfig
    from shim.configs.describe import ConfigSource
    from shim.node import Node

    name = "group.share.initialize.retry.interval.ms"
    plain = Node(BrokerConfig(data_dir=tmp_path / "a", kafka_version=release))
    try:
        assert name not in by_name(await describe(plain, BROKER, "0"))
    finally:
        plain.close()
    node = Node(BrokerConfig(data_dir=tmp_path / "b", kafka_version=release, extra={name: "45000"}))
    try:
        entry = by_name(await describe(node, BROKER, "0", synonyms=True))[name]
        (refused,) = await incremental(node, [(BROKER, "0", [(name, SET, "60000")])])
    finally:
        node.close()
    if release < "4.1":  # an unknown property: kept as given, its type unknown, so hidden
        assert (entry.value, entry.is_sensitive) == (None, True)
        return
    assert (entry.value, entry.config_source, entry.read_only, entry.is_sensitive, entry.config_type) == (
        "45000", ConfigSource.STATIC_BROKER_CONFIG, True, False, 3)
    assert [(s.value, s.source) for s in entry.synonyms] == [
        ("45000", ConfigSource.STATIC_BROKER_CONFIG), ("30000", ConfigSource.DEFAULT_CONFIG)]
    assert (refused.error_code, refused.error_message) == (
        E.invalid_request, f"Cannot update these configs dynamically: Set({name})")
