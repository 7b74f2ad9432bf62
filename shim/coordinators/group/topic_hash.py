"""The metadata hash a consumer or share group keeps of its subscribed topics (KIP-1101, Kafka 4.1:
the MetadataHash of ConsumerGroupMetadata and ShareGroupMetadata).

The group epoch moves on when the hash of the subscribed topics differs from the one last written:
a topic made, deleted or made again (a new topic id), or grown. It is written with the group epoch
and read back at start-up, so a topic that changed while the group was not looking (a restart in
between) still moves the epoch at the group's next heartbeat. Kafka hashes with XXH3 (hash4j);
kafka-shim's hash is its own: no client or admin API reads it, and a hash that differs only means
one more epoch.
"""

from __future__ import annotations

import hashlib
import uuid

TopicMeta = dict[str, tuple[uuid.UUID, int]]  # subscribed topic name -> (topic id, partitions)


def metadata_hash(meta: TopicMeta) -> int:
    """A hash of the subscribed topics' names, ids and partition counts; 0 for none (as Kafka's)."""
    if not meta:
        return 0
    text = ";".join(f"{name}:{tid}:{n}" for name, (tid, n) in sorted(meta.items()))
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "big", signed=True)
