"""GetTelemetrySubscriptions (71) and PushTelemetry (72) through dispatch, as a client's bytes: not
advertised, as Kafka advertises them only with a telemetry receiver, but answered as a Kafka
without one and without CLIENT_METRICS subscriptions answers them (ClientMetricsManager). The
clock is the handlers' ``now_ms``, moved by the tests."""

from __future__ import annotations

import datetime
import uuid

import pytest

from shim.apis import k71_get_telemetry_subscriptions as k71
from shim.apis import k72_push_telemetry as k72
from shim.client_metrics import ClientMetricsManager
from shim.config import BrokerConfig
from shim.errors import ErrorCode as E
from shim.node import Node
from shim.protocol.kafka_releases import RELEASES, TELEMETRY_APIS

from apis_support import call

INTERVAL = 300_000  # Kafka's default push interval (ClientMetricsConfigs)
# Computed with kafka-clients 4.3's Crc32C.compute("[]300000") ^ Uuid.hashCode() for this id (Kafka's
# ClientMetricsManager.computeSubscriptionId): Uuid.fromString("8N1z7xS5TbqC0p-8yFzYvw").
KNOWN_ID, KNOWN_SUBSCRIPTION = uuid.UUID("f0dd73ef-14b9-4dba-82d2-9fbcc85cd8bf"), 2049778312
RESERVED = (uuid.UUID(int=0), uuid.UUID(int=1))


@pytest.fixture
def clock(monkeypatch):
    now = [1_700_000_000_000]
    monkeypatch.setattr(k71, "now_ms", lambda: now[0])
    monkeypatch.setattr(k72, "now_ms", lambda: now[0])
    return now


@pytest.fixture
def open_node(tmp_path):
    nodes = []

    def make(**fields) -> Node:
        nodes.append(Node(BrokerConfig(data_dir=tmp_path / f"data{len(nodes)}", **fields)))
        return nodes[-1]

    yield make
    for n in nodes:
        n.close()


async def get(node, instance_id=None):
    return await call(node, 71, 0, lambda m: m.GetTelemetrySubscriptionsRequest(
        client_instance_id=uuid.UUID(int=0) if instance_id is None else instance_id))


async def push(node, instance_id, subscription, compression=4, metrics=b"m", terminating=False):
    r = await call(node, 72, 0, lambda m: m.PushTelemetryRequest(
        client_instance_id=instance_id, subscription_id=subscription, terminating=terminating,
        compression_type=compression, metrics=metrics))
    assert r.throttle_time == datetime.timedelta(0)
    return r.error_code


@pytest.mark.parametrize("release", list(RELEASES))
async def test_not_advertised_but_answered_with_an_empty_subscription(open_node, clock, release):
    node = open_node(kafka_version=release)
    old = await call(node, 18, 0, lambda m: m.ApiVersionsRequest())
    new = await call(node, 18, 3, lambda m: m.ApiVersionsRequest(client_software_name="t", client_software_version="1"))
    for r in (old, new):
        assert not {k.api_key for k in r.api_keys} & set(TELEMETRY_APIS)
    r = await get(node)
    assert (r.error_code, r.throttle_time) == (E.none, datetime.timedelta(0))
    assert r.client_instance_id not in RESERVED and r.client_instance_id.bytes[0] >> 2 != 62  # no '-' in base64
    assert (r.requested_metrics, r.accepted_compression_types, r.push_interval, r.telemetry_max_bytes,
            r.delta_temporality) == ((), (4, 3, 1, 2), datetime.timedelta(milliseconds=INTERVAL), 1 << 20, True)
    assert await push(node, r.client_instance_id, r.subscription_id) == E.none
    assert (await get(node)).client_instance_id != r.client_instance_id  # a new one for each zero id


async def test_the_subscription_id_is_kafkas_and_a_known_id_is_kept(open_node, clock):
    node = open_node(kafka_version="4.1", extra={"telemetry.max.bytes": "4096"})
    r = await get(node, KNOWN_ID)
    assert (r.error_code, r.client_instance_id, r.subscription_id, r.telemetry_max_bytes) == (
        E.none, KNOWN_ID, KNOWN_SUBSCRIPTION, 4096)


