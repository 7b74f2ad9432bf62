"""Log compaction of one partition (shim.storage.cleaner, cleaner_manager, swap): latest value per
key, offsets unchanged, tombstones and markers kept for delete.retention.ms, aborted transactions
removed, the last batch of every producer kept, selection by dirty ratio and compaction lags, and
the swap completed or undone after a crash at each of its steps."""

from __future__ import annotations

import pytest

from kafka_codecs import decode_batch, encode_batch, iter_batches
from kafka_codecs.batch import parse_header
from shim.storage import cleaner_manager as cm
from shim.storage.cleaner import has_delete_horizon
from shim.storage.partition_log import LogConfig
from shim.storage.producer_state import Origin
from shim.storage.validation import validate_client_batch

T0 = 1_700_000_000_000
DAY = 86_400_000
COMPACT = LogConfig(segment_bytes=400, cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.01)
SETTINGS = cm.CleanerConfig(io_buffer_size=256)


def append(plog, records, *, pid=-1, epoch=-1, seq=-1, txn=False, now=T0):
    raw = bytearray(encode_batch([(k, v, (), now) for k, v in records], producer_id=pid, producer_epoch=epoch,
                                 base_sequence=seq, is_transactional=txn))
    h = validate_client_batch(raw, plog.config.max_message_bytes)
    return plog.append(raw, h, now, origin=Origin.CLIENT).base_offset


def put(plog, key: str, value: str | None, **kw) -> int:
    return append(plog, [(key.encode(), None if value is None else value.encode())], **kw)


def clean(plog, now=T0, settings=SETTINGS, crash_point=None) -> bool:
    ltc = cm.plan(plog, now)
    if not cm.should_clean(plog, ltc):
        return False
    steps = cm.clean(plog, ltc, now, settings, crash_point=crash_point)
    for _ in steps:
        pass
    return True


def batches(plog):
    out = []
    for seg in plog.segments:
        for pos, h in seg.iter_headers():
            out.append((h, decode_batch(seg.read(pos, h.size))[1]))
    return out


def records(plog, read_committed=False):
    """(offset, key, value) of every record a consumer gets from the log start, aborted ones
    dropped under read_committed as a client drops them."""
    offset, out = plog.log_start_offset, []
    upper = plog.last_stable_offset if read_committed else plog.high_watermark
    while offset < upper:
        r = plog.read(offset, 1 << 20, read_committed)
        data = r.data
        if not data:
            break
        # as the Java consumer does: an aborted transaction starts at its first offset, its marker ends it
        pending = sorted(r.aborted or [], key=lambda a: a.first_offset)
        skip_pids = set()
        for pos, h in iter_batches(data):
            while pending and pending[0].first_offset <= h.last_offset:
                skip_pids.add(pending.pop(0).producer_id)
            if h.is_control:
                skip_pids.discard(h.producer_id)
            elif h.producer_id not in skip_pids or not h.is_transactional:
                out += [(x.offset, x.key, x.value) for x in decode_batch(data[pos:pos + h.size])[1]
                        if x.offset >= offset]
            offset = h.next_offset
    return out


def latest(rs):
    return {k: v for _, k, v in rs}


def roll_active(plog, now=T0):
    """Seal what was written so far (the active segment is never cleaned)."""
    put(plog, "filler", "x", now=now)
    plog.roll()


def test_keyed_updates_keep_the_latest_value_per_key_at_its_own_offset(open_log):
    plog = open_log(COMPACT)
    for i in range(60):
        put(plog, f"k{i % 5}", f"v{i}")
    roll_active(plog)
    before = records(plog)
    assert clean(plog)
    after = records(plog)
    assert latest(after) == latest(before)
    assert [(o, k) for o, k, _ in after if k != b"filler"] == [(55 + i, b"k%d" % i) for i in range(5)]
    assert plog.log_end_offset == 61 and plog.log_start_offset == 0
    assert sum(s.size for s in plog.segments[:-1]) < sum(len(v) for _, _, v in before) * 4
    # a fetch from inside a gap answers with the next batch kept, as Kafka does
    assert parse_header(plog.read(3, 1 << 20, False).data).base_offset == 55
    assert cm.read_checkpoint(plog) == plog.active.base_offset
    assert not cm.should_clean(plog, cm.plan(plog, T0))  # nothing dirty left


