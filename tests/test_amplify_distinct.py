"""compat/fuzz/amplify.py --distinct: each filled copy names a topic or group of its own, in a
frame the broker decodes (a compact string of a flexible version and a legacy one)."""

from __future__ import annotations

import pytest

from compat.fuzz import amplify
from shim.protocol.messages import decode_request, make, request_class, request_module


def _delete_groups(version):
    return make(request_class(42, version), groups_names=("g0",))


def _list_offsets(version):
    m = request_module(2, version)
    return make(request_class(2, version), replica_id=-1, isolation_level=0, topics=(m.ListOffsetsTopic(
        name="t1", partitions=(m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1),)),))


@pytest.mark.parametrize("key, version, build, names", [
    (42, 2, _delete_groups, lambda r: r.groups_names), (42, 1, _delete_groups, lambda r: r.groups_names),
    (2, 7, _list_offsets, lambda r: [t.name for t in r.topics]), (2, 5, _list_offsets, lambda r: [t.name for t in r.topics])])
def test_each_copy_names_its_own(monkeypatch, key, version, build, names):
    monkeypatch.setattr(amplify, "DISTINCT", True)
    monkeypatch.setattr(amplify, "REQUEST_BYTES", 64 * 1024)
    _, frame = next(amplify.amplified(key, version, build(version)))
    got, stem = list(names(decode_request(frame(), key, version)[1])), names(build(version))[0]
    assert len(got) > 1000 and len(set(got)) == len(got)
    assert got[:2] == [f"{stem}000000", f"{stem}000001"]


def test_an_array_naming_nothing_is_no_case(monkeypatch):
    monkeypatch.setattr(amplify, "DISTINCT", True)
    m = request_module(2, 7)
    request = make(request_class(2, 7), replica_id=-1, isolation_level=0, topics=(m.ListOffsetsTopic(
        name="t1", partitions=(m.ListOffsetsPartition(partition_index=0, current_leader_epoch=-1, timestamp=-1),)),))
    cases = dict(amplify.amplified(2, 7, request))
    assert cases["topics[0].partitions[]"]() is None and cases["topics[]"]() is not None
