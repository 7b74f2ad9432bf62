"""What an injected error looks like on the wire, and what a request names.

An injected error answers the request without applying it, as a broker that refused it would
(Kafka: ``AbstractRequest.getErrorResponse``): the response mirrors the request's topics,
partitions, groups or coordinator keys, each carrying the error; every other field is Kafka's
"unknown" value (-1 offsets and ids, empty strings and lists). The code sits in the innermost
error fields and at the top, except the top of a Fetch (a top-level Fetch error is a fetch-session
error to the clients, which is not what a refused partition is). OffsetFetch answers a coordinator
error at the top alone, with no partitions, as Kafka does.

The same walk finds the topic-partitions and ids a request names, for the fault filters.
"""

from __future__ import annotations

import dataclasses
import functools
import typing
import uuid
from typing import Any, Iterator

from ..errors import ErrorCode
from ..protocol.messages import make, response_class

# response list field -> the request list fields it answers, in the order they are tried
LIST_ALIASES = {
    "responses": ("topic_data", "topics"),
    "partition_responses": ("partition_data",),
    "partitions": ("partitions", "partition_data", "partition_indexes"),
    "results_by_topic_v3_and_below": ("v3_and_below_topics",),
    "results_by_transaction": ("transactions",),
    "topic_results": ("topics",),
    "results_by_partition": ("partitions",),
    "coordinators": ("coordinator_keys",),
    "groups": ("groups",),
    "topics": ("topics",),
    "members": ("members",),
    "results": ("groups_names",),  # DeleteGroups
    "transaction_states": ("transactional_ids",),  # DescribeTransactions
}
# response scalar field -> the request fields (or, for a bare element, the role) it copies
SCALAR_ALIASES = {
    "name": ("name", "topic"),
    "topic": ("topic", "name"),
    "topic_id": ("topic_id",),
    "partition_index": ("partition_index", "partition", "index"),
    "index": ("index", "partition_index", "partition"),
    "partition": ("partition", "partition_index", "index"),
    "key": ("key",),
    "group_id": ("group_id",),
    "transactional_id": ("transactional_id", "v3_and_below_transactional_id"),
    "member_id": ("member_id",),
    "group_instance_id": ("group_instance_id",),
}
TOP_LEVEL_ERRORS = {9}  # OffsetFetch: Kafka answers a coordinator error at the top, partitions empty
NO_TOP_LEVEL_ERROR = {1}  # Fetch: the error goes to the partitions, the session stays
_ZERO_INT = {"throttle_time", "session_id"}


def error_response(api_key: int, version: int, request: Any, code: ErrorCode) -> Any:
    cls = response_class(api_key, version)
    if api_key in TOP_LEVEL_ERRORS:
        return _build(cls, None, code, top=True)
    return _build(cls, request, code, top=True, quiet_top=api_key in NO_TOP_LEVEL_ERROR)


def _build(cls: type, source: Any, code: ErrorCode, *, top: bool = False, quiet_top: bool = False) -> Any:
    fields = {}
    for f in dataclasses.fields(cls):
        hint = _hints(cls)[f.name]
        if f.metadata.get("kafka_type") == "error_code" or f.name.endswith("_error_code"):  # ShareFetch's ack error
            fields[f.name] = ErrorCode.none if (top and quiet_top) else code
        elif (element := _list_element(hint)) is not None:
            items = _source_list(source, f.name)
            fields[f.name] = tuple(_build(element, item, code) for item in items) if _is_entity(element) else ()
        elif _is_entity(hint):  # a nested struct such as ShareFetch's CurrentLeader: its unknown values
            fields[f.name] = _build(hint, None, code)
        else:
            value = _copied(source, f.name)
            if value is _MISSING or (value is None and type(None) not in typing.get_args(hint)):
                value = _zero(f, hint)
            fields[f.name] = value
    return make(cls, **fields)


_MISSING = object()


def _copied(source: Any, name: str) -> Any:
    if source is None:
        return _MISSING
    if not dataclasses.is_dataclass(source):  # a bare partition index or coordinator key
        roles = ({"partition_index", "index", "partition"} if isinstance(source, int)
                 else {"key", "group_id", "transactional_id"})
        return source if name in roles else _MISSING
    for alias in SCALAR_ALIASES.get(name, ()):
        if hasattr(source, alias):
            return getattr(source, alias)
    return _MISSING


