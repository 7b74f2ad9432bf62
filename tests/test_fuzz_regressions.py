"""What the fuzzer (compat/fuzz) found, each pinned by the smallest request that showed it.

A client Produce into __consumer_offsets put a record with a null key there, and the next start
of the broker failed replaying it: one request bricked the data directory. Kafka refuses client
appends to internal topics; and whatever unreadable record an internal topic holds, its loader
now skips it with a warning, as Kafka's coordinators skip records they do not know. And a
response that cannot be encoded closes the connection with one warning, not a traceback.
"""

from __future__ import annotations

import uuid

import pytest

from kafka_codecs import encode_batch, parse_header
from shim.apis.dispatch import dispatch
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.messages import (RequestHeader, decode_response, encode_request, make, request_class,
                                    request_module)
from shim.storage.producer_state import Origin

from test_produce_handler import produce_one

INTERNAL = ("__consumer_offsets", "__transaction_state")


@pytest.mark.parametrize("topic", INTERNAL)
async def test_produce_to_an_internal_topic_is_invalid_topic(node, topic):
    response = await produce_one(node, encode_batch([(None, b"garbage", [], 1)]), topic=topic)
    assert response.error_code == ErrorCode.invalid_topic_exception
    assert (topic, 0) not in node.logs.logs or node.logs.get(topic, 0).log_end_offset == 0


UNREADABLE = [
    (None, b"value"),  # a null key
    (b"\x00", b"value"),  # a key cut inside its version
    (b"\x00\x01\x7f\xff" + b"g", b"\x00\x03"),  # a string longer than its record
    (b"\x00\x01\x00\x01\xff\x00\x01t\x00\x00\x00\x00", b"\x00\x03"),  # not UTF-8
    (b"\x00\x02\x00\x01g", b"\x00\x03\xff\xff\xff\xff"),  # a group value cut short
]


@pytest.mark.parametrize("topic", INTERNAL)
@pytest.mark.parametrize("key,value", UNREADABLE)
def test_a_start_skips_unreadable_internal_records(tmp_path, topic, key, value, caplog):
    config = BrokerConfig(data_dir=tmp_path / "data")
    node = Node(config)
    node.logs.ensure_topic(topic, 1)
    batch = encode_batch([(key, value, [], 1)])
    node.logs.get(topic, 0).append(batch, parse_header(batch), 1, origin=Origin.COORDINATOR)
    node.close()
    restarted = Node(config)  # raised TypeError / struct.error before
    try:
        assert "skipping a record of " + topic in caplog.text
        assert restarted.logs.get(topic, 0).log_end_offset == 1
    finally:
        restarted.close()


async def test_a_response_that_cannot_be_encoded_closes_the_connection_as_kafka_does(node):
    """JoinGroup v5 with a 32767-byte group instance id: the member id (the instance id, '-' and a
    UUID) no longer fits a string field, so the response cannot be encoded. That was an internal
    error with a traceback; it is now a FrameError naming the response (Kafka's network thread
    closes the connection too)."""
    m = request_module(11, 5)
    request = make(m.JoinGroupRequest, group_id="g", session_timeout=10_000, rebalance_timeout=30_000, member_id="",
                   group_instance_id="i" * 32767, protocol_type="consumer",
                   protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),))  # fmt: skip
    with pytest.raises(FrameError, match="cannot encode the JoinGroup v5 response"):
        await dispatch(node, encode_request(RequestHeader(11, 5, 1, "c"), request))


async def create_topics(node, topics: dict[str, int], validate_only=False):
    m = request_module(19, 7)
    request = make(m.CreateTopicsRequest, timeout_ms=10_000, validate_only=validate_only, topics=tuple(
        m.CreatableTopic(name=n, num_partitions=p, replication_factor=-1, assignments=(), configs=())
        for n, p in topics.items()))  # fmt: skip
    return decode_response(await dispatch(node, encode_request(RequestHeader(19, 7, 1, "c"), request)), 19, 7)[1]


