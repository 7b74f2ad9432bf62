"""shim.storage.fs, the one place storage changes the disk: atomic writes, temporary files, and
directory fsyncs on file systems that refuse them."""

from __future__ import annotations

import errno
import os

import pytest

from shim.storage import fs
from shim.storage.partition_log import LogConfig, PartitionLog


def test_atomic_write_replaces_the_file_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "topics.json"
    fs.atomic_write(target, b"old")
    fs.atomic_write(target, b"new")
    assert target.read_bytes() == b"new"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["topics.json"]


def test_loading_a_partition_removes_what_an_interrupted_atomic_write_left(tmp_path):
    directory = tmp_path / "t-0"
    directory.mkdir()
    (directory / ("00000000000000000000.snapshot" + fs.TMP_SUFFIX)).write_bytes(b"half a snapshot")
    (directory / "unrelated.txt").write_bytes(b"not ours")
    plog = PartitionLog(directory, "t", 0, LogConfig(), clean=False)
    try:
        assert sorted(p.name for p in directory.iterdir()) == ["00000000000000000000.log", "unrelated.txt"]
    finally:
        plog.close()


@pytest.mark.parametrize(("code", "raises"), [(errno.EINVAL, False), (errno.EIO, True)])
def test_a_directory_fsync_refused_with_einval_is_not_an_error(tmp_path, monkeypatch, code, raises):
    def refuse(fd):
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(os, "fsync", refuse)
    if raises:
        with pytest.raises(OSError):
            fs.Disk().fsync_dir(tmp_path)
    else:
        fs.Disk().fsync_dir(tmp_path)
