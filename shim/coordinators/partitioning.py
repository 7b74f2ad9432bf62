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
