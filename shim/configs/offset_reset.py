"""A share group's ``share.auto.offset.reset`` (KIP-932; ``by_duration:`` from Kafka 4.1, KIP-1106).

Kafka 4.1 validates the group config with ShareGroupAutoOffsetResetStrategy.Validator, which
delegates to kafka-clients' AutoOffsetResetStrategy.fromString: exactly ``latest`` or ``earliest``
(``none``, which consumers accept, is refused for share groups), or ``by_duration:`` followed by
an ISO-8601 duration as java.time.Duration.parse reads it (days, hours, minutes, seconds with up to
nine fraction digits; each number signed; a negative duration refused). Kafka 4.0 only accepts
``latest`` and ``earliest`` (GroupConfig's ``in(ShareGroupAutoOffsetReset)``).

A share partition initialized with no start offset begins, under ``by_duration``, at the offset
ListOffsets gives for the timestamp now minus the duration (SharePartition.startOffsetDuringInitialization,
ShareFetchUtils.offsetForTimestamp).
"""

from __future__ import annotations

import re
from typing import NamedTuple

LATEST, EARLIEST, BY_DURATION = "latest", "earliest", "by_duration"
_LONG_MIN, _LONG_MAX = -2**63, 2**63 - 1
_NANOS = 10**9
_INSTANT_MIN_SECOND = -31557014167219200  # java.time.Instant.MIN

# java.time.Duration's pattern (ASCII digits, letters in either case, the whole text)
_DURATION = re.compile(r"([-+]?)P(?:([-+]?[0-9]+)D)?"
                       r"(T(?:([-+]?[0-9]+)H)?(?:([-+]?[0-9]+)M)?(?:([-+]?[0-9]+)(?:[.,]([0-9]{0,9}))?S)?)?",
                       re.IGNORECASE | re.ASCII)


def _long(value: int) -> int:
    """Math.addExact / multiplyExact: a long, or ArithmeticException (ValueError here)."""
    if not _LONG_MIN <= value <= _LONG_MAX:
        raise ValueError("long overflow")
    return value


def parse_duration(text: str) -> int:
    """java.time.Duration.parse, in nanoseconds; ValueError where Java throws."""
    m = _DURATION.fullmatch(text)
    # "T" with no time section is refused; Java compares with an upper-case 'T' only
    if m is None or m.group(3) == "T" or not any(m.group(i) is not None for i in (2, 4, 5, 6)):
        raise ValueError(f"Text cannot be parsed to a Duration: {text}")
    seconds = 0
    for group, unit in ((6, 1), (5, 60), (4, 3600), (2, 86400)):  # addExact from the seconds outwards
        if m.group(group) is not None:
            seconds = _long(seconds + _long(_long(int(m.group(group))) * unit))
    fraction = m.group(7) or ""
    nanos = int(fraction.ljust(9, "0")) if fraction else 0
    if m.group(6) is not None and m.group(6).startswith("-"):
        nanos = -nanos
    seconds = _long(seconds + nanos // _NANOS)  # Duration.ofSeconds(seconds, nanoAdjustment)
    total = seconds * _NANOS + nanos % _NANOS
    if m.group(1) == "-":
        total = -total
        _long(total // _NANOS)  # Duration.negated: the seconds must still be a long
    return total


class ShareAutoOffsetReset(NamedTuple):
    strategy: str  # LATEST, EARLIEST or BY_DURATION
    duration_ns: int = 0

    @classmethod
    def parse(cls, value: str) -> ShareAutoOffsetReset:
        """ShareGroupAutoOffsetResetStrategy.fromString; ValueError for what it refuses."""
        if value in (LATEST, EARLIEST):
            return cls(value)
        if value.startswith(BY_DURATION + ":"):
            duration = parse_duration(value[len(BY_DURATION) + 1:])
            if duration < 0:
                raise ValueError("Negative duration is not supported in by_duration offset reset strategy.")
            return cls(BY_DURATION, duration)
        raise ValueError(f"Unknown auto offset reset strategy: {value}")

    def timestamp(self, now_ms: int) -> int:
        """Instant.now().minus(duration).toEpochMilli(), with now at millisecond precision;
        ArithmeticError with Java's message where an Instant or its milliseconds cannot hold it
        (a duration of hundreds of millions of years)."""
        instant_ns = now_ms * 1_000_000 - self.duration_ns
        if instant_ns // _NANOS < _INSTANT_MIN_SECOND:
            raise ArithmeticError("Instant exceeds minimum or maximum instant")
        millis = instant_ns // 1_000_000
        if millis < _LONG_MIN:
            raise ArithmeticError("long overflow")
        return millis


def validate(name: str, value: str, release: str) -> str:
    """The config's parsed value, or ValueError carrying Kafka's message (ConfigException's text)."""
    if release < "4.1":
        if value not in (LATEST, EARLIEST):
            raise ValueError(f"Invalid value {value} for configuration {name}: String must be one of: latest, earliest")
        return value
    try:
        ShareAutoOffsetReset.parse(value)
    except ValueError:
        raise ValueError(f"Invalid value {value} for configuration {name}: Invalid value `{value}` for configuration "
                         f"{name}. The value must be either 'earliest', 'latest' or of the format "
                         f"'by_duration:<PnDTnHnMn.nS>'.") from None
    return value
