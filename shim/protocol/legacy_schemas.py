"""Produce v0-2, Fetch v0-3, ListOffsets v0, OffsetCommit v0-1 and the lowest versions of
CreateTopics, DeleteTopics, OffsetForLeaderEpoch, WriteTxnMarkers, DescribeConfigs and the ACL
APIs: versions Kafka 3.9 serves (4.0 removed them) and kio does not generate, derived field by
field from kio's nearest version as Kafka's JSON schemas describe them.

* ProduceRequest v0-2 is v3 without TransactionalId; ProduceResponse v2 is v3, v1 has no
  LogAppendTimeMs, v0 no ThrottleTimeMs either.
* FetchRequest v3 is v4 without IsolationLevel, v0-2 also without MaxBytes; FetchResponse v1-3 is v4
  without LastStableOffset and AbortedTransactions, v0 also without ThrottleTimeMs.
* DescribeAcls, CreateAcls and DeleteAcls v0 are v1 without the pattern type fields (LITERAL only).
* ListOffsetsRequest v0 has MaxNumOffsets after Timestamp and no IsolationLevel; its response
  gives OldStyleOffsets instead of Timestamp and Offset.
* OffsetCommitRequest v1 is v2 without RetentionTimeMs and with a CommitTimestamp per partition; v0
  also has no GenerationId and MemberId. Their responses are v2's.
* CreateTopicsRequest v1 is v2, v0 v2 without ValidateOnly; CreateTopicsResponse v1 is v2 without
  ThrottleTimeMs, v0 also without a topic's ErrorMessage.
* DeleteTopicsRequest v0 is v1; DeleteTopicsResponse v0 is v1 without ThrottleTimeMs.
* OffsetForLeaderEpochRequest v0-1 are v2 without CurrentLeaderEpoch; the response v1 is v2 without
  ThrottleTimeMs, v0 also without a partition's LeaderEpoch.
* WriteTxnMarkers v0 is v1 before flexible versions (classic strings and arrays, no tagged fields,
  request header v1 and response header v0).
* DescribeConfigsRequest v0 is v1 without IncludeSynonyms; in its response a config has IsDefault
  after ReadOnly instead of ConfigSource, and no Synonyms.
(OffsetFetch v0 is v1 on the wire both ways: shim.protocol.messages.SAME_WIRE_AS.)

And requests whose kio class cannot hold every value Kafka accepts: the delegation-token APIs'
periods (CreateDelegationToken, Renew, Expire), read as plain int64 milliseconds.
"""

from __future__ import annotations

import dataclasses
import functools
import operator
import types
import typing
from types import ModuleType

from kio.index import load_payload_module
from kio.schema.request_header.v1.header import RequestHeader as ClassicRequestHeader
from kio.schema.response_header.v0.header import ResponseHeader as ClassicResponseHeader
from kio.static.constants import EntityType
from kio.static.primitive import i16, i32, i64


def _derive(cls, version: int, drop=(), replace=None, add=(), name=None, plain=(), flexible=True):
    """A copy of kio entity ``cls`` for ``version``: fields dropped, retyped (``replace``: name ->
    new type), read as plain int64 (``plain``) or added after a named field (``add``: (after, name,
    type, kafka_type)); ``flexible=False``: a version before the API's flexible ones."""
    replace = {**(replace or {}), **dict.fromkeys(plain, i64)}
    spec = []
    for f in dataclasses.fields(cls):
        if f.name in drop:
            continue
        kwargs = {"metadata": {**f.metadata, "kafka_type": "int64"} if f.name in plain else f.metadata}
        if f.default is not dataclasses.MISSING:
            kwargs["default"] = f.default
        spec.append((f.name, replace.get(f.name, f.type), dataclasses.field(**kwargs)))
        for after, new, typ, kafka_type in add:
            if after == f.name:
                spec.append((new, typ, dataclasses.field(metadata={"kafka_type": kafka_type})))
    namespace = {k: getattr(cls, k) for k in ("__type__", "__flexible__", "__api_key__", "__header_schema__")}
    namespace["__version__"] = i16(version)
    if not flexible:
        assert not any("tag" in f.metadata for f in dataclasses.fields(cls)), "tagged fields need flexible versions"
        namespace["__flexible__"] = False
        namespace["__header_schema__"] = (ClassicRequestHeader if cls.__header_schema__.__name__ == "RequestHeader"
                                          else ClassicResponseHeader)
    # fields with defaults may not precede ones without in a dataclass; kio builds keyword-only ones
    return dataclasses.make_dataclass(name or cls.__name__, spec, namespace=namespace, frozen=True, slots=True,
                                      kw_only=True)


