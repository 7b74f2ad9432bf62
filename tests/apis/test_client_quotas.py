"""DescribeClientQuotas / AlterClientQuotas through dispatch, and the byte-rate enforcement: Kafka's
sampled rate and throttle time, the quota precedence, and Produce/Fetch answering with it."""

from __future__ import annotations

import datetime

import pytest

from kafka_codecs import encode_batch
from shim.apis._pace import Pacer
from shim.apis.dispatch import dispatch_request
from shim.config import BrokerConfig
from shim.coordinators.client_quotas import ClientQuotas
from shim.coordinators.quota_enforcement import ByteRateQuota, Rate, throttle_time_ms
from shim.errors import ErrorCode as E
from shim.node import Node, now_ms
from shim.security.session import ConnectionSession
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

from apis_support import call

DESCRIBE, ALTER, PRODUCE, FETCH = 48, 49, 0, 1
EXACT, DEFAULT, SPECIFIED = 0, 1, 2


async def alter(node, entries, version=1, validate_only=False):
    """entries: [({type: name}, {key: value or None to remove})]."""
    def build(m):
        return m.AlterClientQuotasRequest(validate_only=validate_only, entries=tuple(
            m.EntryData(entity=tuple(m.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()),
                        ops=tuple(m.OpData(key=k, value=0.0 if v is None else v, remove=v is None) for k, v in ops.items()))
            for entity, ops in entries))
    r = await call(node, ALTER, version, build)
    return {tuple(sorted((e.entity_type, e.entity_name) for e in x.entity)): (x.error_code, x.error_message)
            for x in r.entries}


async def describe(node, components, strict=False, version=1):
    r = await call(node, DESCRIBE, version, lambda m: m.DescribeClientQuotasRequest(strict=strict, components=tuple(
        m.ComponentData(entity_type=t, match_type=mt, match=match) for t, mt, match in components)))
    if r.error_code != E.none:
        return r.error_code, r.entries
    return {tuple((e.entity_type, e.entity_name) for e in x.entity): {v.key: v.value for v in x.values}
            for x in r.entries}


@pytest.mark.parametrize("version", [0, 1])
async def test_alter_then_describe_survives_a_restart(tmp_path, version):
    node = Node(BrokerConfig(data_dir=tmp_path))
    got = await alter(node, [({"user": "alice"}, {"producer_byte_rate": 1024.0, "request_percentage": 12.5}),
                             ({"client-id": None}, {"consumer_byte_rate": 2048.0}),
                             ({"ip": "10.0.0.1"}, {"connection_creation_rate": 5.0})], version)
    assert set(got.values()) == {(E.none, None)}
    node.close()
    node = Node(BrokerConfig(data_dir=tmp_path))
    try:
        assert await describe(node, [], version=version) == {
            (("user", "alice"),): {"producer_byte_rate": 1024.0, "request_percentage": 12.5},
            (("client-id", None),): {"consumer_byte_rate": 2048.0},
            (("ip", "10.0.0.1"),): {"connection_creation_rate": 5.0}}
        await alter(node, [({"user": "alice"}, {"producer_byte_rate": None, "request_percentage": None})])
        assert (("user", "alice"),) not in await describe(node, [])
    finally:
        node.close()


async def test_validate_only_changes_nothing(node):
    assert await alter(node, [({"user": "u"}, {"producer_byte_rate": 10.0})], validate_only=True) == {
        (("user", "u"),): (E.none, None)}
    assert await describe(node, []) == {}


@pytest.mark.parametrize("entity,ops,message", [
    ({}, {"producer_byte_rate": 1.0}, "Invalid empty client quota entity"),
    ({"user": ""}, {"producer_byte_rate": 1.0}, "Empty user not supported"),
    ({"group": "g"}, {"producer_byte_rate": 1.0}, "Unhandled client quota entity type: group"),
    ({"ip": "1.2.3.4", "user": "u"}, {"connection_creation_rate": 1.0}, None),
    ({"ip": "not an address"}, {"connection_creation_rate": 1.0}, "not an address is not a valid IP or resolvable host."),
    ({"user": "u"}, {"connection_creation_rate": 1.0}, "Invalid configuration key connection_creation_rate"),
    ({"user": "u"}, {"producer_byte_rate": 0.0}, "Quota producer_byte_rate must be greater than 0"),
    ({"user": "u"}, {"producer_byte_rate": 1.5}, "producer_byte_rate cannot be a fractional value."),
    ({"ip": "::1"}, {"connection_creation_rate": 2.0**31}, "Proposed value for connection_creation_rate is too large for an INT."),
])
async def test_alter_refuses_what_kafka_refuses(node, entity, ops, message):
    [(code, got)] = (await alter(node, [(entity, ops)])).values()
    assert code == E.invalid_request
    if message is not None:
        assert got == message
    assert await describe(node, []) == {}


