"""PartitionLog and LogSegment: rolling, offset and time indexes, log start offset, retention,
reopen after a clean close, recovery after an unclean stop, rebuilding missing indexes."""

from __future__ import annotations

import os
import struct

import pytest

from kafka_codecs import Compression, decode_batch, encode_batch, iter_batches, parse_header
from shim.storage.producer_state import Origin
from shim.errors import ErrorCode, KafkaError
from shim.storage.partition_log import LogConfig
from shim.storage.validation import validate_client_batch

TS = 1_700_000_000_000
PID = 99


def batch(first: int, n: int = 2, *, ts=None, pid=-1, epoch=-1, seq=-1, compression=Compression.NONE, pad=40) -> bytes:
    """n records whose values name their intended offset (first..first+n-1)."""
    stamps = ts if ts is not None else [TS + first + i for i in range(n)]
    records = [(b"k%d" % (first + i), b"offset-%d-" % (first + i) + b"x" * pad, [("i", b"%d" % i)], stamps[i])
               for i in range(n)]  # fmt: skip
    return encode_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, compression=compression)


def append(plog, data: bytes, now: int = TS):
    buf = bytearray(data)
    h = validate_client_batch(buf, plog.config.max_message_bytes)
    return plog.append(buf, h, now, origin=Origin.CLIENT)


def fill(plog, batches: int, n: int = 2, **kw) -> None:
    for _ in range(batches):
        first = plog.log_end_offset
        assert append(plog, batch(first, n, **kw)).base_offset == first


def read_all(plog, start: int | None = None):
    """Every record from ``start`` (default: log start) to the high watermark, through read()."""
    offset = plog.log_start_offset if start is None else start
    out = []
    while offset < plog.high_watermark:
        data = plog.read(offset, 1 << 20, False).data
        assert data, f"no data at {offset} below the high watermark {plog.high_watermark}"
        for pos, h in iter_batches(data):
            _, records = decode_batch(data[pos : pos + h.size])
            out += [r for r in records if r.offset >= offset]
        offset = out[-1].offset + 1
    return out


def assert_records_are_offsets(records, start, end):
    assert [r.offset for r in records] == list(range(start, end))
    for r in records:
        assert r.value.startswith(b"offset-%d-" % r.offset)


def log_files(plog, suffix=".log"):
    return sorted(p.name for p in plog.directory.glob("*" + suffix))


def index_entries(path):
    return list(struct.iter_unpack(">ii", path.read_bytes()))


# -- rolling and the offset index -------------------------------------------------------------


def test_segments_roll_by_size_and_stay_contiguous(open_log):
    plog = open_log(LogConfig(segment_bytes=1000))
    fill(plog, 60, n=2)
    assert len(plog.segments) > 5
    names = log_files(plog)
    assert names == [f"{s.base_offset:020d}.log" for s in plog.segments]
    for seg, nxt in zip(plog.segments, plog.segments[1:]):
        assert 0 < seg.size <= 1000
        assert os.path.getsize(seg.log_path) == seg.size
        assert nxt.base_offset == seg.next_offset
    assert_records_are_offsets(read_all(plog), 0, 120)


def test_batch_larger_than_segment_bytes_gets_a_segment_of_its_own(open_log):
    plog = open_log(LogConfig(segment_bytes=500))
    fill(plog, 1, n=1)
    big = batch(1, 3, pad=400)
    assert len(big) > 500
    assert append(plog, big).base_offset == 1
    fill(plog, 1, n=1)
    assert [s.base_offset for s in plog.segments] == [0, 1, 4]
    assert plog.segments[1].size == len(big)
    assert_records_are_offsets(read_all(plog), 0, 5)


@pytest.mark.parametrize("interval", [1, 700, 4096])
def test_read_at_every_offset_finds_the_batch_holding_it(open_log, interval):
    plog = open_log(LogConfig(segment_bytes=3000, index_interval_bytes=interval))
    fill(plog, 50, n=3)
    for offset in range(plog.log_end_offset):
        data = plog.read(offset, 1, False).data  # max_bytes=1: exactly the first batch (KIP-74)
        h = parse_header(data)
        assert len(data) == h.size
        assert h.base_offset <= offset <= h.last_offset
    assert plog.read(plog.log_end_offset, 1 << 20, False).data == b""
    with pytest.raises(KafkaError) as e:
        plog.read(plog.log_end_offset + 1, 1 << 20, False)
    assert e.value.code == ErrorCode.offset_out_of_range