@pytest.mark.parametrize("topics", [{"huge": 2_147_483_647}, {"a": 6_000, "b": 4_001}, {"a": 10_000, "d": -1}])
async def test_create_topics_over_ten_thousand_partitions_is_a_policy_violation(node, topics):
    """CreateTopics with num_partitions 2^31-1 kept the event loop creating partition directories
    (the canary stalled, the disk filled). Kafka's controller refuses any request adding up to
    more than 10,000 partitions (a topic with -1 counts the broker default) with POLICY_VIOLATION."""
    response = await create_topics(node, topics)
    assert [(t.name, t.error_code) for t in response.topics] == [(n, ErrorCode.policy_violation) for n in topics]
    assert not set(topics) & set(node.logs.topics)


async def test_create_topics_of_ten_thousand_partitions_is_allowed(node):
    response = await create_topics(node, {"a": 9_999, "b": 1}, validate_only=True)
    assert [t.error_code for t in response.topics] == [ErrorCode.none, ErrorCode.none]


@pytest.mark.parametrize("topic", INTERNAL)
async def test_delete_records_of_an_internal_topic_is_invalid_topic(node, topic):
    """A DeleteRecords naming __consumer_offsets with offset -1 dropped every committed offset
    (and __transaction_state every transaction) at the next start; Kafka refuses it."""
    node.logs.ensure_topic(topic, 1)
    batch = encode_batch([(b"\x00\x01\x00\x01g\x00\x01t\x00\x00\x00\x00", None, [], 1)])
    node.logs.get(topic, 0).append(batch, parse_header(batch), 1, origin=Origin.COORDINATOR)
    m = request_module(21, 2)
    request = make(m.DeleteRecordsRequest, timeout=1000, topics=(m.DeleteRecordsTopic(
        name=topic, partitions=(m.DeleteRecordsPartition(partition_index=0, offset=-1),)),))  # fmt: skip
    raw = await dispatch(node, encode_request(RequestHeader(21, 2, 1, "c"), request))
    (part,) = decode_response(raw, 21, 2)[1].topics[0].partitions
    assert part.error_code == ErrorCode.invalid_topic_exception
    assert node.logs.get(topic, 0).log_start_offset == 0


async def _call(node, key, version, **fields):
    request = make(request_class(key, version), **fields)
    return decode_response(await dispatch(node, encode_request(RequestHeader(key, version, 1, "c"), request)),
                           key, version)[1]


async def test_deleting_a_group_whose_offsets_partition_a_client_left_out_is_coordinator_not_available(node):
    """A CreateTopics of __consumer_offsets with one partition, then a JoinGroup (the group is kept
    in memory, empty, after MEMBER_ID_REQUIRED), then DeleteGroups and OffsetDelete: writing the
    tombstones to the missing partition raised out of the handler and closed the connection (the
    stateful fuzzer found it). Kafka's coordinator maps a missing offsets partition to
    COORDINATOR_NOT_AVAILABLE; the group stays as it was."""
    response = await create_topics(node, {"__consumer_offsets": 1})
    assert response.topics[0].error_code == ErrorCode.none
    group = next(g for g in (f"g{i}" for i in range(100)) if node.groups.store.partition_for(g) != 0)
    m = request_module(11, 5)
    joined = await _call(node, 11, 5, group_id=group, session_timeout=10_000, rebalance_timeout=30_000, member_id="",
                         group_instance_id=None, protocol_type="consumer",
                         protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),))  # fmt: skip
    assert joined.error_code == ErrorCode.member_id_required
    deleted = await _call(node, 42, 2, groups_names=(group,))
    assert [r.error_code for r in deleted.results] == [ErrorCode.coordinator_not_available]
    m = request_module(47, 0)
    offsets = await _call(node, 47, 0, group_id=group, topics=(m.OffsetDeleteRequestTopic(
        name="t", partitions=(m.OffsetDeleteRequestPartition(partition_index=0),)),))  # fmt: skip
    assert offsets.error_code == ErrorCode.coordinator_not_available
    assert group in node.groups.groups