def _source_list(source: Any, name: str) -> tuple:
    if source is None or not dataclasses.is_dataclass(source):
        return ()
    for alias in LIST_ALIASES.get(name, (name,)):
        value = getattr(source, alias, None)
        if isinstance(value, tuple):
            return value
    return ()


def _zero(f: dataclasses.Field, hint: Any) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    kind = f.metadata.get("kafka_type")
    if type(None) in typing.get_args(hint):
        return None
    if kind in ("timedelta_i32", "timedelta_i64", "datetime_i64") or f.name in _ZERO_INT:
        return 0  # a timestamp the protocol cannot carry as -1 is the epoch
    if kind in ("int8", "int16", "int32", "int64"):
        return -1
    if kind == "string":
        return ""
    if kind in ("bytes", "records"):
        return b""
    if kind == "bool":
        return False
    if kind == "uuid":
        return uuid.UUID(int=0)
    return None


@functools.cache
def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls)


def _list_element(hint: Any) -> type | None:
    if typing.get_origin(hint) is tuple:
        return typing.get_args(hint)[0]
    return None


def _is_entity(cls: Any) -> bool:
    return isinstance(cls, type) and dataclasses.is_dataclass(cls)


# -- what a request names (for the filters) -------------------------------------------------


def topic_partitions(request: Any) -> Iterator[tuple[str | None, int | None]]:
    """Every (topic, partition) the request names; (topic, None) for a topic without partitions."""
    return (tp for tp in walk_topic_partitions(request) if tp is not None)


def walk_topic_partitions(request: Any) -> Iterator[tuple[str | None, int | None] | None]:
    """:func:`topic_partitions`, and None for each entity walked: a caller that paces itself per
    item (shim.apis._pace) is never held long by a request that names no topic."""
    yield from _walk_tp(request, None)


def _walk_tp(entity: Any, topic: str | None) -> Iterator[tuple[str | None, int | None] | None]:
    yield None
    name = next((getattr(entity, a) for a in ("name", "topic") if isinstance(getattr(entity, a, None), str)), None)
    topic = name if name is not None else topic
    found = False
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if not isinstance(value, tuple) or not value:
            continue
        if f.name == "partition_indexes":
            found = True
            yield from ((topic, p) for p in value)
        elif dataclasses.is_dataclass(value[0]):
            for item in value:
                part = _partition_of(item)
                found = True
                if part is not None:
                    yield topic, part
                else:
                    yield from _walk_tp(item, topic)
    if not found and name is not None:
        yield topic, None


def _partition_of(entity: Any) -> int | None:
    for a in ("partition_index", "partition", "index"):
        value = getattr(entity, a, None)
        if isinstance(value, int):
            return value
    return None


def named_ids(request: Any, field: str) -> set[str]:
    """The values of ``field`` (transactional_id, group_id) anywhere in the request."""
    return {i for i in walk_named_ids(request, field) if i is not None}


def walk_named_ids(request: Any, field: str) -> Iterator[str | None]:
    """:func:`named_ids` one by one (repeats included), and None for each entity walked."""
    yield from _collect(request, field)
    if field == "transactional_id":
        yield from _collect(request, "v3_and_below_transactional_id")
    key = getattr(request, "key", None)  # FindCoordinator v0-3 names its group or transactional id as key
    yield from [key] if isinstance(key, str) else getattr(request, "coordinator_keys", ())


def _collect(entity: Any, field: str) -> Iterator[str | None]:
    yield None
    value = getattr(entity, field, None)
    if isinstance(value, str):
        yield value
    for f in dataclasses.fields(entity):
        items = getattr(entity, f.name)
        if isinstance(items, tuple) and items and dataclasses.is_dataclass(items[0]):
            for item in items:
                yield from _collect(item, field)


def error_codes(response: Any) -> Iterator[ErrorCode]:
    """Every error code in a response (for the request log)."""
    if response is None or not dataclasses.is_dataclass(response):
        return
    for f in dataclasses.fields(response):
        value = getattr(response, f.name)
        if isinstance(value, ErrorCode):
            yield value
        elif isinstance(value, tuple) and value and dataclasses.is_dataclass(value[0]):
            for item in value:
                yield from error_codes(item)
