"""Which internal partition owns a key: ``Utils.abs(key.hashCode()) % partitions`` as Kafka computes
it (Java String.hashCode over UTF-16 code units; Utils.abs negates a negative hash and maps
Integer.MIN_VALUE to 0) -- for groups in __consumer_offsets, transactional ids in
__transaction_state and share-partition keys in __share_group_state.

Data directories written by earlier kafka-shim versions masked the hash (``hashCode & 0x7fffffff``) instead, which
differs for every negative hash; :func:`legacy_partition_for` names that placement so start-up can
replay a key's older records from it before those of its Kafka partition (:func:`replay_phase`).
"""

from __future__ import annotations

LEGACY, CURRENT = 0, 1  # replay phases: a key's legacy-partition records go before all others


def java_string_hash(s: str, h: int = 0) -> int:
    """String.hashCode as an unsigned 32-bit value; ``h``: the hash of a prefix ``s`` follows."""
    data = s.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h


def partition_for(key: str, partitions: int) -> int:
    """``Utils.abs(key.hashCode()) % partitions`` (Kafka: GroupMetadataManager.partitionFor,
    TransactionStateManager.partitionFor, ShareCoordinatorService.partitionFor)."""
    return partition_of_hash(java_string_hash(key), partitions)


def partition_of_hash(h: int, partitions: int) -> int:
    """``Utils.abs(hash) % partitions`` of an unsigned 32-bit String.hashCode."""
    signed = h - (1 << 32) if h & 0x80000000 else h
    return (0 if signed == -(1 << 31) else abs(signed)) % partitions


def legacy_partition_for(key: str, partitions: int) -> int:
    """Where older data directories placed ``key``: the masked hash."""
    return (java_string_hash(key) & 0x7FFFFFFF) % partitions


def legacy_partition(key: str, partitions: int) -> int | None:
    """The legacy partition of ``key`` when it differs from its Kafka partition, else None."""
    legacy = legacy_partition_for(key, partitions)
    return None if legacy == partition_for(key, partitions) else legacy


def replay_phase(key: str, partition: int, partitions: int) -> int:
    """LEGACY for a record of ``key`` found in its legacy partition, CURRENT for any other."""
    return LEGACY if legacy_partition(key, partitions) == partition else CURRENT