def _module(name: str, **classes) -> ModuleType:
    m = ModuleType(name)
    vars(m).update(classes)
    return m


def _produce(version: int, kind: EntityType) -> ModuleType:
    if kind is EntityType.request:
        v3 = load_payload_module(0, 3, EntityType.request)
        return _module(f"produce_v{version}_request", ProduceRequest=_derive(v3.ProduceRequest, version, ("transactional_id",)),
                       TopicProduceData=v3.TopicProduceData, PartitionProduceData=v3.PartitionProduceData)
    v3 = load_payload_module(0, 3, EntityType.response)
    if version == 2:
        return v3
    part = _derive(v3.PartitionProduceResponse, version, ("log_append_time",))
    topic = _derive(v3.TopicProduceResponse, version, replace={"partition_responses": tuple[part, ...]})
    top = _derive(v3.ProduceResponse, version, () if version else ("throttle_time",), {"responses": tuple[topic, ...]})
    return _module(f"produce_v{version}_response", ProduceResponse=top, TopicProduceResponse=topic,
                   PartitionProduceResponse=part)


def _fetch(version: int, kind: EntityType) -> ModuleType:
    v4 = load_payload_module(1, 4, EntityType(kind))
    if kind is EntityType.request:
        drop = ("isolation_level",) if version == 3 else ("isolation_level", "max_bytes")
        return _module(f"fetch_v{version}_request", FetchRequest=_derive(v4.FetchRequest, version, drop),
                       FetchTopic=v4.FetchTopic, FetchPartition=v4.FetchPartition)
    part = _derive(v4.PartitionData, version, ("last_stable_offset", "aborted_transactions"))
    topic = _derive(v4.FetchableTopicResponse, version, replace={"partitions": tuple[part, ...]})
    top = _derive(v4.FetchResponse, version, () if version else ("throttle_time",), {"responses": tuple[topic, ...]})
    return _module(f"fetch_v{version}_response", FetchResponse=top, FetchableTopicResponse=topic, PartitionData=part)


def _list_offsets(kind: EntityType) -> ModuleType:
    v1 = load_payload_module(2, 1, EntityType(kind))
    if kind is EntityType.request:
        part = _derive(v1.ListOffsetsPartition, 0, add=(("timestamp", "max_num_offsets", i32, "int32"),))
        topic = _derive(v1.ListOffsetsTopic, 0, replace={"partitions": tuple[part, ...]})
        top = _derive(v1.ListOffsetsRequest, 0, replace={"topics": tuple[topic, ...]})
        return _module("list_offsets_v0_request", ListOffsetsRequest=top, ListOffsetsTopic=topic,
                       ListOffsetsPartition=part)
    part = _derive(v1.ListOffsetsPartitionResponse, 0, ("timestamp", "offset"),
                   add=(("error_code", "old_style_offsets", tuple[i64, ...], "int64"),))
    topic = _derive(v1.ListOffsetsTopicResponse, 0, replace={"partitions": tuple[part, ...]})
    top = _derive(v1.ListOffsetsResponse, 0, ("throttle_time",), {"topics": tuple[topic, ...]})
    return _module("list_offsets_v0_response", ListOffsetsResponse=top, ListOffsetsTopicResponse=topic,
                   ListOffsetsPartitionResponse=part)


