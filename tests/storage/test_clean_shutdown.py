"""A clean shutdown syncs only what has unflushed writes, and leaves a state whose start skips recovery."""

from __future__ import annotations

import os
import threading
from collections import Counter

import pytest

from shim.storage import fs, recovery_point
from shim.storage.log_manager import CLEAN_SHUTDOWN, LogManager
from shim.storage.partition_log import LogConfig
from tests.test_storage_partition_log import append, batch


class CountingDisk(fs.Disk):
    """The real disk, counting syncs per file name (from any thread)."""

    def __init__(self) -> None:
        self.files: Counter[str] = Counter()
        self.dirs: Counter[str] = Counter()
        self._names: dict[int, str] = {}
        self._lock = threading.Lock()

    def open(self, path, flags, mode=0o644):
        fd = os.open(path, flags, mode)
        with self._lock:
            self._names[fd] = path.name.removesuffix(fs.TMP_SUFFIX)
        return fd

    def fsync(self, fd):
        os.fsync(fd)
        with self._lock:
            self.files[self._names[fd]] += 1

    def fsync_dir(self, path):
        super().fsync_dir(path)
        with self._lock:
            self.dirs[path.name] += 1


@pytest.fixture
def disk():
    counting = CountingDisk()
    previous = fs.use(counting)
    yield counting
    fs.use(previous)


def _open(tmp_path) -> LogManager:
    return LogManager(tmp_path, LogConfig(fsync=False))


def test_clean_stop_syncs_only_the_partitions_written_since_they_were_loaded(tmp_path, disk):
    logs = _open(tmp_path)
    logs.create_topic("t", 40)
    for p in (3, 17):
        append(logs.get("t", p), batch(0, 3))
    disk.files.clear(), disk.dirs.clear()
    logs.close()
    seg = "00000000000000000000"
    assert disk.files == Counter({f"{seg}.log": 2, f"{seg}.index": 2, f"{seg}.timeindex": 2,
                                  "00000000000000000003.snapshot": 2, CLEAN_SHUTDOWN: 1,
                                  recovery_point.FILE: 1})  # the partitions' recovery points changed
    assert disk.dirs == Counter({"t-3": 1, "t-17": 1, tmp_path.name: 1})  # one per written partition, one for the marker

    logs = _open(tmp_path)
    assert logs.clean_start and logs.get("t", 3).log_end_offset == 3 and logs.get("t", 4).log_end_offset == 0
    append(logs.get("t", 4), batch(0, 1))
    disk.files.clear(), disk.dirs.clear()
    logs.close()  # only t-4 changed since this start
    assert sorted(disk.dirs) == sorted(["t-4", tmp_path.name])
    assert disk.files[f"{seg}.log"] == 1 and disk.files["00000000000000000001.snapshot"] == 1

    logs = _open(tmp_path)
    disk.files.clear(), disk.dirs.clear()
    logs.close()  # an idle broker: nothing to sync but the marker
    assert disk.files == Counter({CLEAN_SHUTDOWN: 1}) and disk.dirs == Counter({tmp_path.name: 1})
    logs = _open(tmp_path)
    assert logs.clean_start
    assert [logs.get("t", p).log_end_offset for p in (3, 4, 17, 5)] == [3, 1, 3, 0]
    logs.close()


def test_a_failed_close_writes_no_marker(tmp_path, disk, monkeypatch):
    logs = _open(tmp_path)
    logs.create_topic("t", 8)
    append(logs.get("t", 5), batch(0, 2))

    def broken(fd):
        raise OSError(5, "EIO")

    monkeypatch.setattr(disk, "fsync", broken)
    with pytest.raises(OSError):
        logs.close()
    assert not (tmp_path / CLEAN_SHUTDOWN).exists()
