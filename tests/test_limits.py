"""Sans-IO tests of the connection quotas (shim.limits), Kafka's ConnectionQuotas semantics."""

from __future__ import annotations

import pytest

from shim.limits import ConnectionQuotas, parse_overrides


def test_per_ip_limit_refuses_without_counting_and_dec_frees_the_slot():
    q = ConnectionQuotas(max_per_ip=2)
    assert q.inc("10.0.0.1") and q.inc("10.0.0.1")
    assert not q.inc("10.0.0.1")
    assert q.inc("10.0.0.2")
    assert (q.total, q.counts) == (3, {"10.0.0.1": 2, "10.0.0.2": 1})
    q.dec("10.0.0.1")
    assert q.inc("10.0.0.1")


def test_max_connections_is_a_slot_check_before_accepting():
    q = ConnectionQuotas(max_connections=2)
    assert q.slot_available()
    q.inc("10.0.0.1"), q.inc("10.0.0.2")
    assert not q.slot_available()
    q.dec("10.0.0.2")
    assert q.slot_available()


def test_overrides_parse_host_names_and_apply_to_ipv4_mapped_peers():
    assert parse_overrides(" 10.0.0.7:0 ,[::1]:3,") == {"10.0.0.7": 0, "::1": 3}
    (resolved,) = parse_overrides("localhost:5").items()
    assert resolved in (("127.0.0.1", 5), ("::1", 5))
    q = ConnectionQuotas(max_per_ip=1, overrides={"10.0.0.7": 0, "10.0.0.8": 3})
    assert not q.inc("::ffff:10.0.0.7")  # a dual-stack listener's view of an IPv4 client
    assert q.inc("10.0.0.8") and q.inc("::ffff:10.0.0.8") and q.inc("10.0.0.8")
    assert not q.inc("10.0.0.8")


@pytest.mark.parametrize("text", ["10.0.0.1", "10.0.0.1:x", ":5", "no-such-host.invalid:5"])
def test_malformed_overrides_are_refused(text):
    with pytest.raises(ValueError, match="max.connections.per.ip.overrides"):
        parse_overrides(text)
