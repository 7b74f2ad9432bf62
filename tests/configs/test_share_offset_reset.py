"""share.auto.offset.reset's values (KIP-1106): java.time.Duration.parse as Kafka 4.1's
ShareGroupAutoOffsetResetStrategy reads ``by_duration:``, and Kafka's messages under 4.0 and 4.1.
The durations' answers are OpenJDK 17's Duration.parse."""

from __future__ import annotations

import pytest

from shim.configs.offset_reset import ShareAutoOffsetReset, parse_duration, validate

S = 10**9
NAME = "share.auto.offset.reset"


@pytest.mark.parametrize("text, nanos", [
    ("PT1H", 3600 * S),
    ("P2D", 2 * 86400 * S),
    ("P1DT2H3M4.5S", (86400 + 7200 + 180 + 4) * S + S // 2),
    ("pt15m", 900 * S),  # letters in either case
    ("PT0S", 0),
    ("-PT0S", 0),  # negated zero is not negative
    ("PT1.S", S),  # an empty fraction
    ("PT0,000000001S", 1),  # a comma, nine fraction digits
    ("PT-0.5S", -S // 2),  # the fraction takes the seconds' sign
    ("PT+3M", 180 * S),
    ("-PT1H", -3600 * S),
    ("PT1H-30M", 1800 * S),  # each section signed on its own
    ("P1Dt", 86400 * S),  # Java refuses a bare upper-case T only
    ("PT-9223372036854775808S", -2**63 * S),  # a long's range, to the end
    ("-PT9223372036854775807.999999999S", -2**63 * S + 1),
])
def test_durations_java_parses(text, nanos):
    assert parse_duration(text) == nanos


@pytest.mark.parametrize("text", [
    "", "P", "PT", "P1DT", "1H", "PT1H ", " PT1H", "P1W", "P1Y", "P1M", "PT1.0000000001S",
    "PT1_0S", "PT١S",  # ASCII digits only
    f"PT{2**63}S",  # not a long
    f"P{2**63 // 86400 + 1}D",  # days times 86400 overflow
    f"PT{2**63 - 1}S1M",  # not the pattern (sections in order)
    "-PT-9223372036854775808S",  # negated, no longer a long
    "PT-9223372036854775808.5S",  # the fraction takes the seconds past a long
])
def test_durations_java_refuses(text):
    with pytest.raises(ValueError):
        parse_duration(text)


def test_sections_that_overflow_a_long_together_are_refused():
    with pytest.raises(ValueError):
        parse_duration(f"PT{2**63 // 3600}H{2**63 // 60}M")


@pytest.mark.parametrize("value, expected", [
    ("latest", ShareAutoOffsetReset("latest")),
    ("earliest", ShareAutoOffsetReset("earliest")),
    ("by_duration:PT1H", ShareAutoOffsetReset("by_duration", 3600 * S)),
])
def test_strategies(value, expected):
    assert ShareAutoOffsetReset.parse(value) == expected


@pytest.mark.parametrize("value", ["none", "by_duration", "by_duration:", "by_duration:-PT1H", "BY_DURATION:PT1H",
                                   "Latest", "by_duration:PT1H:", "by_duration: PT1H"])
def test_strategies_kafka_refuses(value):
    with pytest.raises(ValueError):
        ShareAutoOffsetReset.parse(value)


def test_the_timestamp_is_now_minus_the_duration_floored_to_a_millisecond():
    assert ShareAutoOffsetReset.parse("by_duration:PT1H").timestamp(10_000_000) == 10_000_000 - 3_600_000
    assert ShareAutoOffsetReset.parse("by_duration:PT0.0005S").timestamp(1000) == 999


def test_kafka_4_1_message():
    with pytest.raises(ValueError) as e:
        validate(NAME, "by_duration:-PT1H", "4.1")
    assert str(e.value) == (
        "Invalid value by_duration:-PT1H for configuration share.auto.offset.reset: Invalid value "
        "`by_duration:-PT1H` for configuration share.auto.offset.reset. The value must be either 'earliest', "
        "'latest' or of the format 'by_duration:<PnDTnHnMn.nS>'.")
    assert validate(NAME, "by_duration:P1D", "4.1") == "by_duration:P1D"


def test_kafka_4_0_knows_only_latest_and_earliest():
    with pytest.raises(ValueError) as e:
        validate(NAME, "by_duration:PT1H", "4.0")
    assert str(e.value) == ("Invalid value by_duration:PT1H for configuration share.auto.offset.reset: "
                            "String must be one of: latest, earliest")
    assert validate(NAME, "earliest", "4.0") == "earliest"


@pytest.mark.parametrize("duration, message", [
    (f"PT{2**63 - 1}S", "Instant exceeds minimum or maximum instant"),
    (f"PT{2**63 // 1000 + 2 * 10**9}S", "long overflow"),  # an Instant, but not in milliseconds
])
def test_a_timestamp_java_cannot_hold(duration, message):
    with pytest.raises(ArithmeticError, match=message):
        ShareAutoOffsetReset.parse(f"by_duration:{duration}").timestamp(1_800_000_000_000)