async def test_duplicate_entity_is_refused_but_the_first_alteration_applies(node):
    # Kafka's controller applies the first alteration's records, then answers the entity with the second's error
    got = await alter(node, [({"user": "u"}, {"producer_byte_rate": 5.0}), ({"user": "u"}, {"producer_byte_rate": 7.0})])
    assert got[(("user", "u"),)][0] == E.invalid_request
    assert await describe(node, []) == {(("user", "u"),): {"producer_byte_rate": 5.0}}


async def test_describe_filters(node):
    await alter(node, [({"user": "a"}, {"producer_byte_rate": 1.0}), ({"user": "a", "client-id": "c"}, {"producer_byte_rate": 2.0}),
                       ({"user": None}, {"producer_byte_rate": 3.0}), ({"client-id": "c"}, {"producer_byte_rate": 4.0})])
    assert set(await describe(node, [("user", EXACT, "a")])) == {(("user", "a"),), (("client-id", "c"), ("user", "a"))}
    assert set(await describe(node, [("user", EXACT, "a")], strict=True)) == {(("user", "a"),)}
    assert set(await describe(node, [("user", DEFAULT, None)])) == {(("user", None),)}
    assert set(await describe(node, [("client-id", SPECIFIED, None)])) == {(("client-id", "c"),), (("client-id", "c"), ("user", "a"))}


@pytest.mark.parametrize("components,code", [
    ([("", EXACT, "x")], E.invalid_request),
    ([("user", EXACT, "a"), ("user", SPECIFIED, None)], E.invalid_request),
    ([("group", EXACT, "g")], E.unsupported_version),
    ([("user", EXACT, None)], E.invalid_request),
    ([("user", DEFAULT, "a")], E.invalid_request),
    ([("ip", SPECIFIED, None), ("user", SPECIFIED, None)], E.invalid_request),
    ([("user", 7, None)], E.invalid_request),
])
async def test_describe_bad_filters(node, components, code):
    assert await describe(node, components) == (code, None)


# -- the rate and the throttle time, as Kafka computes them ---------------------------------------

def test_rate_assumes_the_full_window_until_it_has_one():
    rate = Rate(samples=11, window_ms=1000)
    rate.record(5000, 0)
    assert rate.window_size_ms(500) == 10_500  # 10 full windows assumed, plus the 500 ms elapsed
    assert rate.measure(500) == pytest.approx(5000 / 10.5)
    # 1000 B/s quota: (O - T) / T * W, as QuotaUtils.throttleTime
    assert throttle_time_ms(rate, 100.0, 500) == round((5000 / 10.5 - 100) / 100 * 10_500)
    assert throttle_time_ms(rate, 1000.0, 500) == 0


def test_rate_forgets_samples_older_than_the_window():
    rate = Rate(samples=3, window_ms=1000)
    rate.record(900, 0)
    rate.record(300, 2500)
    assert rate.measure(2500) == pytest.approx(1200 / 2.5)
    assert rate.measure(3000) == pytest.approx(300 / 2.5)  # the first sample (last event at 0) expired at 3000


@pytest.mark.parametrize("entities,user,client,bound", [
    ([({"user": "ANONYMOUS", "client-id": "c"}, 1), ({"user": "ANONYMOUS"}, 2)], "ANONYMOUS", "c", 1),
    ([({"user": "ANONYMOUS", "client-id": None}, 3), ({"user": None, "client-id": "c"}, 4)], "ANONYMOUS", "c", 3),
    ([({"user": None, "client-id": "c"}, 4), ({"user": None}, 5)], "ANONYMOUS", "c", 4),
    ([({"user": None}, 5), ({"client-id": "c"}, 6)], "ANONYMOUS", "c", 5),
    ([({"client-id": "c"}, 6), ({"client-id": None}, 7)], "ANONYMOUS", "c", 6),
    ([({"client-id": None}, 7)], "ANONYMOUS", "other", 7),
    ([({"client-id": "c"}, 6)], "ANONYMOUS", "other", None),
])
async def test_quota_precedence(tmp_path, entities, user, client, bound):
    quotas = ClientQuotas(tmp_path / "q.json")
    await quotas.alter([(frozenset(e.items()), [("producer_byte_rate", float(v))]) for e, v in entities], False,
                       Pacer())
    q = ByteRateQuota(quotas, "producer_byte_rate")
    assert q._bound(*q._tags(user, client)) == bound


