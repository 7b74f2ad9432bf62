"""Which internal partition owns a key: ``abs(key.hashCode()) % partitions`` as Kafka computes it
(Java String.hashCode over UTF-16 code units, Utils.abs = ``& 0x7fffffff``)."""

from __future__ import annotations


def java_string_hash(s: str) -> int:
    h = 0
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def partition_for(key: str, partitions: int) -> int:
    return (java_string_hash(key) & 0x7FFFFFFF) % partitions


def kafka_abs_partition_for(key: str, partitions: int) -> int:
    """``Utils.abs(key.hashCode()) % partitions`` exactly: Kafka's Utils.abs is Math.abs with
    Integer.MIN_VALUE mapped to 0, so a negative hash is negated (not masked) first
    (Kafka: ShareCoordinatorService.partitionFor)."""
    h = java_string_hash(key)
    signed = h - (1 << 32) if h & 0x80000000 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions
