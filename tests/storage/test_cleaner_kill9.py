"""kill -9 during cleaning, 20 times: a child process appends keyed updates and tombstones (fsync
always), reports each acknowledged append, then cleans and SIGKILLs itself at a chosen point of the
round: after a chunk of the offset map or of a cleaned segment, once the swap is committed, once the
files are renamed, or just after a group is swapped. Every restart must load without error, keep
the latest acknowledged value of every key and leave nothing of an unfinished swap behind."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from shim.storage.partition_log import LogConfig, PartitionLog

CONFIG = dict(segment_bytes=1200, cleanup_policy=("compact",), min_cleanable_dirty_ratio=0.01, fsync=True,
              delete_retention_ms=0)

CHILD = textwrap.dedent('''
    import json, os, signal, sys
    from kafka_codecs import encode_batch, parse_header
    from shim.storage import cleaner_manager as cm
    from shim.storage.partition_log import LogConfig, PartitionLog
    from shim.storage.producer_state import Origin

    directory, round_no, kill_at, config = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), json.loads(sys.argv[4])
    config["cleanup_policy"] = tuple(config["cleanup_policy"])
    plog = PartitionLog(__import__("pathlib").Path(directory), "t", 0, LogConfig(**config), clean=False)
    for i in range(60):
        key = b"k%d" % ((i * 7 + round_no) % 13)
        value = None if i % 11 == 10 else b"r%d-%d" % (round_no, i)
        batch = encode_batch([(key, value, (), 1_700_000_000_000 + round_no)])
        plog.append(batch, parse_header(batch), 1_700_000_000_000, origin=Origin.CLIENT)
        print(json.dumps([key.decode(), None if value is None else value.decode()]), flush=True)
    plog.roll()
    events = 0

    def maybe_kill(*_):
        global events
        events += 1
        if events == kill_at:
            print("KILL", flush=True)
            os.kill(os.getpid(), signal.SIGKILL)

    now = 1_700_000_000_000 + round_no
    ltc = cm.plan(plog, now)
    if cm.should_clean(plog, ltc):
        for _ in cm.clean(plog, ltc, now, cm.CleanerConfig(io_buffer_size=300), crash_point=maybe_kill):
            maybe_kill()
    print("DONE", flush=True)
''')


def test_kill9_during_cleaning_twenty_times_loses_nothing(tmp_path):
    directory = tmp_path / "t-0"
    expected: dict[str, str | None] = {}
    kills = 0
    for round_no in range(20):
        kill_at = 1 + (round_no * 5) % 17  # a different point of the round each time
        out = subprocess.run([sys.executable, "-c", CHILD, str(directory), str(round_no), str(kill_at),
                              json.dumps({**CONFIG, "cleanup_policy": list(CONFIG["cleanup_policy"])})],
                             capture_output=True, text=True, timeout=120)
        lines = out.stdout.splitlines()
        for line in lines:
            if line.startswith("["):
                key, value = json.loads(line)
                expected[key] = value  # acknowledged: fsynced before append returned
        if "KILL" in lines:
            assert out.returncode == -9, out.stderr
            kills += 1
        else:
            assert out.returncode == 0 and "DONE" in lines, out.stderr
        # start-up never fails and the log holds the latest acknowledged value of every key
        plog = PartitionLog(directory, "t", 0, LogConfig(**CONFIG), clean=False)
        try:
            assert not list(directory.glob("*.cleaned")) and not (directory / "cleaner-swap").exists()
            got = _latest(plog)
            for key, value in expected.items():
                if value is None:  # a delete: its tombstone, or nothing once delete.retention.ms (0) passed
                    assert got.get(key) is None
                else:
                    assert got[key] == value
            assert set(got) <= set(expected)
        finally:
            for seg in plog.segments:
                seg.close()
    assert kills >= 15  # most rounds were killed mid-way


def _latest(plog) -> dict:
    from kafka_codecs import decode_batch

    out = {}
    for seg in plog.segments:
        for pos, h in seg.iter_headers():
            if not h.is_control:
                for r in decode_batch(seg.read(pos, h.size))[1]:
                    out[r.key.decode()] = None if r.value is None else r.value.decode()
    return out