# -- compressed batches that decompress to far more than they are -------------------------------

from kafka_codecs import Compression  # noqa: E402
from test_produce_handler import produce  # noqa: E402
from zip_bombs import zero_value_bomb  # noqa: E402


async def test_a_zstd_batch_of_a_quarter_gigabyte_in_eight_kilobytes_is_invalid_record(node):
    """One Produce of an 8 KiB zstd batch whose single record holds 256 MiB of zeros: the broker
    decompressed it whole on the event loop (a megabyte of such frames is 32 GiB: the process was
    killed for memory, and a few megabytes of gzip held the loop for seconds). Kafka streams the
    batch and bounds a record's body (max.decompressed.message.bytes, INVALID_RECORD); here the
    decompressed records of a request may take at most 32 times its size, 64 MiB at least, and the
    decompression stops there."""
    node.logs.create_topic("t", 1)
    bomb = zero_value_bomb(256 << 20)
    assert len(bomb) < 10_000
    response = (await produce(node, {0: bomb}, version=9))[0]
    assert response.error_code == ErrorCode.invalid_record
    assert node.logs.get("t", 0).log_end_offset == 0


async def test_the_batches_of_one_produce_share_its_decompression_allowance(node):
    """Three partitions of 24 MiB each: the first two fit the request's 64 MiB, the third is refused
    (a thousand partitions of small bombs made one request decompress without end)."""
    node.logs.create_topic("t", 3)
    response = await produce(node, {p: zero_value_bomb(24 << 20) for p in range(3)}, version=9)
    assert [response[p].error_code for p in range(3)] == [ErrorCode.none, ErrorCode.none, ErrorCode.invalid_record]
    assert [node.logs.get("t", p).log_end_offset for p in range(3)] == [1, 1, 0]


async def test_a_legacy_message_set_decompressing_past_eight_megabytes_is_invalid_record(node):
    """Produce v2 with a magic 1 gzip message wrapping 9 MiB of messages: a message set is read into
    a Python object per message before it becomes a v2 batch, so a wrapper of many tiny messages
    grew to several times what it decompressed to; the decompression now stops at 8 MiB."""
    from kafka_codecs import compress
    from kafka_codecs.legacy import LegacyRecord, _entry, _message, write_message_set

    node.logs.create_topic("t", 1)
    inner = write_message_set([LegacyRecord(i, 1, 1, False, None, bytes(4096), 0) for i in range(9 * 256)], 1)
    wrapper = _entry(0, _message(1, Compression.GZIP, 1, False, None, compress(Compression.GZIP, inner)))
    assert len(inner) > 9 << 20 and len(wrapper) < 100_000

    async def produce_v2(records):
        m = request_module(0, 2)
        response = await _call(node, 0, 2, acks=-1, timeout=5000, topic_data=(m.TopicProduceData(
            name="t", partition_data=(m.PartitionProduceData(index=0, records=records),)),))  # fmt: skip
        return response.responses[0].partition_responses[0].error_code

    assert await produce_v2(wrapper) == ErrorCode.invalid_record
    inner = write_message_set([LegacyRecord(i, 1, 1, False, None, bytes(4096), 0) for i in range(255)], 1)
    small = _entry(0, _message(1, Compression.GZIP, 1, False, None, compress(Compression.GZIP, inner)))
    assert await produce_v2(small) == ErrorCode.none
    assert node.logs.get("t", 0).log_end_offset == 255


# -- one Metadata request naming thousands of unknown topics -------------------------------------


async def _metadata_naming(node, count: int):
    import uuid

    m = request_module(3, 12)
    topics = tuple(m.MetadataRequestTopic(topic_id=uuid.UUID(int=0), name=f"auto-{i}") for i in range(count))
    return await _call(node, 3, 12, topics=topics, allow_auto_topic_creation=True,
                       include_topic_authorized_operations=False)  # fmt: skip


