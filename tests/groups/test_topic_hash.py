"""The metadata hash of a consumer or share group's subscribed topics (KIP-1101 as Kafka 4.1 has it):
topic ids, partition counts and each partition's replica racks, so a rack change moves the group
epoch; no racks hash as before racks were hashed, so an upgrade moves nothing."""

from __future__ import annotations

import uuid

from shim.coordinators.group.topic_hash import TopicHashes, metadata_hash

A = uuid.UUID("0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0")
META = {"t": (A, 2)}


def test_no_topics_hash_to_zero():
    assert metadata_hash({}) == 0 and metadata_hash({}, lambda t, p: ["r"]) == 0


def test_racks_move_the_hash_and_their_order_does_not():
    plain = metadata_hash(META)
    assert metadata_hash(META, lambda t, p: []) == plain  # no rack: as before racks were hashed
    one = metadata_hash(META, lambda t, p: ["a", "b"])
    assert one != plain
    assert metadata_hash(META, lambda t, p: ["b", "a"]) == one  # sorted, as Kafka sorts them
    assert metadata_hash(META, lambda t, p: ["a", "c"]) != one
    assert metadata_hash(META, lambda t, p: ["a", "a", "b"]) != one  # one rack per replica
    assert metadata_hash(META, lambda t, p: ["a", "b"] if p else ["a"]) != one


def test_rack_names_cannot_run_together():
    assert metadata_hash(META, lambda t, p: ["ab"]) != metadata_hash(META, lambda t, p: ["a", "b"])
    assert metadata_hash(META, lambda t, p: ["a:1"]) != metadata_hash(META, lambda t, p: ["a", "1"])


def test_a_kept_part_hashes_as_one_computed_afresh():
    racks = lambda t, p: ["a", "b"] if p else ["c"]  # noqa: E731
    meta = {"t": (A, 3), "u": (uuid.UUID(int=7), 1)}
    kept = TopicHashes(racks)
    assert kept.group_hash(meta) == metadata_hash(meta, racks)
    assert kept.group_hash(meta) == metadata_hash(meta, racks)  # the second time from what was kept


def test_a_topics_racks_are_read_once_until_it_changes():
    """Kafka's topicHashCache: kept until the metadata changes the topic."""
    read: list[tuple[str, int]] = []
    kept = TopicHashes(lambda t, p: read.append((t, p)) or ["r"])
    first = kept.group_hash(META)
    for _ in range(3):
        assert kept.group_hash(META) == first
    assert len(read) == 2  # one look at each partition
    grown = kept.group_hash({"t": (A, 3)})  # a partition more: not the kept part
    assert grown != first and len(read) == 5
    made_again = kept.group_hash({"t": (uuid.UUID(int=1), 3)})  # a new topic id: not the kept part
    assert made_again != grown and len(read) == 8
    kept.invalidate("t")  # its replicas placed again
    assert kept.group_hash({"t": (uuid.UUID(int=1), 3)}) == made_again and len(read) == 11
