"""The stateful fuzzer's requests (stateful.py): the pools of values the answers hand out (member
ids and epochs, producer ids and epochs, topic ids, fetch and share sessions, telemetry
subscriptions, DescribeTopicPartitions cursors) and the Builder that fills every field of a served
API's request from them, from vocabulary.py and from hostile values by field name and type."""

from __future__ import annotations

import dataclasses
import datetime
import random
import time
import uuid

from kio.serial._introspect import classify_field, get_field_tag

from kafka_codecs import encode_batch

from .vocabulary import (CHURN_APIS, CHURN_TOPICS, CONFIG_APIS, GROUPS, HOSTILE_REGEXES, SANE_REGEXES,
                         SHARE_GROUPS, TOPICS, classic_assignment, classic_protocol, config_resource,
                         describe_cursor)
from shim.protocol.messages import request_class

SHARE_APIS = {76, 77, 78, 79, 83, 84, 85, 86, 87, 90, 91, 92}
TXN_IDS = ("tx0", "tx1")
TIMEDELTA_MAX_MS = 999_999_999 * 86_400_000  # the largest milliseconds a timedelta holds either way (about 2**56)
HOSTILE_STRINGS = ("", "a" * 300, "t" * 32767, "é\u2603", "__consumer_offsets")
CLIENT_MEMBER_IDS = ("0ZbCkgAHQk2dwvQnVjpbBw", "GjK7vS8VRY2sS8mUjVbUvA", "fmt9dmVVRnOfYzdmEVn1Cg")  # KIP-1082
ASSIGNORS = ("uniform", "range", "simple", "bogus", "")
PROTOCOL_TYPES = ("consumer", "connect", "")


class Pools:
    """Values the answers handed out, for the next requests to reuse."""

    def __init__(self) -> None:
        self.member_ids: list[str] = ["", "m-unknown"]
        self.epochs: list[int] = [0, 1, -1, -2]
        self.producers: list[tuple[int, int]] = [(-1, -1), (0, 0)]
        self.topic_ids: list[uuid.UUID] = [uuid.UUID(int=0), uuid.uuid4()]
        self.real_topic_ids: list[uuid.UUID] = []
        self.members: list[tuple[str, int]] = []  # (member id, epoch or generation) an answer paired
        self.offsets: list[int] = [0, 1, 2]  # acquired record offsets ShareFetch handed out
        self.share_members: list[tuple[str, str]] = []  # (group id, member id) a share heartbeat accepted
        self.session_epochs: dict[str, int] = {}  # member id -> the next share session epoch
        self.fetch_sessions: dict[int, int] = {}  # KIP-227 session id -> the epoch its next request carries
        self.telemetry: list[tuple[uuid.UUID, int]] = []  # (client instance id, subscription id) handed out
        self.cursors: list[tuple[str, int]] = []  # DescribeTopicPartitions next cursors handed out

    def learn(self, entity, request=None) -> None:
        kind = type(entity).__name__
        if kind == "ShareGroupHeartbeatResponse" and entity.error_code == 0 and entity.member_id:
            _remember(self.share_members, (request.group_id, entity.member_id))
        if kind == "FetchResponse" and getattr(entity, "session_id", 0) and request is not None:
            # a new session starts at epoch 1, a continued one at the epoch after the request's
            epoch = 1 if request.session_epoch in (0, -1) else request.session_epoch + 1
            self.fetch_sessions[entity.session_id] = epoch
            while len(self.fetch_sessions) > 24:
                del self.fetch_sessions[next(iter(self.fetch_sessions))]
        if kind == "GetTelemetrySubscriptionsResponse" and entity.error_code == 0:
            _remember(self.telemetry, (entity.client_instance_id, entity.subscription_id))
        if kind == "DescribeTopicPartitionsResponse" and entity.next_cursor is not None:
            _remember(self.cursors, (entity.next_cursor.topic_name, entity.next_cursor.partition_index))
        for f in dataclasses.fields(entity):
            value = getattr(entity, f.name)
            if dataclasses.is_dataclass(value):
                self.learn(value)
            elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
                for v in value[:8]:
                    self.learn(v)
            elif f.name == "member_id" and isinstance(value, str) and value:
                _remember(self.member_ids, value)
            elif f.name in ("member_epoch", "generation_id") and isinstance(value, int):
                _remember(self.epochs, value)
            elif f.name == "topic_id" and isinstance(value, uuid.UUID):
                _remember(self.topic_ids, value)
            elif f.name in ("first_offset", "last_offset") and isinstance(value, int):
                _remember(self.offsets, value)
        names = {f.name for f in dataclasses.fields(entity)}
        epoch = "member_epoch" if "member_epoch" in names else "generation_id" if "generation_id" in names else None
        if "member_id" in names and epoch and entity.member_id:
            _remember(self.members, (entity.member_id, int(getattr(entity, epoch))))
        if hasattr(entity, "producer_id") and hasattr(entity, "producer_epoch"):
            _remember(self.producers, (int(entity.producer_id), int(entity.producer_epoch)))


