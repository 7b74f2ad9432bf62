"""Recompression compresses the records as they came when the scan calls them canonical: exactly
the records section a record-by-record rebuild (MemoryRecordsBuilder's way) would write."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import Compression, encode_batch, parse_header
from kafka_codecs.records import scan_batch
from shim.storage.log_validator import _rebuild_body

keys = st.none() | st.binary(max_size=20)
header_keys = st.text(max_size=5)  # non-ASCII keys too: those are not canonical
records = st.lists(st.tuples(keys, keys, st.lists(st.tuples(header_keys, keys), max_size=2),
                             st.integers(-1, 1 << 45)), min_size=1, max_size=8)


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=records, codec=st.sampled_from(list(Compression)))
def test_a_canonical_payload_is_what_a_rebuild_writes(records, codec):
    batch = encode_batch(records, compression=codec)
    h = parse_header(batch)
    scan = scan_batch(batch, h, None)
    body, base_ts = _rebuild_body(batch)
    ascii_keys = all(k.isascii() for r in records for k, _ in r[2])
    assert scan.canonical == ascii_keys
    assert scan.max_timestamp == max(r[3] for r in records)
    if scan.canonical:
        assert bytes(scan.payload) == bytes(body)
        assert h.base_timestamp == base_ts
