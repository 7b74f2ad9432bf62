"""PartitionLog.read against a model: for any layout of batches over segments and any
(offset, max_bytes, min_one), a read returns whole batches, starting with the batch that holds the
offset, within one segment, within max_bytes unless it is the single first batch (KIP-74)."""

from __future__ import annotations

import shutil

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import encode_batch, iter_batches
from shim.storage.producer_state import Origin
from shim.storage.partition_log import LogConfig, PartitionLog
from shim.storage.validation import validate_client_batch


def build(directory, layout, segment_bytes, index_interval):
    """Append batches of (records, value size); returns the log and the model [(segment, base, last, bytes)]."""
    plog = PartitionLog(directory, "t", 0, LogConfig(segment_bytes=segment_bytes, index_interval_bytes=index_interval),
                        clean=True)  # fmt: skip
    model = []
    for n, size in layout:
        base = plog.log_end_offset
        data = bytearray(encode_batch([(None, b"x" * size, (), 1_000 + base + i) for i in range(n)]))
        plog.append(data, validate_client_batch(data, 1 << 24), 0, origin=Origin.CLIENT)
        stored = plog.active.read(plog.active.size - len(data), len(data))
        model.append((plog.active.base_offset, base, base + n - 1, stored))
    return plog, model


def expected_read(model, offset, max_bytes, min_one):
    candidates = [i for i, (_, base, last, _) in enumerate(model) if last >= offset]
    if not candidates:
        return b""
    first = candidates[0]
    segment = model[first][0]
    out, total = [], 0
    for seg, _, _, data in model[first:]:
        if seg != segment or total + len(data) > max_bytes:
            break
        out.append(data)
        total += len(data)
    if not out and min_one:
        out = [model[first][3]]
    return b"".join(out)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    layout=st.lists(st.tuples(st.integers(1, 5), st.integers(0, 400)), min_size=1, max_size=25),
    segment_bytes=st.sampled_from([300, 1000, 1 << 20]),
    index_interval=st.sampled_from([1, 500, 4096]),
    reads=st.lists(st.tuples(st.integers(0, 130), st.integers(1, 3000), st.booleans()), min_size=1, max_size=20),
)
def test_read_matches_the_model(tmp_path, layout, segment_bytes, index_interval, reads):
    directory = tmp_path / "t-0"
    shutil.rmtree(directory, ignore_errors=True)
    plog, model = build(directory, layout, segment_bytes, index_interval)
    try:
        end = plog.log_end_offset
        for offset, max_bytes, min_one in reads:
            offset = offset % (end + 1)
            got = plog.read(offset, max_bytes, False, min_one).data
            assert got == expected_read(model, offset, max_bytes, min_one), (offset, max_bytes, min_one)
            assert sum(h.size for _, h in iter_batches(got)) == len(got)
    finally:
        plog.close()