async def test_a_metadata_request_auto_creating_past_ten_thousand_partitions_creates_none(node):
    """A 230 KB Metadata v12 naming 10,001 unknown topics: each was created in turn on the event loop
    (8.5 s of CPU for 2,000; a megabyte of names, minutes, and as many directories). Kafka's
    AutoTopicCreationManager sends them to the controller in one CreateTopics, which it refuses past
    10,000 partitions, and answers LEADER_NOT_AVAILABLE for each."""
    response = await _metadata_naming(node, 10_001)
    assert {t.error_code for t in response.topics} == {ErrorCode.leader_not_available}
    assert not any(name.startswith("auto-") for name in node.logs.topics)


async def test_the_topics_one_metadata_request_creates_are_written_down_once(node, monkeypatch):
    from shim.storage import fs

    writes = []
    real = fs.atomic_write
    monkeypatch.setattr(fs, "atomic_write", lambda path, data, *a, **kw: (writes.append(path.name),
                                                                          real(path, data, *a, **kw))[1])  # fmt: skip
    response = await _metadata_naming(node, 50)
    assert {t.error_code for t in response.topics} == {ErrorCode.none}
    assert writes.count("topics.json") == 1
    node.close()
    restarted = Node(node.config)  # what was written down is every topic the answer named
    try:
        assert {f"auto-{i}" for i in range(50)} <= set(restarted.logs.topics)
    finally:
        restarted.close()


async def _describe_producers(node, indexes):
    return await _call(node, 61, 0, topics=(request_module(61, 0).TopicRequest(name="dp", partition_indexes=indexes),))


async def test_a_partition_named_again_and_again_in_describe_producers_is_not_answered_past_a_bound(node):
    """DescribeProducers answers each named partition, a repeated one too (Kafka's handler does).
    300 producers on a partition named 40,000 times (160 KB) took 65 CPU s and 1.6 GiB to answer, a
    megabyte of request would have taken all memory; the answer is now built once per partition and
    one past a million producer states (k61's MAX_LISTED_PRODUCERS) closes the connection."""
    import time

    from test_produce_handler import batch

    node.logs.create_topic("dp", 1)
    for pid in range(1000, 1030):
        assert (await produce_one(node, batch(0, 1, pid=pid), topic="dp")).error_code == ErrorCode.none
    twice = await _describe_producers(node, (0, 0))
    assert [len(p.active_producers) for p in twice.topics[0].partitions] == [30, 30]
    assert twice.topics[0].partitions[0] == twice.topics[0].partitions[1]
    started = time.process_time()
    with pytest.raises(FrameError, match="cannot encode the DescribeProducers response"):
        await _describe_producers(node, (0,) * 40_000)  # 1.2 million producer states
    assert time.process_time() - started < 3


async def _stable_classic_group(node, metadata: bytes):
    """One member of group ``g``, Stable, its protocol carrying ``metadata``."""
    m = request_module(11, 3)
    joined = await _call(node, 11, 3, group_id="g", session_timeout=30_000, rebalance_timeout=30_000, member_id="",
                         protocol_type="consumer", protocols=(m.JoinGroupRequestProtocol(name="range", metadata=metadata),))
    assert joined.error_code == ErrorCode.none
    s = request_module(14, 3)
    synced = await _call(node, 14, 3, group_id="g", generation_id=joined.generation_id, member_id=joined.member_id,
                         group_instance_id=None, assignments=(s.SyncGroupRequestAssignment(
                             member_id=joined.member_id, assignment=b"a"),))
    assert synced.error_code == ErrorCode.none


