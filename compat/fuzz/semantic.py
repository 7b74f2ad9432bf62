"""Schema-aware mutation: well-formed requests with hostile values, built with kio's own classes.

Byte mutations mostly make frames the length checker refuses; these keep the structure and
change what the handlers see: a recorded request is parsed by kio, one to three of its fields
(found by walking the dataclasses, nested entities included) get boundary numbers, odd strings,
emptied or repeated arrays, and it is encoded again. The canary's topic is never named.
"""

from __future__ import annotations

import dataclasses
import datetime
import random

from kio.serial._introspect import classify_field, get_field_tag

from shim.apis import REGISTRY
from shim.protocol.framing import FrameError
from shim.protocol.messages import decode_request, encode_request, peek

BOUNDS = {"int8": 7, "int16": 15, "int32": 31, "int64": 63, "timedelta_i32": 31, "timedelta_i64": 63}
STRINGS = ("", " ", ".", "..", "a" * 249, "a" * 300, "é\u2603\U0001F600", "__consumer_offsets", "__transaction_state",
           "x/../../y", "t" * 32767)
MAX_REPEAT = 200  # array elements after a repeat: bounded so a case stays a small frame


def _number(rng: random.Random, bits: int) -> int:
    top = (1 << bits) - 1
    return rng.choice((-top - 1, -2, -1, 0, 1, 2, top, top - 1, 1 << (bits // 2), rng.randint(-top - 1, top)))


def _value(rng: random.Random, kafka_type: str | None, old):
    if kafka_type in BOUNDS:
        n = _number(rng, BOUNDS[kafka_type])
        if kafka_type.startswith("timedelta"):
            return datetime.timedelta(milliseconds=n)
        return type(old)(n) if isinstance(old, int) and not isinstance(old, bool) else n
    if kafka_type == "bool":
        return not old
    if kafka_type == "string":
        return rng.choice(STRINGS) if rng.random() < 0.8 else None
    if kafka_type in ("bytes", "records"):
        return rng.choice((b"", b"\x00" * 61, bytes(rng.getrandbits(8) for _ in range(rng.randint(1, 100))), old))
    return old


def _array(rng: random.Random, old: tuple):
    if not old or rng.random() < 0.3:
        return () if rng.random() < 0.8 else None
    choice = rng.randrange(3)
    if choice == 0:
        return old + old
    if choice == 1:
        return old[:1] * rng.randint(2, MAX_REPEAT)
    return old[::-1]


def _mutate(rng: random.Random, entity, budget: list[int]):
    """A copy of ``entity`` with fields changed while ``budget[0]`` lasts (nested first-come)."""
    changes = {}
    fields = list(dataclasses.fields(entity))
    rng.shuffle(fields)
    for f in fields:
        if budget[0] <= 0:
            break
        old = getattr(entity, f.name)
        kind = classify_field(f)
        nested = getattr(kind, "type_", None)
        if kind.is_array and old and dataclasses.is_dataclass(nested) and rng.random() < 0.6:
            i = rng.randrange(len(old))
            changes[f.name] = old[:i] + (_mutate(rng, old[i], budget),) + old[i + 1:]
        elif not kind.is_array and dataclasses.is_dataclass(nested) and old is not None:
            changes[f.name] = _mutate(rng, old, budget)
        elif rng.random() < 0.3:
            budget[0] -= 1
            changes[f.name] = _array(rng, old or ()) if kind.is_array else _value(rng, f.metadata.get("kafka_type"), old)
            if get_field_tag(f) is not None and changes[f.name] is None:
                del changes[f.name]  # a tagged field is absent, not null
    return dataclasses.replace(entity, **changes)


def mutate(rng: random.Random, payload: bytes, forbidden: str) -> bytes | None:
    """``payload`` (a request) with one to three fields changed, or None if it is not well formed."""
    try:
        key, version, correlation_id = peek(payload)
        spec = REGISTRY.get(key)
        if spec is None or not spec.min_version <= version <= spec.max_version:
            return None
        header, request = decode_request(payload, key, version)
    except FrameError:
        return None
    for _ in range(8):
        try:
            changed = _mutate(rng, request, [rng.randint(1, 3)])
            out = encode_request(header, changed)
        except Exception:  # noqa: BLE001 - kio's writers refuse a value this field cannot take: draw again
            continue
        if forbidden.encode() not in out:
            return out
    return None
