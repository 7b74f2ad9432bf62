"""The metadata hash of a consumer or share group's subscribed topics (KIP-1101 as Kafka 4.1 has it):
topic ids, partition counts and each partition's replica racks, so a rack change moves the group
epoch; no racks hash as before racks were hashed, so an upgrade moves nothing."""

from __future__ import annotations

import uuid

from shim.coordinators.group.topic_hash import metadata_hash

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