async def test_a_group_named_again_and_again_in_describe_groups_is_not_answered_past_a_bound(node):
    """DescribeGroups answers every named group, a repeated one too (Kafka does). A Stable group
    whose member's metadata is 64 KiB, named 1,100 times (a 3 KB request), made a 70 MB answer, and a
    megabyte of request half a million entries (32 GB); the entry is now built once and an answer
    past 64 MiB of entries (shim.apis._repeats) closes the connection."""
    await _stable_classic_group(node, b"m" * 65536)
    twice = await _call(node, 15, 5, groups=("g", "g"), include_authorized_operations=False)
    assert [len(g.members[0].member_metadata) for g in twice.groups] == [65536, 65536]
    with pytest.raises(FrameError, match="cannot encode the DescribeGroups response"):
        await _call(node, 15, 5, groups=("g",) * 1100, include_authorized_operations=False)


async def test_a_consumer_group_named_again_and_again_is_not_answered_past_a_bound(tmp_path):
    """ConsumerGroupDescribe (and ShareGroupDescribe, the same shim.apis._repeats) likewise: a member
    subscribed to 60,000 names is a 480 KB entry, and 150 of them pass the bound."""
    from shim.coordinators.group.consumer_coordinator import HeartbeatRequest

    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1"))
    try:
        names = tuple(f"n{i:06d}" for i in range(60_000))
        joined = node.groups.consumer.heartbeat(HeartbeatRequest("cg", "m", 0, rebalance_timeout_ms=30_000,
                                                                 subscribed_topic_names=names, owned={}), 1)
        assert joined.error == ErrorCode.none
        twice = await _call(node, 69, 0, group_ids=("cg", "cg"), include_authorized_operations=False)
        assert [len(g.members[0].subscribed_topic_names) for g in twice.groups] == [60_000, 60_000]
        with pytest.raises(FrameError, match="cannot encode the ConsumerGroupDescribe response"):
            await _call(node, 69, 0, group_ids=("cg",) * 150, include_authorized_operations=False)
    finally:
        node.close()


async def test_a_topic_named_again_in_metadata_is_answered_once_as_kafka_does(node):
    """KafkaApis.handleTopicMetadataRequest takes the named topics (and the asked topic ids) as a
    set. kafka-shim answered every repeat: 256 KiB of Metadata naming one topic was 7 MB of answer,
    and the 100 MiB a request may hold would have been gigabytes."""
    node.logs.create_topic("md", 3)
    m = request_module(3, 12)
    topic_id = node.logs.topics["md"].topic_id
    by_name = await _call(node, 3, 12, topics=(m.MetadataRequestTopic(topic_id=None, name="md"),) * 3 + (
        m.MetadataRequestTopic(topic_id=None, name="other"),), allow_auto_topic_creation=False,
        include_topic_authorized_operations=False)  # fmt: skip
    assert [t.name for t in by_name.topics] == ["md", "other"]
    unknown = uuid.uuid4()
    by_id = await _call(node, 3, 12, topics=tuple(m.MetadataRequestTopic(topic_id=i, name=None)
                                                  for i in (topic_id, unknown, topic_id, unknown)),
                        allow_auto_topic_creation=False, include_topic_authorized_operations=False)
    assert [(t.topic_id, t.error_code) for t in by_id.topics] == [(topic_id, ErrorCode.none),
                                                                  (unknown, ErrorCode.unknown_topic_id)]


async def test_a_delete_topics_naming_300000_unknown_topics_does_not_hold_the_loop(node):
    """Each unknown name is refused without awaiting anything, so a 3 MB DeleteTopics (a request
    may hold 100 MiB) was answered in one turn of the event loop: 0.4 s of CPU a megabyte. Paced."""
    import datetime

    from loop_stall import stall_during

    names = tuple(f"n{i}" for i in range(300_000))
    frame = encode_request(RequestHeader(20, 5, 1, "c"), make(request_class(20, 5), topic_names=names,
                                                              timeout=datetime.timedelta(seconds=1)))
    raw, stall = await stall_during(dispatch(node, frame))  # the broker's part only
    r = decode_response(raw, 20, 5)[1]
    assert {t.error_code for t in r.responses} == {ErrorCode.unknown_topic_or_partition}
    assert len(r.responses) == 300_000
    assert stall.cpu < 0.25, stall