def test_the_cleaned_log_reads_the_same_after_a_restart(open_log):
    plog = open_log(COMPACT)
    for i in range(40):
        put(plog, f"k{i % 3}", f"v{i}")
    roll_active(plog)
    assert clean(plog)
    after = records(plog)
    open_log.close(plog)
    again = open_log(COMPACT)
    assert records(again) == after
    open_log.crash(again)
    assert records(open_log(COMPACT, clean=False)) == after


def test_tombstones_stay_for_delete_retention_ms_then_go(open_log):
    config = LogConfig(segment_bytes=400, cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.01,
                       delete_retention_ms=DAY)
    plog = open_log(config)
    for i in range(20):
        put(plog, f"k{i % 4}", f"v{i}")
    put(plog, "k1", None)
    roll_active(plog)
    assert clean(plog, now=T0)
    rs = records(plog)
    assert (b"k1", None) in [(k, v) for _, k, v in rs]
    tomb, recs = next((h, recs) for h, recs in batches(plog) if any(r.key == b"k1" for r in recs))
    assert has_delete_horizon(tomb) and tomb.base_timestamp == T0 + DAY
    assert [r.timestamp for r in recs] == [T0] and tomb.max_timestamp == T0  # record times unchanged
    # a later round before the horizon keeps it, one after it removes it
    put(plog, "k2", "late", now=T0 + 1)
    roll_active(plog, now=T0 + 1)
    assert clean(plog, now=T0 + DAY - 1)
    assert b"k1" in latest(records(plog))
    put(plog, "k3", "later", now=T0 + 2)
    roll_active(plog, now=T0 + 2)
    assert clean(plog, now=T0 + DAY)
    assert b"k1" not in latest(records(plog))
    assert latest(records(plog))[b"k0"] == b"v16"


def test_the_active_segment_and_whatever_follows_the_lso_are_not_cleaned(open_log):
    plog = open_log(COMPACT)
    for i in range(30):
        put(plog, "k", f"v{i}")
    plog.roll()
    put(plog, "k", "open", pid=7, epoch=0, seq=0, txn=True)  # an open transaction: the LSO stays here
    for i in range(30):
        put(plog, "k", f"w{i}")
    plog.roll()
    put(plog, "k", "active")
    assert clean(plog)
    offsets = [o for o, _, _ in records(plog)]
    assert offsets[0] == 29  # the last of the first segment
    assert offsets[1:] == list(range(30, 62))  # from the LSO on, untouched


def test_min_cleanable_dirty_ratio_and_compaction_lags_select_the_log(open_log):
    plog = open_log(LogConfig(segment_bytes=400, cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.99))
    for i in range(30):
        put(plog, f"k{i % 2}", f"v{i}")
    roll_active(plog)
    ltc = cm.plan(plog, T0)
    assert ltc.cleanable_ratio == 1.0 and ltc.clean_bytes == 0
    assert cm.should_clean(plog, ltc)
    clean(plog)
    for i in range(4):
        put(plog, f"k{i % 2}", f"x{i}")
    roll_active(plog)
    ltc = cm.plan(plog, T0)
    assert 0 < ltc.cleanable_ratio < 0.99 and not cm.should_clean(plog, ltc)
    # max.compaction.lag.ms: dirty for longer than that is cleaned whatever the ratio
    plog.config = _with(plog.config, max_compaction_lag_ms=1000)
    assert not cm.should_clean(plog, cm.plan(plog, T0 + 1000))
    assert cm.should_clean(plog, cm.plan(plog, T0 + 1001))
    # min.compaction.lag.ms: records younger than that are not cleanable
    plog.config = _with(plog.config, min_cleanable_dirty_ratio=0.0, max_compaction_lag_ms=(1 << 63) - 1,
                        min_compaction_lag_ms=5000)
    assert cm.plan(plog, T0 + 4999).cleanable_bytes == 0
    assert cm.plan(plog, T0 + 5001).cleanable_bytes > 0


def _with(config, **changes):
    import dataclasses
    return dataclasses.replace(config, **changes)


def test_a_compact_only_topic_keeps_segments_past_retention(open_log):
    plog = open_log(_with(COMPACT, retention_ms=1))
    for i in range(30):
        put(plog, f"k{i}", "v")
    assert plog.enforce_retention(T0 + DAY) == 0
    plog.config = _with(plog.config, cleanup_policy=("compact", "delete"))
    assert plog.enforce_retention(T0 + DAY) > 0