def _offset_commit(version: int, kind: EntityType) -> ModuleType:
    """OffsetCommit v0-1 (Kafka 3.9; 4.0 removed them, KIP-896): v2 without RetentionTimeMs, v1 with
    a CommitTimestamp after each partition's CommittedOffset, v0 also without the generation and
    member id. The responses are v2's."""
    v2 = load_payload_module(8, 2, kind)
    if kind is EntityType.response:
        return v2
    add = (("committed_offset", "commit_timestamp", i64, "int64"),) if version == 1 else ()
    part = _derive(v2.OffsetCommitRequestPartition, version, add=add)
    topic = _derive(v2.OffsetCommitRequestTopic, version, replace={"partitions": tuple[part, ...]})
    drop = ("retention_time",) if version == 1 else ("retention_time", "generation_id_or_member_epoch", "member_id")
    top = _derive(v2.OffsetCommitRequest, version, drop, {"topics": tuple[topic, ...]})
    return _module(f"offset_commit_v{version}_request", OffsetCommitRequest=top, OffsetCommitRequestTopic=topic,
                   OffsetCommitRequestPartition=part)


def _token_period(key: int, version: int, field: str, request: str):
    """The delegation-token APIs' periods in milliseconds as plain int64: kio reads them as
    timedelta, which cannot hold the Long.MAX_VALUE a Java client may send (a Kafka broker takes
    any value: it only compares it with its own maximum). v0 is v1 on the wire."""
    def build(kind: EntityType) -> ModuleType:
        kio_module = load_payload_module(key, max(version, 1), kind)
        if kind is EntityType.response:
            return kio_module
        classes = {k: v for k, v in vars(kio_module).items() if isinstance(v, type) and hasattr(v, "__type__")}
        classes[request] = _derive(classes[request], version, plain=(field,))
        return _module(f"{kio_module.__name__}_plain_ms", **classes)
    return build


def _acls_v0(key: int):
    """DescribeAcls, CreateAcls and DeleteAcls v0 (Kafka 3.9; 4.0 removed them): v1 without the
    pattern type fields, since v0 knows only LITERAL patterns."""
    # entity -> (field dropped, or the field holding the derived child entity and that child's name)
    shapes = {
        (29, EntityType.request): [("DescribeAclsRequest", "pattern_type_filter", None)],
        (29, EntityType.response): [("DescribeAclsResource", "pattern_type", None),
                                    ("DescribeAclsResponse", "resources", "DescribeAclsResource")],
        (30, EntityType.request): [("AclCreation", "resource_pattern_type", None),
                                   ("CreateAclsRequest", "creations", "AclCreation")],
        (30, EntityType.response): [],
        (31, EntityType.request): [("DeleteAclsFilter", "pattern_type_filter", None),
                                   ("DeleteAclsRequest", "filters", "DeleteAclsFilter")],
        (31, EntityType.response): [("DeleteAclsMatchingAcl", "pattern_type", None),
                                    ("DeleteAclsFilterResult", "matching_acls", "DeleteAclsMatchingAcl"),
                                    ("DeleteAclsResponse", "filter_results", "DeleteAclsFilterResult")],
    }

    def build(kind: EntityType) -> ModuleType:
        v1 = load_payload_module(key, 1, kind)
        classes = {k: v for k, v in vars(v1).items() if isinstance(v, type) and hasattr(v, "__type__")}
        for entity, field, child in shapes[(key, kind)]:
            if child is None:
                classes[entity] = _derive(classes[entity], 0, (field,))
            else:
                classes[entity] = _derive(classes[entity], 0, replace={field: tuple[classes[child], ...]})
        return _module(f"{v1.__name__}_v0", **classes)
    return build


def _retarget(typ, derived: dict):
    """``typ`` with every entity in ``derived`` (original -> copy) replaced by its copy."""
    if typ in derived:
        return derived[typ]
    args = typing.get_args(typ)
    if typing.get_origin(typ) is tuple:
        return tuple[_retarget(args[0], derived), ...]
    if isinstance(typ, types.UnionType):  # an optional entity: X | None
        return functools.reduce(operator.or_, (_retarget(a, derived) for a in args))
    return typ