async def test_a_partition_named_in_many_topic_entries_of_list_offsets_is_a_duplicate(node):
    """Kafka's ListOffsetsRequest.duplicatePartitions counts a partition across the whole request,
    and every mention of a duplicate is INVALID_REQUEST. Counted per topic entry, 30,000 entries
    naming t-0 by timestamp planned 30,000 searches, each holding a duplicated descriptor: past the
    process's limit that was EMFILE out of the handler, and no file could be opened meanwhile."""
    node.logs.create_topic("lo", 2)
    m = request_module(2, 7)

    def entry(p):
        return m.ListOffsetsTopic(name="lo", partitions=(m.ListOffsetsPartition(
            partition_index=p, current_leader_epoch=-1, timestamp=0),))

    r = await _call(node, 2, 7, replica_id=-1, isolation_level=0, topics=(entry(0), entry(1), entry(0)))
    assert [(t.partitions[0].partition_index, t.partitions[0].error_code) for t in r.topics] == [
        (0, ErrorCode.invalid_request), (1, ErrorCode.none), (0, ErrorCode.invalid_request)]
    many = await _call(node, 2, 7, replica_id=-1, isolation_level=0, topics=(entry(0),) * 30_000)
    assert {t.partitions[0].error_code for t in many.topics} == {ErrorCode.invalid_request}


async def test_describing_a_group_whose_member_id_cannot_be_encoded_closes_the_connection(node):
    """A member joined with a 32767-byte instance id has a member id no string field holds. Measuring
    the DescribeGroups entry of its group (shim.apis._repeats) raised kio's OutOfBoundValue out of
    the handler, an internal error; it closes the connection as the encoding of any answer that
    cannot be encoded does (found by the mutation fuzzer, seed 6060)."""
    m = request_module(11, 5)
    request = make(m.JoinGroupRequest, group_id="g", session_timeout=10_000, rebalance_timeout=30_000, member_id="",
                   group_instance_id="i" * 32767, protocol_type="consumer",
                   protocols=(m.JoinGroupRequestProtocol(name="range", metadata=b""),))  # fmt: skip
    with pytest.raises(FrameError):
        await dispatch(node, encode_request(RequestHeader(11, 5, 1, "c"), request))
    with pytest.raises(FrameError, match="cannot encode the DescribeGroups response"):
        await _call(node, 15, 3, groups=("g",), include_authorized_operations=False)


@pytest.mark.parametrize("key, version, fields", [
    (10, 4, lambda n: {"key_type": 0, "coordinator_keys": tuple(f"g{i}" for i in range(n))}),
    (65, 0, lambda n: {"transactional_ids": tuple(f"x{i}" for i in range(n))}),
])
async def test_half_a_million_keys_do_not_hold_the_loop(node, key, version, fields):
    """FindCoordinator v4+ and DescribeTransactions walked every key of a request in one turn of the
    event loop: compat/fuzz/amplify.py measured 4-9 and 5 CPU s for 2 MiB of them (a request may
    hold 100 MiB). Paced; each key is still answered."""
    from loop_stall import stall_during

    frame = encode_request(RequestHeader(key, version, 1, "c"), make(request_class(key, version), **fields(500_000)))
    await dispatch(node, encode_request(RequestHeader(10, 4, 2, "c"), make(request_class(10, 4), key_type=0,
                                                                             coordinator_keys=("g",))))
    raw, stall = await stall_during(dispatch(node, frame))  # the broker's part only, __consumer_offsets made before
    if key == 10:  # (kio's reader refuses the -1 start time of an unknown transaction, which Kafka sends too)
        assert len(decode_response(raw, key, version)[1].coordinators) == 500_000
    assert len(raw) > 500_000 * 10
    assert stall.cpu < 0.3, stall