@pytest.mark.parametrize("interval", [1, 700])
def test_offset_index_file_points_at_batch_starts_and_is_sparse(open_log, interval):
    config = LogConfig(segment_bytes=1 << 20, index_interval_bytes=interval)
    plog = open_log(config)
    fill(plog, 40, n=2)
    seg = plog.segments[0]
    log_bytes = seg.log_path.read_bytes()
    open_log.close(plog)
    entries = index_entries(seg.log_path.with_suffix(".index"))
    assert entries[0] == (0, 0)
    for rel, pos in entries:
        assert parse_header(log_bytes, pos).base_offset == rel
    gaps = [b[1] - a[1] for a, b in zip(entries, entries[1:])]
    batch_size = parse_header(log_bytes).size
    if interval == 1:
        assert len(entries) == 40
    else:
        assert len(entries) < 40 and all(g >= interval for g in gaps) and all(g < interval + batch_size for g in gaps)


# -- the time index and ListOffsets by timestamp ---------------------------------------------


def _timestamped_log(open_log, config):
    """Batches with out-of-order timestamps inside and across batches, some compressed."""
    plog = open_log(config)
    stamps = [[10, 30, 20], [25, 5], [40], [35, 60, 50, 45], [55], [100, 70], [65], [100], [90, 130, 120]]
    expected = []
    for i, ts in enumerate(stamps):
        first = plog.log_end_offset
        codec = Compression.ZSTD if i % 2 else Compression.NONE
        append(plog, batch(first, len(ts), ts=[TS + t for t in ts], compression=codec))
        expected += [(first + j, TS + t) for j, t in enumerate(ts)]
    return plog, expected


def _first_at_or_after(expected, target, start=0, bases=(0,)):
    """Kafka's answer (UnifiedLog.searchOffsetInLocalLog): only the first segment (starting at the
    offsets ``bases``) whose largest timestamp reaches the target is searched, records below the
    log start included in that choice but never an answer."""
    segments = [[(o, t) for o, t in expected if lo <= o < hi] for lo, hi in zip(bases, [*bases[1:], 1 << 62])]
    chosen = next((seg for seg in segments if any(t >= target for _, t in seg)), [])
    return next(((o, t) for o, t in chosen if t >= target and o >= start), None)


def _check_timestamp_lookups(plog, expected, start=0):
    bases = [s.base_offset for s in plog.segments]
    for target in range(TS, TS + 140):
        want = _first_at_or_after(expected, target, start, bases)
        assert plog.offset_for_timestamp(target, False) == want, target


@pytest.mark.parametrize("interval", [1, 4096])
def test_offset_for_timestamp_returns_the_first_record_at_or_after(open_log, interval):
    config = LogConfig(segment_bytes=400, index_interval_bytes=interval)
    plog, expected = _timestamped_log(open_log, config)
    assert len(plog.segments) > 2
    _check_timestamp_lookups(plog, expected)
    assert plog.offset_for_timestamp(TS + 131, False) is None
    assert plog.offset_for_timestamp(0, False) == (0, TS + 10)

    # The same answers from the index files after a clean reopen, and with them missing.
    open_log.close(plog)
    plog = open_log(config)
    _check_timestamp_lookups(plog, expected)
    open_log.close(plog)
    for p in plog.directory.glob("*index"):
        p.unlink()
    plog = open_log(config)
    _check_timestamp_lookups(plog, expected)


