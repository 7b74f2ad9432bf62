"""GetTelemetrySubscriptions and PushTelemetry with CLIENT_METRICS subscriptions stored: Kafka's
ClientMetricsManager exists without a telemetry receiver, so a client that sends the requests
anyway is given the subscriptions it matches. Subscription ids were computed with kafka-clients
4.3's Crc32C over Java's HashSet.toString plus the interval, XORed with Uuid.hashCode."""

from __future__ import annotations

import datetime
import time
import uuid

from shim.errors import ErrorCode as E

from apis_support import call
from test_telemetry_apis import INTERVAL, KNOWN_ID, KNOWN_SUBSCRIPTION, clock, get, open_node, push  # noqa: F401

CLIENT_METRICS, SET, DELETE = 16, 0, 1
PREFIXES = ("org.apache.kafka.producer.", "org.apache.kafka.consumer.")  # in Java's HashSet order


async def subscribe(node, name, **configs):
    ops = [(k.replace("_", "."), DELETE if v is None else SET, v) for k, v in configs.items()]
    r = await call(node, 44, 1, lambda m: m.IncrementalAlterConfigsRequest(validate_only=False, resources=(
        m.AlterConfigsResource(resource_type=CLIENT_METRICS, resource_name=name, configs=tuple(
            m.AlterableConfig(name=k, config_operation=op, value=v) for k, op, v in ops)),)))
    assert r.responses[0].error_code == E.none


def answer(r):
    return r.error_code, r.requested_metrics, r.push_interval // datetime.timedelta(milliseconds=1), r.subscription_id


async def test_a_matching_subscription_is_given_to_the_client(open_node, clock):
    node = open_node(kafka_version="4.1")
    await subscribe(node, "producers", metrics="org.apache.kafka.consumer., org.apache.kafka.producer.",
                    interval_ms="1000", match="client_id=te.*")  # the tests' requests say client id "tests"
    await subscribe(node, "others", metrics="x.", interval_ms="500", match="client_id=other")
    assert answer(await get(node, KNOWN_ID)) == (E.none, PREFIXES, 1000, -1951105045)


async def test_all_metrics_and_the_shortest_interval_up_to_the_default(open_node, clock):
    node = open_node(kafka_version="4.1")
    await subscribe(node, "long", metrics="a.", interval_ms="600000")
    await subscribe(node, "all", metrics="*, b.")
    assert answer(await get(node, KNOWN_ID)) == (E.none, ("*",), INTERVAL, -1832946059)


async def test_a_selector_the_request_cannot_answer_matches_nothing(open_node, clock):
    node = open_node(kafka_version="4.1")
    # no ApiVersions v3 on this request's connection: no software name to match
    await subscribe(node, "java", metrics="x.", match="client_software_name=.*")
    assert answer(await get(node, KNOWN_ID)) == (E.none, (), INTERVAL, KNOWN_SUBSCRIPTION)


async def test_a_changed_subscription_is_evaluated_at_the_next_request(open_node, clock):
    node = open_node(kafka_version="4.1")
    first = await get(node, KNOWN_ID)
    assert answer(first) == (E.none, (), INTERVAL, KNOWN_SUBSCRIPTION)
    assert (await get(node, KNOWN_ID)).error_code == E.throttling_quota_exceeded
    await subscribe(node, "sub", metrics="*", interval_ms="1000", match="client_instance_id=8N1z7xS5TbqC0p-8yFzYvw")
    # a new instance: not throttled, and the old subscription id is no longer known
    assert await push(node, KNOWN_ID, KNOWN_SUBSCRIPTION) == E.unknown_subscription_id
    again = await get(node, KNOWN_ID)
    assert answer(again) == (E.none, ("*",), 1000, -1671312401)
    # that lookup was let through after the refused push, not counted as on time: the push waits the interval
    assert await push(node, KNOWN_ID, again.subscription_id) == E.throttling_quota_exceeded
    clock[0] += 1000
    assert await push(node, KNOWN_ID, again.subscription_id) == E.none
    await subscribe(node, "sub", metrics=None, interval_ms=None, match=None)  # gone with its last key
    assert answer(await get(node, KNOWN_ID)) == (E.none, (), INTERVAL, KNOWN_SUBSCRIPTION)


async def get_as(node, client_id):
    return await call(node, 71, 0, lambda m: m.GetTelemetrySubscriptionsRequest(client_instance_id=uuid.UUID(int=0)),
                      client_id=client_id)


async def test_a_backtracking_match_pattern_does_not_hold_the_loop(open_node, clock):
    """``(a|a)*$`` against 26 a's and a b took Python's backtracking matcher 2^26 steps (5 s;
    a 60-byte client id, for ever) on the event loop; RE2 answers in linear time, with the same result."""
    node = open_node(kafka_version="4.1")
    await subscribe(node, "evil", metrics="x.", match="client_id=(a|a)*$")
    started = time.process_time()
    refused = await get_as(node, "a" * 26 + "b")
    matched = await get_as(node, "a" * 60)
    assert time.process_time() - started < 1.0
    assert (refused.error_code, refused.requested_metrics) == (E.none, ())
    assert (matched.error_code, matched.requested_metrics) == (E.none, ("x.",))


async def test_a_pattern_only_a_backtracking_matcher_runs_is_stored_and_matches_no_client(open_node, clock):
    """java.util.regex compiles a backreference, so Kafka stores the subscription; RE2 cannot run one."""
    node = open_node(kafka_version="4.1")
    await subscribe(node, "backref", metrics="x.", match=r"client_id=(a)\1")
    assert (await get_as(node, "aa")).requested_metrics == ()