async def test_a_second_lookup_within_the_push_interval_is_throttled(open_node, clock):
    node = open_node(kafka_version="4.1")
    first = await get(node, KNOWN_ID)
    clock[0] += INTERVAL - 1
    early = await get(node, KNOWN_ID)
    assert early.error_code == E.throttling_quota_exceeded
    assert (early.client_instance_id, early.subscription_id, early.accepted_compression_types,
            early.push_interval, early.telemetry_max_bytes) == (None, 0, (), datetime.timedelta(0), 0)  # None: zeros
    clock[0] += 1
    assert (await get(node, KNOWN_ID)).subscription_id == first.subscription_id


async def test_push_is_checked_in_kafkas_order(open_node, clock):
    node = open_node(kafka_version="4.1", extra={"telemetry.max.bytes": "64"})
    for reserved in (*RESERVED, None):
        assert await push(node, reserved, 0) == E.invalid_request
    sub = (await get(node, KNOWN_ID)).subscription_id
    assert await push(node, KNOWN_ID, sub, compression=0) == E.none  # the first push after a lookup: on time
    assert await push(node, KNOWN_ID, sub) == E.throttling_quota_exceeded
    assert await push(node, KNOWN_ID, sub + 1) == E.throttling_quota_exceeded  # the interval is checked first
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub + 1) == E.unknown_subscription_id
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub, compression=5) == E.unsupported_compression_type
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub, metrics=b"x" * 65) == E.telemetry_too_large
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub, metrics=b"x" * 64) == E.none
    assert await push(node, KNOWN_ID, sub, terminating=True) == E.none  # a terminating push is never throttled
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub) == E.invalid_request  # nothing after the terminating push
    # Kafka then records the refused push's terminating flag (false), so the instance takes pushes again
    clock[0] += INTERVAL
    assert await push(node, KNOWN_ID, sub) == E.none


@pytest.mark.parametrize("release, after_refusal", [
    ("3.9", E.throttling_quota_exceeded), ("4.0", E.throttling_quota_exceeded), ("4.1", E.none)])
async def test_a_lookup_after_a_refused_push(open_node, clock, release, after_refusal):
    """Kafka 4.1 lets a client whose push was refused for its subscription id look up its subscription
    at once; the check of 3.9 and 4.0 (``||`` where ``&&`` was meant, apache/kafka#19959) throttles it
    all the same."""
    node = open_node(kafka_version=release)
    sub = (await get(node, KNOWN_ID)).subscription_id
    assert await push(node, KNOWN_ID, sub + 1) == E.unknown_subscription_id
    assert (await get(node, KNOWN_ID)).error_code == after_refusal


async def test_a_push_of_an_unknown_instance_makes_it(open_node, clock):
    """Kafka makes the instance a push names (another broker may have answered its lookup)."""
    node = open_node(kafka_version="4.1")
    assert await push(node, KNOWN_ID, KNOWN_SUBSCRIPTION) == E.none
    assert await push(node, KNOWN_ID, KNOWN_SUBSCRIPTION) == E.throttling_quota_exceeded


def test_instances_are_bounded_expire_and_go_with_their_connection():
    manager = ClientMetricsManager(1 << 20, drop_on_disconnect=True, forgiving_get=True, max_instances=3)
    ids = [uuid.UUID(int=i + 2) for i in range(4)]
    for i, instance_id in enumerate(ids):
        assert manager.push(instance_id, 0, False, 0, 0, f"conn{i}", 1_000 + i)  # refused: wrong subscription
    assert list(manager.instances) == ids[1:]  # the least recently used went
    assert set(manager.by_connection) == {"conn1", "conn2", "conn3"}
    manager.disconnected("conn2")
    assert list(manager.instances) == [ids[1], ids[3]]
    later = 1_003 + 3 * INTERVAL  # max(60 s, three push intervals) after the last request
    manager.get_subscriptions(ids[3], "conn9", later - 1)
    manager.get_subscriptions(uuid.UUID(int=99), "conn8", later)
    assert list(manager.instances) == [ids[3], uuid.UUID(int=99)] and "conn1" not in manager.by_connection
    kept = ClientMetricsManager(1 << 20, drop_on_disconnect=False, forgiving_get=False)
    kept.get_subscriptions(ids[0], "conn", 0)
    kept.disconnected("conn")
    assert list(kept.instances) == [ids[0]]  # Kafka 3.x keeps it until it expires