def _remember(pool: list, value) -> None:
    if value not in pool:
        pool.append(value)
        del pool[:-24]


class Builder:
    """Requests of any served API and version, from pools and hostile values by field name and type."""

    def __init__(self, rng: random.Random, pools: Pools) -> None:
        self.rng, self.pools = rng, pools
        self.producer = (-1, -1)
        self.groups, self.topics = GROUPS, TOPICS
        self.sane = False  # this request without hostile values: the way deep into a state machine

    def request(self, key: int, version: int):
        self.producer = self.rng.choice(self.pools.producers)
        self.sane = self.rng.random() < 0.5
        self.key = key
        # DeleteTopics and CreatePartitions only churn t2 and t3; the groups subscribe to them now and then
        self.topics = CHURN_TOPICS if key in CHURN_APIS else TOPICS + CHURN_TOPICS if self.rng.random() < 0.3 else TOPICS
        self.groups = SHARE_GROUPS if key in SHARE_APIS or self.rng.random() < 0.05 else GROUPS
        self.groups = self.groups[:2] if self.sane else self.groups
        return self.entity(request_class(key, version), depth=0)

    @property
    def hostile(self) -> float:
        """How often a field gets a hostile value."""
        return 0.0 if self.sane else 0.15

    def entity(self, cls, depth: int):
        values = {}
        for f in dataclasses.fields(cls):
            if not f.init:
                continue
            kind = classify_field(f)
            nested = getattr(kind, "type_", None)
            tagged = get_field_tag(f) is not None
            if tagged and self.rng.random() < 0.5:
                continue  # an absent tagged field
            if kind.is_array:
                values[f.name] = self.array(f, nested, depth)
            elif dataclasses.is_dataclass(nested):
                values[f.name] = self.entity(nested, depth + 1)
            else:
                values[f.name] = self.value(f.name, f.metadata.get("kafka_type"), _nullable(f))
        self.cohere(values)
        return cls(**values)

    def cohere(self, values: dict) -> None:
        """Mostly a member id with the epoch its last answer gave, and the next share session epoch."""
        rng, pools = self.rng, self.pools
        if self.key in CONFIG_APIS and "resource_type" in values and rng.random() < 0.8:
            values.update(config_resource(rng, values, self.hostile))
        if self.key in (11, 14):
            self.cohere_classic(values)
        epoch = next((n for n in ("member_epoch", "generation_id") if n in values), None)
        if self.sane and epoch == "member_epoch" and rng.random() < 0.3:  # a new member joins
            values["member_id"], values[epoch] = rng.choice(CLIENT_MEMBER_IDS) + str(rng.randrange(9)), 0
        elif "member_id" in values and epoch and pools.members and rng.random() < 0.7:
            member, n = rng.choice(pools.members)
            values["member_id"], values[epoch] = member, n + rng.choice((0, 0, 0, 0, 1, -1))
        if self.key == 68 and self.sane and values.get("member_epoch") == 0:  # a join Kafka accepts
            values.update(topic_partitions=(), server_assignor=rng.choice(("uniform", "range")))
            values["subscribed_topic_names"] = values.get("subscribed_topic_names") or self.topics[:2]
        if "session_epoch" in values and "session_id" in values:
            self.cohere_fetch(values)
        if self.key == 75 and "response_partition_limit" in values:
            describe_cursor(rng, values, pools.cursors, self.topics, self.hostile)
        if "subscription_id" in values and pools.telemetry and rng.random() < 0.8:
            values["client_instance_id"], values["subscription_id"] = rng.choice(pools.telemetry)
        if "share_session_epoch" in values and self.sane and pools.share_members:
            values["group_id"], values["member_id"] = rng.choice(pools.share_members)
        if "share_session_epoch" in values and rng.random() < 0.7:
            member = values.get("member_id") or ""
            n = pools.session_epochs.get(member, 0)
            values["share_session_epoch"] = rng.choice((n, n, n, 0, -1, n + 1))
            pools.session_epochs[member] = 1 if values["share_session_epoch"] == 0 else n + 1

    def cohere_classic(self, values: dict) -> None:
        """A classic consumer (protocol type consumer, a new member now and then) with a parseable
        ConsumerProtocolSubscription, and a SyncGroup leader's parseable assignments."""
        rng = self.rng
        if "protocol_type" in values and self.key == 11 and self.sane:
            values["protocol_type"] = "consumer"
            values["member_id"] = "" if rng.random() < 0.3 else values["member_id"]
        if "metadata" in values and rng.random() < 0.8:
            values["name"], values["metadata"] = classic_protocol(rng, self.topics)
        if "assignment" in values and rng.random() < 0.8:
            values["assignment"] = classic_assignment(rng, self.topics)

    def cohere_fetch(self, values: dict) -> None:
        """A Fetch (KIP-227): mostly a live session at its next epoch (or one off, or a full or final
        request naming it), else a new session or a session id never handed out; a short wait."""
        rng, sessions = self.rng, self.pools.fetch_sessions
        if sessions and rng.random() < 0.8:
            session_id = rng.choice(list(sessions))
            epoch = sessions[session_id]
            values["session_id"] = session_id
            values["session_epoch"] = rng.choice((epoch, epoch, epoch, epoch, epoch + 1, epoch - 1, 0, -1))
        elif rng.random() < 0.7:
            values["session_id"], values["session_epoch"] = 0, rng.choice((0, 0, 0, -1))
        if "max_wait" in values and rng.random() < 0.9:
            values["max_wait"] = datetime.timedelta(milliseconds=rng.choice((0, 10, 100)))

    def array(self, f, nested, depth: int):
        rng = self.rng
        if _nullable(f) and rng.random() < self.hostile:
            return None
        n = rng.choice((0, 1, 1, 1, 2, 3)) if depth < 3 else rng.choice((0, 1))
        n = max(n, 1) if self.sane else n
        if dataclasses.is_dataclass(nested):
            items = [self.entity(nested, depth + 1) for _ in range(n)]
        else:
            items = [self.value(f.name, f.metadata.get("kafka_type"), False) for _ in range(n)]
        if items and rng.random() < self.hostile:
            items = items + items[:1] * rng.choice((1, 2, 50))  # duplicate entries
        return tuple(items)

    def value(self, name: str, kafka_type: str | None, nullable: bool):
        rng, pools = self.rng, self.pools
        if nullable and rng.random() < (0.5 if name.endswith("regex") else self.hostile / 2):
            return None
        if kafka_type == "string":
            return self.string(name)
        if kafka_type == "uuid":
            return rng.choice(pools.real_topic_ids if self.sane and pools.real_topic_ids else pools.topic_ids)
        if kafka_type == "bool":
            return rng.random() < 0.5
        if kafka_type in ("bytes", "records"):
            return self.bytes_(kafka_type)
        if kafka_type and kafka_type.startswith("timedelta"):  # an int64 past what a timedelta holds: its largest
            ms = self.number(name, 31 if kafka_type.endswith("32") else 63)
            return datetime.timedelta(milliseconds=max(min(ms, TIMEDELTA_MAX_MS), -TIMEDELTA_MAX_MS))
        if kafka_type == "datetime_i64":
            return datetime.datetime.fromtimestamp(rng.choice((0, time.time())), datetime.timezone.utc)
        bits = {"int8": 7, "int16": 15, "int32": 31, "int64": 63, "uint16": 0, "float64": 0}.get(kafka_type or "")
        if bits:
            return self.number(name, bits)
        if kafka_type == "uint16":
            return rng.choice((0, 1, 65535))
        if kafka_type == "float64":
            return rng.choice((0.0, 1.0, -1.0, float("inf"), float("nan")))
        return rng.randint(0, 3)

    def number(self, name: str, bits: int) -> int:
        rng, pools = self.rng, self.pools
        top = (1 << bits) - 1
        if rng.random() < self.hostile:
            return rng.choice((-top - 1, -1, top, top - 1, rng.randint(-top - 1, top)))
        if name == "producer_id":
            return self.producer[0]
        if name == "producer_epoch":
            return self.producer[1]
        if "epoch" in name or name == "generation_id":
            return min(max(rng.choice(pools.epochs) + rng.choice((0, 0, 0, 1, -1)), -top - 1), top)
        if "timeout" in name or name.endswith("_ms"):
            return rng.choice((30_000, 45_000) if self.sane else (0, 1, 10, 100, 1000, 30_000, -1))
        if "partition" in name or name == "index":
            return rng.choice((0, 1, 2) if self.sane else (0, 0, 1, 2, -1, 5))
        if "offset" in name:
            return rng.choice(pools.offsets) + rng.choice((0, 0, 1, -1, 3, -5))
        if "type" in name:
            return rng.choice((1, 2, 3) if self.sane else (0, 1, 2, 3, 4, 5, -1))
        if name in ("acks",):
            return rng.choice((-1, 1))
        return rng.choice((0, 1, 2, 3, 10, 100, 1000, -1))

    def string(self, name: str) -> str:
        rng = self.rng
        if rng.random() < self.hostile / 2:
            return rng.choice(HOSTILE_STRINGS)
        if name == "member_id":
            return rng.choice(self.pools.member_ids + list(CLIENT_MEMBER_IDS))
        if "group" in name and "instance" not in name or name == "key" and rng.random() < 0.5:
            return rng.choice(self.groups)
        if "instance" in name:
            return rng.choice(("i0", "i1"))
        if "transactional" in name:
            return rng.choice(TXN_IDS)
        if "regex" in name:
            return rng.choice(SANE_REGEXES if self.sane else SANE_REGEXES + HOSTILE_REGEXES)
        if "assignor" in name or name == "protocol_name":
            return rng.choice(ASSIGNORS[:2] if self.sane else ASSIGNORS)
        if name == "protocol_type":
            return rng.choice(PROTOCOL_TYPES)
        if "topic" in name or name in ("name", "resource_name"):
            return rng.choice(self.topics if self.sane else self.topics + ("nope",))
        if "rack" in name:
            return rng.choice(("r0", "r1"))
        return rng.choice(("x", "g0", "t0", "share.auto.offset.reset", "earliest", "group.share.delivery.count.limit"))

    def bytes_(self, kafka_type: str) -> bytes:
        rng = self.rng
        if kafka_type == "records" and rng.random() < 0.8:
            now = int(time.time() * 1000)
            return encode_batch([(None, b"v%d" % i, (), now) for i in range(rng.randint(1, 5))])
        return rng.choice((b"", b"\x00\x01\x00\x00\x00\x00", bytes(rng.getrandbits(8) for _ in range(20))))


def _nullable(f) -> bool:
    return "None" in str(f.type)