def _as_version(key: int, base: int, version: int, changes=None, flexible=True):
    """Builder of kio's request or response module of API ``key`` at ``base`` as ``version``: every
    entity copied, those named in ``changes`` ((kind, entity name) -> _derive's keyword arguments)
    changed, and each holder of a copy pointed at the copy."""
    changes = changes or {}

    def build(kind: EntityType) -> ModuleType:
        source = load_payload_module(key, base, kind)
        derived: dict = {}
        # kio defines each nested entity before the entities that hold it
        for cls in (v for v in vars(source).values() if isinstance(v, type) and v.__module__ == source.__name__):
            kwargs = dict(changes.get((kind, cls.__name__), {}))
            kwargs["replace"] = {f.name: new for f in dataclasses.fields(cls)
                                 if (new := _retarget(f.type, derived)) != f.type}
            derived[cls] = _derive(cls, version, flexible=flexible, **kwargs)
        return _module(f"{source.__name__}_as_v{version}", **{c.__name__: d for c, d in derived.items()})
    return build


REQ, RESP = EntityType.request, EntityType.response
_NO_THROTTLE = {"drop": ("throttle_time",)}
# Kafka 3.9's lowest versions of these APIs, which kio lacks (4.0 removed them): a neighbour kio
# has, with the changes Kafka's JSON schemas list
_LOWER = {
    (19, 1): _as_version(19, 2, 1, {(RESP, "CreateTopicsResponse"): _NO_THROTTLE}),
    (19, 0): _as_version(19, 2, 0, {(REQ, "CreateTopicsRequest"): {"drop": ("validate_only",)},
                                    (RESP, "CreateTopicsResponse"): _NO_THROTTLE,
                                    (RESP, "CreatableTopicResult"): {"drop": ("error_message",)}}),
    (20, 0): _as_version(20, 1, 0, {(RESP, "DeleteTopicsResponse"): _NO_THROTTLE}),
    (23, 1): _as_version(23, 2, 1, {(REQ, "OffsetForLeaderPartition"): {"drop": ("current_leader_epoch",)},
                                    (RESP, "OffsetForLeaderEpochResponse"): _NO_THROTTLE}),
    (23, 0): _as_version(23, 2, 0, {(REQ, "OffsetForLeaderPartition"): {"drop": ("current_leader_epoch",)},
                                    (RESP, "OffsetForLeaderEpochResponse"): _NO_THROTTLE,
                                    (RESP, "EpochEndOffset"): {"drop": ("leader_epoch",)}}),
    (27, 0): _as_version(27, 1, 0, flexible=False),
    (32, 0): _as_version(32, 1, 0, {
        (REQ, "DescribeConfigsRequest"): {"drop": ("include_synonyms",)},
        (RESP, "DescribeConfigsResourceResult"): {"drop": ("config_source", "synonyms"),
                                                  "add": (("read_only", "is_default", bool, "bool"),)}}),
}

# (api key, version) -> builder of the request or response module
LEGACY = {
    **{(key, 0): _acls_v0(key) for key in (29, 30, 31)},
    **{(38, v): _token_period(38, v, "max_lifetime", "CreateDelegationTokenRequest") for v in range(4)},
    **{(39, v): _token_period(39, v, "renew_period", "RenewDelegationTokenRequest") for v in range(3)},
    **{(40, v): _token_period(40, v, "expiry_time_period", "ExpireDelegationTokenRequest") for v in range(3)},
    **{(0, v): (lambda kind, v=v: _produce(v, kind)) for v in range(3)},
    **{(1, v): (lambda kind, v=v: _fetch(v, kind)) for v in range(4)},
    (2, 0): _list_offsets,
    **{(8, v): (lambda kind, v=v: _offset_commit(v, kind)) for v in range(2)},
    **_LOWER,
}

__all__ = ["LEGACY"]
