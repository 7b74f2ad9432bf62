"""share.auto.offset.reset=by_duration:<ISO-8601 duration> (KIP-1106) through the dispatcher:
validated with Kafka's messages on IncrementalAlterConfigs of a GROUP (Kafka 4.1; 4.0 refuses it),
described as set, and used when a share partition with no start offset is first fetched: the first
record whose timestamp is at or after now minus the duration (Kafka: SharePartition.
startOffsetDuringInitialization, ShareFetchUtils.offsetForTimestamp). With no such record the
partition answers OFFSET_NOT_AVAILABLE and is tried again on the next fetch. Records carry chosen
timestamps, hours apart, so the wall clock's progress during a test cannot change an answer."""

from __future__ import annotations

import asyncio
import base64
import re
import time
import uuid

import pytest

from kafka_codecs import encode_batch
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.protocol.messages import request_module
from share.test_share_admin_apis import G, T, alter, call, heartbeat, open_node

HOUR = 3_600_000
GROUP, SET = 32, 0
MESSAGE_4_1 = ("Invalid value {v} for configuration share.auto.offset.reset: Invalid value `{v}` for configuration "
               "share.auto.offset.reset. The value must be either 'earliest', 'latest' or of the format "
               "'by_duration:<PnDTnHnMn.nS>'.")


async def incremental(node, group, value):
    """IncrementalAlterConfigs SET share.auto.offset.reset on GROUP ``group``: its (error, message)."""
    m = request_module(44, 1)
    r = await call(node, 44, 1, validate_only=False, resources=(m.AlterConfigsResource(
        resource_type=GROUP, resource_name=group, configs=(
            m.AlterableConfig(name="share.auto.offset.reset", config_operation=SET, value=value),)),))
    return r.responses[0].error_code, r.responses[0].error_message


async def described(node, group):
    """DescribeConfigs of GROUP ``group``: share.auto.offset.reset's (value, config source)."""
    m = request_module(32, 4)
    r = await call(node, 32, 4, include_synonyms=False, include_documentation=False, resources=(
        m.DescribeConfigsResource(resource_type=GROUP, resource_name=group, configuration_keys=None),))
    (c,) = [c for c in r.results[0].configs if c.name == "share.auto.offset.reset"]
    return c.value, c.config_source


@pytest.fixture
def node(tmp_path):
    n = open_node(tmp_path / "data")
    n.finalize_features({"share.version": 1})
    yield n
    n.close()


async def produce_at(node, *ages_ms, partition=0):
    """One record per batch, each stamped ``age`` milliseconds before now."""
    m = request_module(0, 9)
    now = int(time.time() * 1000)
    for age in ages_ms:
        batch = encode_batch([(None, b"v", (), now - age)])
        data = (m.TopicProduceData(name=T, partition_data=(m.PartitionProduceData(index=partition, records=batch),)),)
        r = await call(node, 0, 9, transactional_id=None, acks=-1, timeout=5000, topic_data=data)
        assert r.responses[0].partition_responses[0].error_code == E.none


async def share_fetch(node, member, epoch, max_wait_ms=0):
    """One ShareFetch of partition 0: (error code, error message, acquired ranges)."""
    m = request_module(78, 1)
    r = await call(node, 78, 1, group_id=G, member_id=member, share_session_epoch=epoch, max_wait=max_wait_ms,
                   min_bytes=1, max_bytes=1 << 20, max_records=500, batch_size=500,
                   topics=(m.FetchTopic(topic_id=node.logs.topics[T].topic_id,
                                        partitions=(m.FetchPartition(partition_index=0, acknowledgement_batches=()),)),),
                   forgotten_topics_data=())
    assert r.error_code == E.none
    (p,) = [p for t in r.responses for p in t.partitions]
    return p.error_code, p.error_message, [(a.first_offset, a.last_offset) for a in p.acquired_records]


async def member_of(node):
    member = str(uuid.uuid4())
    assert (await heartbeat(node, member, 0)).error_code == E.none
    return member


async def test_by_duration_is_set_and_described(node):
    assert await incremental(node, G, "by_duration:P1DT2H") == (E.none, None)
    assert await described(node, G) == ("by_duration:P1DT2H", 8)  # GROUP_CONFIG