# -- transactions -----------------------------------------------------------------------------


def txn(plog, pid, epoch, seq, items, commit, now=T0):
    for k, v in items:
        put(plog, k, v, pid=pid, epoch=epoch, seq=seq, txn=True, now=now)
        seq += 1
    plog.append_marker(pid, epoch, 0, commit, now)
    return seq


def test_aborted_records_go_markers_stay_until_their_batches_are_gone_then_for_delete_retention(open_log):
    plog = open_log(_with(COMPACT, delete_retention_ms=DAY, segment_bytes=100_000))  # one group per round
    seq = txn(plog, 5, 0, 0, [("a", "committed-a"), ("b", "committed-b")], commit=True)
    seq = txn(plog, 5, 0, seq, [("a", "aborted-a"), ("c", "aborted-c")], commit=False)
    abort_offset = plog.log_end_offset - 1
    seq = txn(plog, 5, 0, seq, [("d", "committed-d")], commit=True)  # the producer's last batch
    roll_active(plog)
    assert len(plog.aborted) == 1
    assert latest(records(plog, read_committed=True)) == {b"a": b"committed-a", b"b": b"committed-b",
                                                          b"d": b"committed-d", b"filler": b"x"}
    assert clean(plog)
    for rc in (False, True):  # aborted records are gone under both isolation levels
        assert latest(records(plog, read_committed=rc)) == {b"a": b"committed-a", b"b": b"committed-b",
                                                            b"d": b"committed-d", b"filler": b"x"}
    markers = [h.base_offset for h, _ in batches(plog) if h.is_control]
    assert abort_offset in markers  # its batches were seen in this round: kept, index entry kept
    assert [a.last_offset for a in plog.aborted] == [abort_offset]
    roll_active(plog, now=T0 + 1)
    assert clean(plog, now=T0 + 1)  # no batch of it left: the marker gets its delete horizon
    abort = next(h for h, _ in batches(plog) if h.base_offset == abort_offset)
    assert has_delete_horizon(abort) and abort.base_timestamp == T0 + 1 + DAY
    assert plog.aborted == []
    roll_active(plog, now=T0 + 2)
    assert clean(plog, now=T0 + 1 + DAY)
    assert abort_offset not in [h.base_offset for h, _ in batches(plog)]
    assert latest(records(plog, read_committed=True))[b"d"] == b"committed-d"
    # the producer's last batch (and the marker of its transaction) survive for its sequence state
    last = [h for h, _ in batches(plog) if h.producer_id == 5 and not h.is_control][-1]
    assert last.last_sequence == seq - 1


def test_the_last_batch_of_a_producer_is_kept_empty_and_its_sequence_survives_a_restart(open_log):
    plog = open_log(COMPACT)
    put(plog, "k", "first", pid=9, epoch=0, seq=0)
    put(plog, "k", "second", pid=9, epoch=0, seq=1)
    put(plog, "k", "third")  # another writer supersedes the producer's last record
    roll_active(plog)
    assert clean(plog)
    kept = [(h, recs) for h, recs in batches(plog) if h.producer_id == 9]
    assert len(kept) == 1 and kept[0][0].records_count == 0 and kept[0][0].last_sequence == 1
    assert latest(records(plog))[b"k"] == b"third"
    open_log.crash(plog)  # and no producer snapshot to start from: the state comes from the log
    for snap in plog.directory.glob("*.snapshot"):
        snap.unlink()
    again = open_log(COMPACT, clean=False)
    assert again.producer_state.producers[9].last_seq == 1
    with pytest.raises(Exception):  # a sequence gap is still refused
        put(again, "k", "gap", pid=9, epoch=0, seq=5)
    put(again, "k", "next", pid=9, epoch=0, seq=2)


# -- crash safety of the swap --------------------------------------------------------------------


class Crash(Exception):
    pass


