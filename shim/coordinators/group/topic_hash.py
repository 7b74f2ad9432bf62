"""The metadata hash a consumer or share group keeps of its subscribed topics (KIP-1101, Kafka 4.1:
the MetadataHash of ConsumerGroupMetadata and ShareGroupMetadata).

The group epoch moves on when the hash of the subscribed topics differs from the one last written:
a topic made, deleted or made again (a new topic id), grown, or one of its partitions' racks (the
``broker.rack`` of each replica's broker, sorted) changed. It is written with the group epoch
and read back at start-up, so a topic that changed while the group was not looking (a restart in
between) still moves the epoch at the group's next heartbeat. Kafka hashes with XXH3 (hash4j);
kafka-shim's hash is its own: no client or admin API reads it, and a hash that differs only means
one more epoch.
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Callable, Sequence

TopicMeta = dict[str, tuple[uuid.UUID, int]]  # subscribed topic name -> (topic id, partitions)
Racks = Callable[[str, int], Sequence[str]]  # (topic, partition) -> the racks of its replicas' brokers


def metadata_hash(meta: TopicMeta, racks: Racks | None = None) -> int:
    """A hash of the subscribed topics' names, ids, partition counts and partition racks (Kafka 4.1:
    Utils.computeTopicHash, KIP-1101); 0 for none, as Kafka's. Racks count once per replica, sorted,
    as KRaftCoordinatorMetadataImage.partitionRacks lists them; without any rack a topic hashes as
    it did before racks were hashed."""
    if not meta:
        return 0
    text = ";".join(_topic(name, tid, n, racks) for name, (tid, n) in sorted(meta.items()))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def _topic(name: str, topic_id, partitions: int, racks: Racks | None) -> str:
    text = f"{name}:{topic_id}:{partitions}"
    per = [sorted(racks(name, p)) for p in range(partitions)] if racks is not None else []
    if any(per):  # each rack length-prefixed: rack names may hold any character (as Kafka's hash does)
        text += "|" + "".join(f"{p}:{len(rs)}:" + "".join(f"{len(r)}:{r}" for r in rs) for p, rs in enumerate(per))
    return text