def test_offset_for_timestamp_ignores_records_below_the_log_start(open_log):
    plog, expected = _timestamped_log(open_log, LogConfig(segment_bytes=400))
    plog.delete_records(4)  # inside the batch [25, 5] at offsets 3..4
    _check_timestamp_lookups(plog, expected, start=4)
    assert plog.offset_for_timestamp(TS, False) == (4, TS + 5)
    # The first segment (offsets 0-4) reaches TS + 30 below the log start only: Kafka searches no
    # further, so there is no answer although later segments hold larger timestamps.
    assert plog.segments[0].next_offset == 5
    assert plog.offset_for_timestamp(TS + 30, False) is None
    assert plog.offset_for_timestamp(TS + 31, False) == (5, TS + 40)


def test_max_timestamp_offset_finds_the_segment_and_batch_with_the_largest_timestamp(open_log):
    plog = open_log(LogConfig(segment_bytes=400))
    stamps = [[100], [500, 300], [200], [450], [499, 120]]
    for ts in stamps:
        append(plog, batch(plog.log_end_offset, len(ts), ts=[TS + t for t in ts]))
    assert len(plog.segments) > 1
    offset, ts = plog.max_timestamp_offset()
    assert ts == TS + 500
    assert offset in (1, 2)  # see the strict test below for which one Kafka answers


def test_max_timestamp_offset_is_the_offset_of_that_record(open_log):
    plog = open_log()
    append(plog, batch(0, 3, ts=[TS + 5, TS + 10, TS + 7]))
    assert plog.max_timestamp_offset() == (1, TS + 10)


def test_max_timestamp_offset_survives_a_clean_restart(open_log):
    # Default index.interval.bytes (4096) with batches above it: every batch is indexed.
    plog = open_log()
    for ts in ([TS + 1], [TS + 9, TS + 3], [TS + 2]):
        append(plog, batch(plog.log_end_offset, len(ts), ts=ts, pad=5000))
    before = plog.max_timestamp_offset()
    assert before[1] == TS + 9 and before[0] in (1, 2)
    open_log.close(plog)
    plog = open_log()
    assert plog.max_timestamp_offset() == before


# -- log start offset and DeleteRecords -------------------------------------------------------


def test_delete_records_moves_the_log_start_and_drops_whole_segments(open_log):
    config = LogConfig(segment_bytes=1000)
    plog = open_log(config)
    fill(plog, 30, n=2)
    bases = [s.base_offset for s in plog.segments]
    target = bases[2] + 1  # inside the third segment
    assert plog.delete_records(target) == target
    assert plog.log_start_offset == target
    assert [s.base_offset for s in plog.segments] == bases[2:]
    assert log_files(plog) == [f"{b:020d}.log" for b in bases[2:]]
    with pytest.raises(KafkaError) as e:
        plog.read(target - 1, 1 << 20, False)
    assert e.value.code == ErrorCode.offset_out_of_range
    assert_records_are_offsets(read_all(plog), target, 60)
    # Moving backwards is a no-op; beyond the high watermark is out of range.
    assert plog.delete_records(1) == target
    with pytest.raises(KafkaError) as e:
        plog.delete_records(61)
    assert e.value.code == ErrorCode.offset_out_of_range

    # The log start offset is durable, across both kinds of restart.
    open_log.close(plog)
    plog = open_log(config)
    assert plog.log_start_offset == target
    open_log.crash(plog)
    plog = open_log(config, clean=False)
    assert plog.log_start_offset == target
    assert_records_are_offsets(read_all(plog), target, 60)


def test_delete_records_minus_one_means_the_high_watermark(open_log):
    plog = open_log(LogConfig(segment_bytes=1000))
    fill(plog, 20, n=2)
    assert plog.delete_records(-1) == 40
    assert len(plog.segments) == 1
    assert plog.read(40, 1 << 20, False).data == b""
    fill(plog, 1, n=2)
    assert_records_are_offsets(read_all(plog), 40, 42)


# -- retention ----------------------------------------------------------------------------------


def test_retention_by_size_deletes_oldest_sealed_segments(open_log):
    config = LogConfig(segment_bytes=1000, retention_bytes=2500, retention_ms=-1)
    plog = open_log(config)
    fill(plog, 60, n=2)
    sizes = [s.size for s in plog.segments]
    deleted = plog.enforce_retention(TS)
    assert deleted > 0
    kept = plog.segments
    # Kafka: delete while the log would still be at least retention.bytes without the oldest segment.
    assert sum(sizes[deleted:]) >= 2500 > sum(sizes[deleted + 1 :])
    assert plog.log_start_offset == kept[0].base_offset
    assert log_files(plog) == [f"{s.base_offset:020d}.log" for s in kept]
    assert_records_are_offsets(read_all(plog), kept[0].base_offset, 120)
    assert plog.enforce_retention(TS) == 0


