"""Rules of Kafka's Cleaner that span a whole round (LogCleaner.doClean, cleanSegments, cleanInto,
LogCleanerManager.maxCompactionDelay): the transaction state a round carries from one group of
segments to the next, the last batch of a round kept even when emptied, and max.compaction.lag.ms
judged by the oldest first batch of every dirty segment."""

from __future__ import annotations

from shim.storage import cleaner_manager as cm
from shim.storage.partition_log import LogConfig
from tests.storage.test_cleaner import DAY, T0, _with, batches, clean, latest, put, records, roll_active

# 100-byte segments: every batch in a segment, and every segment in a group, of its own
TINY = LogConfig(segment_bytes=100, cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.01,
                 delete_retention_ms=DAY)


def test_a_commit_marker_stays_while_its_transaction_has_data_in_an_earlier_group(open_log):
    # Kafka carries CleanedTransactionMetadata across the groups of a round: a COMMIT marker whose
    # transaction's batches were seen in an earlier group is kept, without a delete horizon, for as
    # long as any of them remains -- else a log replayed without it would hold the transaction open
    plog = open_log(TINY)
    put(plog, "a", "committed", pid=5, epoch=0, seq=0, txn=True)
    plog.append_marker(5, 0, 0, True, T0)
    marker = plog.log_end_offset - 1
    put(plog, "b", "plain")
    roll_active(plog)
    assert plog.segments[0].next_offset == marker  # the data and its marker in separate groups
    for now in (T0, T0 + 2 * DAY, T0 + 4 * DAY):
        clean(plog, now=now)
        kept = [h for h, _ in batches(plog) if h.base_offset == marker]
        assert kept and kept[0].records_count == 1, now
        assert not kept[0].attributes & 0x40, now  # no delete horizon
        roll_active(plog, now=now)
    open_log.crash(plog)
    for snap in plog.directory.glob("*.snapshot"):
        snap.unlink()
    again = open_log(TINY, clean=False)  # the producer state replayed from the cleaned log
    assert again.last_stable_offset == again.high_watermark
    assert latest(records(again, read_committed=True))[b"a"] == b"committed"


def test_the_last_batch_of_a_round_is_kept_empty_when_all_its_records_go(open_log):
    # Kafka's cleanInto: RETAIN_EMPTY for the batch whose next offset is the round's first
    # uncleanable offset, so the cleaned log still ends where the uncleanable part begins. Here it is
    # an aborted batch whose ABORT marker was written after the segment rolled
    plog = open_log(_with(TINY, segment_bytes=100_000))
    put(plog, "k", "v")
    put(plog, "a", "aborted", pid=5, epoch=0, seq=0, txn=True)
    last = plog.log_end_offset - 1
    plog.roll()
    plog.append_marker(5, 0, 0, False, T0)
    put(plog, "b", "next", pid=5, epoch=0, seq=1, txn=True)  # the producer's later data: not its last batch
    plog.append_marker(5, 0, 0, True, T0)
    assert clean(plog)
    kept = [h for h, _ in batches(plog) if h.base_offset == last]
    assert kept and kept[0].records_count == 0 and kept[0].next_offset == plog.segments[1].base_offset
    for rc in (False, True):
        assert latest(records(plog, read_committed=rc)) == {b"k": b"v", b"b": b"next"}


def test_max_compaction_lag_is_judged_by_the_oldest_first_batch_of_any_dirty_segment(open_log):
    # Kafka: maxCompactionDelay takes the minimum over every dirty segment, not the first one's
    plog = open_log(_with(TINY, segment_bytes=100_000, min_cleanable_dirty_ratio=0.99, max_compaction_lag_ms=1000))
    put(plog, "k", "late", now=T0 + 5000)  # a producer-set timestamp newer than the next segment's
    plog.roll()
    put(plog, "k", "early", now=T0)
    roll_active(plog, now=T0)
    ltc = cm.plan(plog, T0 + 1500)
    assert ltc.need_compaction_now
    assert not cm.plan(plog, T0 + 1000).need_compaction_now


def test_a_segment_the_cleaner_emptied_expires_by_the_time_of_the_segment_it_replaced(open_log):
    # Kafka: retention judges a segment by LogSegment.largestTimestamp, its file's modification time
    # when it holds no record, and the cleaner gives a cleaned segment the time of the last one it
    # replaced: an emptied segment is not deleted (moving the log start) before retention.ms has
    # passed over what it held
    import os
    import time

    now = int(time.time() * 1000)
    plog = open_log(_with(TINY, cleanup_policy=("compact", "delete"), retention_ms=DAY))
    for i in range(3):
        put(plog, "k", f"v{i}", now=now)
    roll_active(plog, now=now)
    old = (now - 2 * DAY) * 1_000_000
    os.utime(plog.segments[0].log_path, ns=(old, old))  # written two days ago
    assert clean(plog, now=now)
    assert [s.size for s in plog.segments[:2]] == [0, 0]
    assert plog.enforce_retention(now) == 1  # the other emptied one was written just now: it stays
    assert plog.log_start_offset == 1
    assert [o for o, _, _ in records(plog)] == [2, 3]