async def test_clients_share_a_user_quota_and_not_a_default_client_quota(tmp_path):
    quotas = ClientQuotas(tmp_path / "q.json")
    await quotas.alter([(frozenset({("user", "ANONYMOUS")}), [("producer_byte_rate", 100.0)]),
                        (frozenset({("client-id", None)}), [("consumer_byte_rate", 100.0)])], False, Pacer())
    produce, fetch = ByteRateQuota(quotas, "producer_byte_rate"), ByteRateQuota(quotas, "consumer_byte_rate")
    assert produce.record("a", 900, 0) == 0 and produce.record("b", 900, 0) > 0  # one rate for the user
    assert fetch.record("a", 900, 0) == 0 and fetch.record("b", 900, 0) == 0  # a rate per client id


# -- Produce and Fetch answer with the throttle time and mute the connection ----------------------

def produce_frame(node, client_id, acks=1, size=2000):
    m = request_module(PRODUCE, 9)
    batch = encode_batch([(None, b"x" * size, (), 1_700_000_000_000)])
    req = m.ProduceRequest(transactional_id=None, acks=acks, timeout=datetime.timedelta(seconds=5), topic_data=(
        m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=0, records=batch),)),))
    return encode_request(RequestHeader(PRODUCE, 9, 1, client_id), req)


def fetch_frame(client_id):
    """Fetch v12 of t-0 from offset 0, up to 1 MiB, not waiting."""
    m = request_module(FETCH, 12)
    req = m.FetchRequest(
        cluster_id=None, replica_id=-1, max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1 << 20,
        isolation_level=0, session_id=0, session_epoch=-1, forgotten_topics_data=(), rack_id="",
        topics=(m.FetchTopic(topic="t", partitions=(m.FetchPartition(
            partition=0, current_leader_epoch=-1, fetch_offset=0, last_fetched_epoch=-1, log_start_offset=-1,
            partition_max_bytes=1 << 20),)),))
    return encode_request(RequestHeader(FETCH, 12, 1, client_id), req)


async def test_produce_over_quota_answers_throttle_time_and_mutes(node):
    node.logs.create_topic("t", 1)
    await alter(node, [({"client-id": "slow"}, {"producer_byte_rate": 100.0})])
    answers = [await dispatch_request(node, produce_frame(node, "slow")) for _ in range(2)]
    throttles = [decode_response(b"".join(a.parts), PRODUCE, 9)[1].throttle_time for a in answers]
    assert throttles[1] > throttles[0] > datetime.timedelta(0)  # 2 KB over 10 s is already above 100 B/s
    assert [a.mute_ms for a in answers] == [round(t.total_seconds() * 1000) for t in throttles]
    assert node.logs.get("t", 0).log_end_offset == 2  # throttling delays the client, it refuses nothing
    other = await dispatch_request(node, produce_frame(node, "fast"))
    assert other.mute_ms == 0


async def test_an_authenticated_clients_bytes_count_against_its_users_quota(node):
    # Kafka's ClientQuotaManager matches the principal's name: User:alice is the quota user alice
    node.logs.create_topic("t", 1)
    await alter(node, [({"user": "alice"}, {"producer_byte_rate": 100.0})])
    alice, bob = ConnectionSession("SASL_PLAINTEXT", "User:alice"), ConnectionSession("SASL_PLAINTEXT", "User:bob")
    assert (await dispatch_request(node, produce_frame(node, "c"), session=alice)).mute_ms > 0
    assert (await dispatch_request(node, produce_frame(node, "c"), session=bob)).mute_ms == 0
    assert (await dispatch_request(node, produce_frame(node, "c"))).mute_ms == 0  # ANONYMOUS