@pytest.mark.parametrize("step", ["before-commit", "committed", "renamed"])
def test_a_crash_at_each_step_of_the_swap_leaves_a_whole_log(open_log, step):
    plog = open_log(COMPACT)
    for i in range(50):
        put(plog, f"k{i % 4}", f"v{i}")
    roll_active(plog)
    before = latest(records(plog))

    def crash_point(name):
        if name == step:
            raise Crash(name)

    if step == "before-commit":
        from shim.storage import swap

        def failing(*a, **k):
            raise Crash("before-commit")
        swap.commit, saved = failing, swap.commit
        try:
            with pytest.raises(Crash):
                clean(plog)
        finally:
            swap.commit = saved
        # a failure before the commit: the log goes on as it was, the cleaned log file is gone
        assert latest(records(plog)) == before and not list(plog.directory.glob("*.log.cleaned"))
    else:
        with pytest.raises(Crash):
            clean(plog, crash_point=crash_point)
    open_log.crash(plog)
    again = open_log(COMPACT, clean=False)
    assert latest(records(again)) == before
    assert not list(again.directory.glob("*.cleaned")) and not (again.directory / "cleaner-swap").exists()
    offsets = [o for o, _, _ in records(again)]
    assert offsets == sorted(set(offsets))
    # committed: the first group's swap was completed; not committed: nothing changed
    assert (len(offsets) < 51) if step != "before-commit" else (len(offsets) == 51)
    assert clean(again)
    assert latest(records(again)) == before and len(records(again)) == 5


def test_a_marker_left_as_the_last_of_its_producer_is_emptied_and_the_log_still_loads(open_log):
    # a transaction with no data here (the coordinator writes markers to every partition it added):
    # the marker carries the producer's epoch, so it is kept -- with no record once its delete
    # horizon has passed, as Kafka's writeEmptyHeader does
    plog = open_log(_with(COMPACT, delete_retention_ms=DAY))
    put(plog, "k", "v")
    plog.append_marker(77, 3, 0, True, T0)
    for i in range(3):
        put(plog, "k", f"w{i}")
    roll_active(plog)
    assert clean(plog, now=T0)
    put(plog, "k", "x")
    roll_active(plog)
    assert clean(plog, now=T0 + DAY)
    (marker,) = [h for h, _ in batches(plog) if h.producer_id == 77]
    assert marker.is_control and marker.records_count == 0 and marker.producer_epoch == 3
    put(plog, "k", "y")
    roll_active(plog)
    assert clean(plog, now=T0 + DAY)  # an empty control batch in the way of a round
    open_log.crash(plog)
    for snap in plog.directory.glob("*.snapshot"):
        snap.unlink()
    again = open_log(COMPACT, clean=False)  # replayed from the log, the empty marker included
    assert latest(records(again))[b"k"] == b"y"


def test_a_round_whose_key_map_fills_cleans_up_to_what_it_mapped_and_the_next_round_goes_on(open_log):
    # Kafka: the offset map holds what log.cleaner.dedupe.buffer.size allows; a round cleans up to
    # the last offset it mapped and checkpoints there
    from shim.storage.cleaner import MAP_ENTRY_BYTES

    plog = open_log(COMPACT)
    for i in range(80):
        put(plog, f"k{i % 20}", f"v{i}")
    roll_active(plog)
    before = latest(records(plog))
    small = cm.CleanerConfig(io_buffer_size=256, dedupe_buffer_size=int(10 * MAP_ENTRY_BYTES / 0.9) + 1)
    assert clean(plog, settings=small)
    first = cm.read_checkpoint(plog)
    assert 0 < first < plog.active.base_offset  # stopped where the map filled
    assert latest(records(plog)) == before
    while clean(plog, settings=small):
        pass
    assert cm.read_checkpoint(plog) == plog.active.base_offset
    assert latest(records(plog)) == before
    assert len(records(plog)) == 21  # one per key and the filler


def test_a_round_whose_segments_are_deleted_under_it_gives_up_and_the_next_one_starts_over(open_log):
    plog = open_log(_with(COMPACT, cleanup_policy=("compact", "delete")))
    for i in range(60):
        put(plog, f"k{i % 4}", f"v{i}")
    roll_active(plog)
    ltc = cm.plan(plog, T0)
    steps = cm.clean(plog, ltc, T0, SETTINGS)
    next(steps)  # the round has begun: mapping
    low = plog.segments[2].base_offset
    plog.delete_records(low)  # DeleteRecords removes the first segments meanwhile
    for _ in steps:
        pass
    assert cm.read_checkpoint(plog) is None  # nothing swapped: no progress recorded
    assert not list(plog.directory.glob("*.cleaned"))
    assert [o for o, _, _ in records(plog)] == list(range(low, 61))
    assert clean(plog)  # the next round starts from the new log start
    assert latest(records(plog)) == {b"k0": b"v56", b"k1": b"v57", b"k2": b"v58", b"k3": b"v59", b"filler": b"x"}