def test_retention_never_deletes_the_active_segment(open_log):
    plog = open_log(LogConfig(segment_bytes=1000, retention_bytes=0, retention_ms=0))
    fill(plog, 30, n=2)
    plog.enforce_retention(TS + 10**9)
    assert len(plog.segments) == 1
    assert plog.log_start_offset == plog.active.base_offset
    assert plog.log_end_offset == 60


def test_retention_by_time_deletes_the_expired_prefix_only(open_log):
    config = LogConfig(retention_ms=1_000, retention_bytes=-1)
    plog = open_log(config)
    day = 86_400_000
    now = TS + 10 * day
    ages = [5 * day, 4 * day, 500, 3 * day, 2 * day]  # one sealed segment each; the third is recent
    for age in ages:
        for _ in range(3):
            append(plog, batch(plog.log_end_offset, 1, ts=[now - age - 100, now - age]))  # max = now - age
        plog.roll()
    assert len(plog.segments) == 6
    bases = [s.base_offset for s in plog.segments]
    assert plog.enforce_retention(now) == 2
    assert [s.base_offset for s in plog.segments] == bases[2:]
    assert plog.log_start_offset == bases[2]
    # The segments at 3 and 2 days are expired but wait behind the recent one, as in Kafka.
    assert plog.enforce_retention(now) == 0
    assert_records_are_offsets(read_all(plog), bases[2], plog.log_end_offset)
    # Once the recent one expires too, everything sealed goes; the log start survives a restart.
    assert plog.enforce_retention(now + 2_000) == 3
    assert plog.log_start_offset == bases[5] == plog.log_end_offset
    open_log.close(plog)
    plog = open_log(config)
    assert plog.log_start_offset == bases[5]
    assert log_files(plog) == [f"{bases[5]:020d}.log"]


def test_retention_ms_minus_one_never_expires(open_log):
    plog = open_log(LogConfig(retention_ms=-1))
    append(plog, batch(0, 1, ts=[1]))
    plog.roll()
    append(plog, batch(1, 1, ts=[2]))
    assert plog.enforce_retention(TS) == 0
    assert plog.log_start_offset == 0


# -- clean reopen -------------------------------------------------------------------------------


def test_reopen_after_clean_close_keeps_everything(open_log):
    config = LogConfig(segment_bytes=1000, index_interval_bytes=300)
    plog = open_log(config)
    fill(plog, 40, n=2, compression=Compression.GZIP)
    before = read_all(plog)
    segments = [(s.base_offset, s.next_offset, s.size, s.max_timestamp) for s in plog.segments]
    open_log.close(plog)
    for s in segments:
        for suffix in (".log", ".index", ".timeindex"):
            assert (plog.directory / f"{s[0]:020d}{suffix}").exists()
    plog = open_log(config)
    assert [(s.base_offset, s.next_offset, s.size, s.max_timestamp) for s in plog.segments] == segments
    assert read_all(plog) == before
    fill(plog, 1, n=2)
    assert_records_are_offsets(read_all(plog), 0, 82)


# -- unclean stop: torn tails ------------------------------------------------------------------


def _idempotent_log(open_log, config, batches=6):
    plog = open_log(config)
    for i in range(batches):
        assert append(plog, batch(3 * i, 3, pid=PID, epoch=0, seq=3 * i)).base_offset == 3 * i
    return plog