@pytest.mark.parametrize("value", ["by_duration:-PT1H", "by_duration", "by_duration:1H", "none", "by_duration:P1W"])
async def test_kafka_4_1_refuses_with_its_message(node, value):
    assert await incremental(node, G, value) == (E.invalid_config, MESSAGE_4_1.format(v=value))
    assert await described(node, G) == ("latest", 5)  # DEFAULT_CONFIG: nothing stored


async def test_kafka_4_0_refuses_by_duration(tmp_path):
    n = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.0"))
    try:
        assert await incremental(n, G, "by_duration:PT1H") == (E.invalid_config, "Invalid value by_duration:PT1H for "
                                                                "configuration share.auto.offset.reset: String must "
                                                                "be one of: latest, earliest")
    finally:
        n.close()


async def test_the_start_is_the_first_record_at_or_after_now_minus_the_duration(node):
    await produce_at(node, 3 * HOUR, 3 * HOUR, 2 * HOUR, HOUR // 2, 2 * HOUR, HOUR // 6)  # offsets 0-5
    assert await incremental(node, G, "by_duration:PT1H") == (E.none, None)
    member = await member_of(node)
    # offset 3 is the first within the hour; 4, older again, follows it in the log and is delivered
    assert await share_fetch(node, member, 0) == (E.none, None, [(3, 3), (4, 4), (5, 5)])


async def test_no_record_that_recent_is_offset_not_available_until_one_is(node):
    await produce_at(node, 3 * HOUR, 2 * HOUR)
    assert await incremental(node, G, "by_duration:PT1H") == (E.none, None)
    member = await member_of(node)
    before = int(time.time() * 1000) - HOUR
    code, message, ranges = await share_fetch(node, member, 0)
    after = int(time.time() * 1000) - HOUR
    topic_id = base64.urlsafe_b64encode(node.logs.topics[T].topic_id.bytes).decode().rstrip("=")
    found = re.fullmatch(rf"Offset for timestamp (\d+) not found for topic partition: {re.escape(topic_id)}:{T}-0",
                         message or "")
    assert (code, ranges) == (E.offset_not_available, []) and found and before <= int(found.group(1)) <= after
    await produce_at(node, HOUR * 3, 0)  # offsets 2 (old) and 3 (now)
    assert await share_fetch(node, member, 1) == (E.none, None, [(3, 3)])


async def test_the_failed_partition_is_not_tried_again_within_the_request(node):
    """A record recent enough appended while the request is parked wakes it but does not complete
    it: Kafka's failed share partition is out of the delayed fetch (fenced, dropped from the
    cache). The request answers the failure when MaxWaitMs has passed; the next fetch starts."""
    await produce_at(node, 3 * HOUR)
    assert await incremental(node, G, "by_duration:PT1H") == (E.none, None)
    member = await member_of(node)
    parked = asyncio.ensure_future(share_fetch(node, member, 0, max_wait_ms=2000))
    while not (node.changes.parked() or parked.done()):
        await asyncio.sleep(0)  # its first look failed and it waits
    assert not parked.done()
    await produce_at(node, 0)  # offset 1, recent: wakes it
    while not (node.changes.parked() or parked.done()):
        await asyncio.sleep(0)
    assert not parked.done()  # parked again
    code, _, ranges = await parked
    assert (code, ranges) == (E.offset_not_available, [])
    assert await share_fetch(node, member, 1) == (E.none, None, [(1, 1)])


async def test_a_start_offset_already_held_is_kept(node):
    await produce_at(node, 3 * HOUR, 3 * HOUR, 3 * HOUR)
    assert await incremental(node, G, "by_duration:PT1H") == (E.none, None)
    gone = await member_of(node)
    assert (await heartbeat(node, gone, -1)).error_code == E.none  # the group exists, empty
    r = await alter(node, {(T, 0): 1})  # the share coordinator holds start offset 1 for partition 0
    assert r.error_code == E.none
    member = await member_of(node)
    assert await share_fetch(node, member, 0) == (E.none, None, [(1, 1), (2, 2)])


async def test_a_duration_no_instant_holds_fails_the_initialization_as_java_does(node):
    await produce_at(node, 0)
    assert await incremental(node, G, f"by_duration:PT{2**63 - 1}S") == (E.none, None)  # valid: a long of seconds
    member = await member_of(node)
    assert await share_fetch(node, member, 0) == (E.unknown_server_error, "Instant exceeds minimum or maximum instant",
                                                  [])
