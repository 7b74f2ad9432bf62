"""Which internal partition owns a group, a transactional id or a share-partition key: Kafka's
``Utils.abs(key.hashCode()) % partitions`` (GroupMetadataManager.partitionFor,
TransactionStateManager.partitionFor), checked against Java's arithmetic reproduced here."""

from __future__ import annotations

import pytest
from hypothesis import given, strategies as st

from shim.coordinators.partitioning import legacy_partition, legacy_partition_for, partition_for

INT_MIN = -(1 << 31)


def java_int(x: int) -> int:
    """Java's int overflow: wrap to a signed 32-bit value."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def java_hash_code(s: str) -> int:
    """String.hashCode: s[0]*31^(n-1) + ... over UTF-16 code units, in int arithmetic."""
    units = s.encode("utf-16-le")
    h = 0
    for i in range(0, len(units), 2):
        h = java_int(31 * h + int.from_bytes(units[i:i + 2], "little"))
    return h


def kafka_partition(s: str, n: int) -> int:
    h = java_hash_code(s)
    utils_abs = 0 if h == INT_MIN else (-h if h < 0 else h)  # Math.abs(MIN_VALUE) would stay negative
    return utils_abs % n


def test_the_reference_reproduces_known_java_hash_codes():
    assert java_hash_code("") == 0
    assert java_hash_code("hello") == 99162322
    assert java_hash_code("my-group") == java_int(0x8E5D271E) == -1906497762
    assert java_hash_code("polygenelubricants") == INT_MIN


@pytest.mark.parametrize("key,n,expected", [
    ("orders-consumer", 50, 40),   # hashCode -1204742690: negated, not masked (masking gives 8)
    ("my-group", 50, 12),          # hashCode -1906497762
    ("payments", 50, 13),          # a positive hashCode: both give the same
    ("polygenelubricants", 50, 0),  # hashCode Integer.MIN_VALUE: Utils.abs maps it to 0
])
def test_known_keys_land_where_kafka_puts_them(key, n, expected):
    assert partition_for(key, n) == kafka_partition(key, n) == expected


def test_negative_hashes_differ_from_the_legacy_masked_placement():
    assert legacy_partition_for("orders-consumer", 50) == 8
    assert legacy_partition("orders-consumer", 50) == 8
    assert legacy_partition("payments", 50) is None
    assert legacy_partition("polygenelubricants", 50) is None


@given(st.text(max_size=40), st.integers(min_value=1, max_value=200))
def test_every_key_matches_kafka(key, n):
    # includes characters outside the BMP: hashCode runs over UTF-16 surrogate pairs
    assert partition_for(key, n) == kafka_partition(key, n)
