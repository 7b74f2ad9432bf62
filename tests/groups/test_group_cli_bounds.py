"""``kafka-shim serve --group-min-session-timeout-ms``: the bound reaches the group coordinator
(Kafka's group.min.session.timeout.ms; its own test brokers often lower it to 1 s)."""

from __future__ import annotations

from group_helpers import E, join
from shim.cli import _parser, config_from_args


def _config(*flags: str):
    return config_from_args(_parser().parse_args(["serve", "--data-dir", "unused", *flags]))


def test_the_default_is_kafkas_six_seconds(nodes):
    gc = nodes(group_min_session_timeout_ms=_config().group_min_session_timeout_ms).groups
    assert join(gc, session=5_999).result.error == E.invalid_session_timeout
    assert join(gc, session=6_000).result.error == E.none


def test_a_lower_bound_from_the_command_line_admits_shorter_sessions(nodes):
    gc = nodes(group_min_session_timeout_ms=_config("--group-min-session-timeout-ms", "1000")
               .group_min_session_timeout_ms).groups
    assert join(gc, session=3_000).result.error == E.none
    assert join(gc, group="h", session=999).result.error == E.invalid_session_timeout