def _append_result(plog, records, **kw):
    from kafka_codecs import encode_batch
    from shim.storage.producer_state import Origin
    from shim.storage.validation import validate_client_batch

    raw = bytearray(encode_batch([(k, v, (), T0) for k, v in records], producer_id=kw["pid"], producer_epoch=0,
                                 base_sequence=0))
    return plog.append(raw, validate_client_batch(raw, plog.config.max_message_bytes), T0, origin=Origin.CLIENT)


def test_a_retried_batch_is_still_found_a_duplicate_after_cleaning_and_a_reload(open_log):
    # Kafka's testDuplicateCheckAfterCleaning: the cleaner keeps each producer's last batch (empty if
    # all its records went), so an idempotent producer's retry after a restart gets the original offsets
    config = _with(TINY, segment_bytes=2048)
    plog = open_log(config)
    batches_of = {1: [b"1", b"2", b"3"], 2: [b"3", b"1", b"4"], 3: [b"1", b"4"]}
    for pid, keys in batches_of.items():
        _append_result(plog, [(k, k) for k in keys], pid=pid)
    plog.roll()
    assert clean(plog)
    assert [o for o, _, _ in records(plog)] == [1, 3, 6, 7]
    open_log.crash(plog)
    for snap in plog.directory.glob("*.snapshot"):
        snap.unlink()
    again = open_log(config, clean=False)
    for pid, first in ((1, 0), (3, 6), (2, 3)):
        result = _append_result(again, [(k, k) for k in batches_of[pid]], pid=pid)
        assert result.duplicate and result.base_offset == first, pid
    assert again.log_end_offset == 8


def test_a_segment_cleaned_part_way_counts_in_both_the_clean_and_the_dirty_bytes(open_log):
    # Kafka's LogToClean: cleanBytes sums logSegments(-1, firstDirtyOffset), cleanableBytes
    # logSegments(firstDirtyOffset, firstUncleanableOffset); a key map that filled mid-segment leaves
    # the checkpoint inside a segment, which both then count
    from shim.storage.cleaner import MAP_ENTRY_BYTES

    plog = open_log(_with(TINY, segment_bytes=100_000))
    for i in range(40):
        put(plog, f"k{i}", "v")
    roll_active(plog)
    small = cm.CleanerConfig(io_buffer_size=256, dedupe_buffer_size=int(10 * MAP_ENTRY_BYTES / 0.9) + 1)
    assert clean(plog, settings=small)
    first_dirty = cm.read_checkpoint(plog)
    seg = plog.segments[0]
    assert seg.base_offset < first_dirty < seg.next_offset
    ltc = cm.plan(plog, T0)
    assert ltc.clean_bytes == seg.size and ltc.cleanable_bytes == seg.size


def _force_clean(plog, now):
    """Kafka's doClean(LogToClean(log, checkpoint, active base), now): a round whatever the ratio."""
    for _ in cm.clean(plog, cm.plan(plog, now), now, cm.CleanerConfig(io_buffer_size=256)):
        pass


def _shape(plog):
    """Kafka's keysInLog, offsetsInLog and lastOffsetsPerBatchInLog."""
    found = batches(plog)
    keys = [int(r.key) for h, rs in found if not h.is_control for r in rs if r.value is not None]
    offsets = [r.offset for _, rs in found for r in rs if r.key is not None and r.value is not None]
    return keys, offsets, [h.last_offset for h, _ in found]


def test_kafkas_commit_marker_retention_with_empty_batch(open_log):
    # a port of Kafka's LogCleanerTest.testCommitMarkerRetentionWithEmptyBatch, step by step
    from tests.storage.test_cleaner import append

    plog = open_log(_with(TINY, segment_bytes=100_000))
    now = T0 + 10 * DAY
    append(plog, [(b"2", b"2"), (b"3", b"3")], pid=1, epoch=0, seq=0, txn=True)  # offsets 0, 1
    plog.roll()
    append(plog, [(b"2", b"2"), (b"3", b"3")], pid=2, epoch=0, seq=0, txn=True)  # 2, 3
    plog.append_marker(2, 0, 0, True, T0)  # 4
    plog.roll()
    put(plog, "2", "2")  # 5
    put(plog, "3", "3")  # 6
    plog.append_marker(1, 0, 0, True, T0)  # 7
    plog.roll()
    _force_clean(plog, now)
    assert _shape(plog) == ([2, 3], [4, 5, 6, 7], [1, 3, 4, 5, 6, 7])
    _force_clean(plog, now)  # the empty batches stay: they hold the producers' last sequences
    assert _shape(plog) == ([2, 3], [4, 5, 6, 7], [1, 3, 4, 5, 6, 7])
    append(plog, [(b"1", b"1")], pid=2, epoch=0, seq=2, txn=True)  # 8
    plog.append_marker(2, 0, 0, True, T0)  # 9
    plog.roll()
    _force_clean(plog, now)
    assert _shape(plog) == ([2, 3, 1], [4, 5, 6, 7, 8, 9], [1, 4, 5, 6, 7, 8, 9])
    _force_clean(plog, now)  # the first pass gives the marker at 4 its delete horizon, the second removes it
    _force_clean(plog, now + DAY + 1)
    assert _shape(plog) == ([2, 3, 1], [5, 6, 7, 8, 9], [1, 5, 6, 7, 8, 9])
