"""Putting a cleaned segment in place of the segments it was cleaned from, so that a crash at any
moment leaves either the old segments or the cleaned one, whole (Kafka: the ``.cleaned``/``.swap``
suffixes of LocalLog.replaceSegments and their completion in LogLoader).

1. The cleaner writes ``<base>.log.cleaned`` (a batch at a time, as it cleans) and
   ``<base>.txnindex.cleaned`` and fsyncs them.
2. ``cleaner-swap`` is written atomically with ``<base> <end>``: the commit point. From here the
   swap is completed, never rolled back. (Kafka renames the files to ``.swap`` for this; one file
   naming the range also tells which old segments the cleaned one replaces, which a ``.swap``
   segment whose tail batches were all cleaned away cannot tell.)
3. The old base segment's offset and time indexes go, the ``.cleaned`` files are renamed over the
   base segment's, and every other segment in (base, end) is removed; the directory is fsynced.
4. ``cleaner-swap`` is removed.

At load, a ``cleaner-swap`` left by a crash is completed (step 3 is idempotent); without one,
``.cleaned`` files are what an interrupted round left and are removed (rolled back).
"""

from __future__ import annotations

import os
from pathlib import Path

from . import fs
from .segment import file_name

SWAP_FILE = "cleaner-swap"
CLEANED = ".cleaned"
SEGMENT_SUFFIXES = (".log", ".index", ".timeindex", ".txnindex")


def cleaned_path(directory: Path, base: int, suffix: str) -> Path:
    return directory / (file_name(base, suffix) + CLEANED)


def write_cleaned_index(directory: Path, base: int, txnindex: bytes) -> None:
    """Step 1, its second half: the cleaned segment's aborted-transaction index, durable (the
    cleaned log is written and fsynced through its LogSegment)."""
    path = cleaned_path(directory, base, ".txnindex")
    fd = fs.disk.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        fs.write_all(fd, txnindex)
        fs.disk.fsync(fd)
    finally:
        fs.disk.close(fd)


def commit(directory: Path, base: int, end: int, crash_point=None) -> None:
    """Steps 2 to 4. ``crash_point(name)`` is called between steps (tests kill the process there)."""
    fs.atomic_write(directory / SWAP_FILE, f"{base} {end}".encode())
    if crash_point:
        crash_point("committed")
    _finish(directory, base, end, crash_point)


def _finish(directory: Path, base: int, end: int, crash_point=None) -> None:
    fs.disk.unlink(directory / file_name(base, ".index"))
    fs.disk.unlink(directory / file_name(base, ".timeindex"))
    for suffix in (".txnindex", ".log"):  # the log last: its rename is what readers see
        cleaned = cleaned_path(directory, base, suffix)
        if cleaned.exists():
            fs.disk.replace(cleaned, directory / file_name(base, suffix))
    if crash_point:
        crash_point("renamed")
    for other in _segment_bases(directory):
        if base < other < end:
            for suffix in SEGMENT_SUFFIXES:
                fs.disk.unlink(directory / file_name(other, suffix))
    fs.disk.fsync_dir(directory)
    fs.remove(directory / SWAP_FILE, sync=True)


def _segment_bases(directory: Path) -> list[int]:
    return fs.numbered(os.listdir(directory), ".log")


def recover(directory: Path, names: list[str]) -> bool:
    """At load, given the directory's listing: complete a committed swap, remove what an
    uncommitted one left. Returns whether it changed the directory (nothing to do in every
    partition that was never compacted)."""
    changed = False
    if SWAP_FILE in names:
        base, end = (int(x) for x in (directory / SWAP_FILE).read_text().split())
        _finish(directory, base, end)
        changed = True
    for name in names:
        if name.endswith(CLEANED):
            fs.disk.unlink(directory / name)
            changed = True
    return changed