async def test_acks0_produce_over_quota_mutes_without_answer(node):
    node.logs.create_topic("t", 1)
    await alter(node, [({"client-id": None}, {"producer_byte_rate": 100.0})])
    answer = await dispatch_request(node, produce_frame(node, "any", acks=0))
    assert answer.parts is None and answer.mute_ms > 0


async def test_fetch_over_quota_answers_empty_and_is_not_counted(node):
    node.logs.create_topic("t", 1)
    await dispatch_request(node, produce_frame(node, "p", size=3000))
    # ~3 KB over the 10 s Kafka assumes at first is ~300 B/s: within 400 B/s once, not twice
    await alter(node, [({"client-id": "reader"}, {"consumer_byte_rate": 400.0})])
    frame = fetch_frame("reader")
    first = await dispatch_request(node, frame)
    r1 = decode_response(b"".join(p if isinstance(p, bytes) else p.read() for p in first.parts), FETCH, 12)[1]
    assert len(r1.responses) == 1 and first.mute_ms == 0  # recorded at its own time: within the first window
    rate = node.fetch_quota._rates[("", "reader")]
    rate_before = rate.measure(now_ms())
    second = await dispatch_request(node, frame)
    r2 = decode_response(b"".join(p if isinstance(p, bytes) else p.read() for p in second.parts), FETCH, 12)[1]
    assert r2.responses == () and r2.throttle_time.total_seconds() * 1000 == second.mute_ms > 0
    assert rate.measure(now_ms()) == pytest.approx(rate_before, rel=0.1)  # the empty answer was not counted


def test_throttle_time_fits_the_wire_field():
    rate = Rate(samples=11, window_ms=1000)
    rate.record(1e12, 0)
    assert throttle_time_ms(rate, 1.0, 0) == 2**31 - 1  # an int32, where Kafka's .toInt would wrap


async def test_the_shell_reads_nothing_from_a_throttled_connection_for_the_throttle_time(tmp_path):
    """Two Produce requests sent together: the second is answered no sooner than the first's throttle time."""
    import asyncio
    import struct

    from shim import Broker

    async with Broker(data_dir=tmp_path, listen="127.0.0.1:0") as broker:
        broker.node.logs.create_topic("t", 1)
        frame = produce_frame(broker.node, "slow")
        # Kafka assumes a 10 s window at first: one request is len(frame) / 10 B/s; a quota 3 % below it
        # throttles the first answer for about 300 ms
        await alter(broker.node, [({"client-id": "slow"}, {"producer_byte_rate": float(round(len(frame) / 10 / 1.03))})])
        host, port = broker.bootstrap_servers.rsplit(":", 1)
        reader, writer = await asyncio.open_connection(host, int(port))
        writer.write((struct.pack(">i", len(frame)) + frame) * 2)
        await writer.drain()
        answered = []
        for _ in range(2):
            size = struct.unpack(">i", await reader.readexactly(4))[0]
            answered.append((asyncio.get_running_loop().time(), await reader.readexactly(size)))
        writer.close()
    first = decode_response(answered[0][1], PRODUCE, 9)[1]
    throttle_s = first.throttle_time.total_seconds()
    assert 0.1 < throttle_s < 1.0, throttle_s
    assert answered[1][0] - answered[0][0] >= throttle_s * 0.9


async def test_a_consumers_fetch_asks_for_no_more_than_its_quota_window_allows(node):
    """Kafka (KAFKA-9677): MaxBytes is capped to the quota times the window less one sample, so a
    fetch the quota would throttle whole is answered in part instead."""
    node.logs.create_topic("t", 1)
    for _ in range(3):
        await dispatch_request(node, produce_frame(node, "p", size=3000))
    # 400 B/s over 10 one-second samples: 4,000 bytes, one 3 KB batch (all three would be ~920 B/s)
    await alter(node, [({"client-id": "reader"}, {"consumer_byte_rate": 400.0})])
    answer = await dispatch_request(node, fetch_frame("reader"))
    r = decode_response(b"".join(p if isinstance(p, bytes) else p.read() for p in answer.parts), FETCH, 12)[1]
    assert answer.mute_ms == 0 and r.throttle_time.total_seconds() == 0
    records = r.responses[0].partitions[0].records
    assert 3000 < len(records) <= 4000  # the first batch only