def _torn(kind, log_path, last_batch_size):
    size = os.path.getsize(log_path)
    if kind == "garbage":
        with open(log_path, "ab") as f:
            f.write(os.urandom(37))
        return size
    if kind == "half-batch":
        os.truncate(log_path, size - last_batch_size // 2)
        return size - last_batch_size
    if kind == "bad-crc":
        with open(log_path, "r+b") as f:
            f.seek(size - 3)
            byte = f.read(1)
            f.seek(size - 3)
            f.write(bytes([byte[0] ^ 0x5A]))
        return size - last_batch_size
    if kind == "header-only":
        with open(log_path, "ab") as f:
            f.write(batch(0, 3)[:61])
        return size
    raise AssertionError(kind)


@pytest.mark.parametrize("history", ["fresh", "after-clean-restart", "after-rolls"])
@pytest.mark.parametrize("kind", ["garbage", "half-batch", "bad-crc", "header-only"])
def test_unclean_stop_cuts_the_torn_tail_and_rebuilds_producer_state(open_log, kind, history):
    config = LogConfig(segment_bytes=700 if history == "after-rolls" else 1 << 20)
    plog = _idempotent_log(open_log, config, batches=3)
    if history == "after-clean-restart":
        open_log.close(plog)  # writes a producer snapshot at offset 9
        plog = open_log(config)
    for i in range(3, 6):
        append(plog, batch(3 * i, 3, pid=PID, epoch=0, seq=3 * i))
    assert plog.log_end_offset == 18
    if history == "after-rolls":
        assert len(plog.segments) > 2
    last = batch(15, 3, pid=PID, epoch=0, seq=15)
    active = plog.active.log_path
    open_log.crash(plog)

    keep = _torn(kind, active, len(last))
    plog = open_log(config, clean=False)
    assert os.path.getsize(active) == keep
    lost_last = kind in ("half-batch", "bad-crc")
    end = 15 if lost_last else 18
    assert plog.log_end_offset == end
    records = read_all(plog)
    assert_records_are_offsets(records, 0, end)

    # Producer state matches what survived: the next in-sequence batch is accepted, a gap is not,
    # and the last surviving batch is recognised as a duplicate.
    with pytest.raises(KafkaError) as e:
        append(plog, batch(end + 3, 3, pid=PID, epoch=0, seq=end + 3))
    assert e.value.code == ErrorCode.out_of_order_sequence_number
    dup = append(plog, batch(end - 3, 3, pid=PID, epoch=0, seq=end - 3))
    assert dup.duplicate and dup.base_offset == end - 3
    assert append(plog, batch(end, 3, pid=PID, epoch=0, seq=end)).base_offset == end
    assert_records_are_offsets(read_all(plog), 0, end + 3)


def test_unclean_reopen_of_an_intact_log_cuts_nothing(open_log):
    plog = _idempotent_log(open_log, LogConfig())
    size = plog.size_bytes()
    open_log.crash(plog)
    plog = open_log(clean=False)
    assert plog.size_bytes() == size and plog.log_end_offset == 18


# -- missing index files ------------------------------------------------------------------------


@pytest.mark.parametrize("clean", [True, False])
def test_missing_index_files_are_rebuilt(open_log, clean):
    config = LogConfig(segment_bytes=1000, index_interval_bytes=250)
    plog = open_log(config)
    fill(plog, 40, n=2)
    open_log.close(plog)
    assert len(list(plog.directory.glob("*index"))) == 2 * len(plog.segments)
    for p in plog.directory.glob("*index"):
        p.unlink()

    plog = open_log(config, clean=clean)
    assert plog.log_end_offset == 80
    assert_records_are_offsets(read_all(plog), 0, 80)
    for offset in range(80):
        h = parse_header(plog.read(offset, 1, False).data)
        assert h.base_offset <= offset <= h.last_offset
    for target in range(TS, TS + 82):
        expected = (target - TS, target) if target < TS + 80 else None
        assert plog.offset_for_timestamp(target, False) == expected


def test_rebuilt_index_files_are_written_back(open_log):
    config = LogConfig(segment_bytes=1000, index_interval_bytes=250)
    plog = open_log(config)
    fill(plog, 40, n=2)
    open_log.close(plog)
    originals = {p.name: p.read_bytes() for p in plog.directory.glob("*index")}
    for p in plog.directory.glob("*index"):
        p.unlink()
    open_log.close(open_log(config))
    assert {p.name: p.read_bytes() for p in plog.directory.glob("*index")} == originals
