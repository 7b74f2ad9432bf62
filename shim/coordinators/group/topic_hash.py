"""The metadata hash a consumer or share group keeps of its subscribed topics (KIP-1101, Kafka 4.1:
the MetadataHash of ConsumerGroupMetadata and ShareGroupMetadata).

The group epoch moves on when the hash of the subscribed topics differs from the one last written:
a topic made, deleted or made again (a new topic id), grown, or one of its partitions' racks (the
``broker.rack`` of each replica's broker, sorted) changed. It is written with the group epoch
and read back at start-up, so a topic that changed while the group was not looking (a restart in
between) still moves the epoch at the group's next heartbeat. Kafka hashes with XXH3 (hash4j);
kafka-shim's hash is its own: no client or admin API reads it, and a hash that differs only means
one more epoch.

As in Kafka (GroupMetadataManager's topicHashCache, Utils.computeTopicHash and computeGroupHash),
each topic's part is computed once and kept (:class:`TopicHashes`); a group's hash combines the
kept parts of its topics, so a heartbeat costs a look-up per subscribed topic, not a walk of their
partitions. A kept part is dropped when its topic is deleted or its replicas are placed, and is not
trusted once the topic's id or partition count differs from the one it was computed with (the
topic made again, or grown).
"""

from __future__ import annotations

import hashlib
import uuid
from typing import Callable, Sequence

TopicMeta = dict[str, tuple[uuid.UUID, int]]  # subscribed topic name -> (topic id, partitions)
Racks = Callable[[str, int], Sequence[str]]  # (topic, partition) -> the racks of its replicas' brokers


class TopicHashes:
    """Each topic's part of the metadata hash, computed at first use and kept (Kafka:
    GroupMetadataManager.topicHashCache). One is shared by the consumer and share groups."""

    def __init__(self, racks: Racks | None = None) -> None:
        self.racks = racks
        self._parts: dict[str, tuple[object, int, str]] = {}  # topic -> (topic id, partitions, its part)
        self.computed = 0  # topic parts computed (a walk of the topic's partitions when racks are hashed)

    def part(self, name: str, topic_id, partitions: int) -> str:
        kept = self._parts.get(name)
        if kept is not None and kept[0] == topic_id and kept[1] == partitions:
            return kept[2]
        self.computed += 1
        text = _topic(name, topic_id, partitions, self.racks)
        self._parts[name] = (topic_id, partitions, text)
        return text

    def invalidate(self, name: str) -> None:
        """The topic was deleted or its replicas placed (Kafka: onNewMetadataImage's changed and
        deleted topics leave the cache)."""
        self._parts.pop(name, None)

    def group_hash(self, meta: TopicMeta) -> int:
        """A hash of the subscribed topics' names, ids, partition counts and partition racks (Kafka
        4.1: computeGroupHash over the sorted topics' hashes, KIP-1101); 0 for none, as Kafka's."""
        if not meta:
            return 0
        text = ";".join(self.part(name, tid, n) for name, (tid, n) in sorted(meta.items()))
        return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)


def metadata_hash(meta: TopicMeta, racks: Racks | None = None) -> int:
    """:meth:`TopicHashes.group_hash` with nothing kept. Racks count once per replica, sorted, as
    KRaftCoordinatorMetadataImage.partitionRacks lists them; without any rack a topic hashes as it
    did before racks were hashed."""
    return TopicHashes(racks).group_hash(meta)


def _topic(name: str, topic_id, partitions: int, racks: Racks | None) -> str:
    text = f"{name}:{topic_id}:{partitions}"
    per = [sorted(racks(name, p)) for p in range(partitions)] if racks is not None else []
    if any(per):  # each rack length-prefixed: rack names may hold any character (as Kafka's hash does)
        placed = "".join(f"{p}:{len(rs)}:" + "".join(f"{len(r)}:{r}" for r in rs) for p, rs in enumerate(per))
        text += "|" + hashlib.blake2b(placed.encode(), digest_size=16).hexdigest()  # kept short, whatever the size
    return text
