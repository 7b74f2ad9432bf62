"""One log segment: ``<base>.log`` of record batches as received, plus its sparse indexes.

Kafka: storage/internals/log/LogSegment. The offset index maps a batch's base offset to its file
position every ``index_interval`` bytes; the time index maps the largest timestamp so far to the
offset that carries it. Both live in memory and are written to ``.index``/``.timeindex`` (Kafka's
layouts) when the segment is sealed or the broker shuts down cleanly.
"""

from __future__ import annotations

import bisect
import itertools
import logging
import os
import struct
import sys
from array import array
from pathlib import Path
from typing import Iterator

from kafka_codecs.batch import HEADER_SIZE, MAGIC, BatchHeader, crc_ok, parse_header

from . import fs, reserve

log = logging.getLogger(__name__)

_INDEX_ENTRY = struct.Struct(">ii")  # relative offset, position
_TIME_ENTRY = struct.Struct(">qi")  # timestamp, relative offset
INDEX_ENTRY_SIZE, TIME_ENTRY_SIZE = _INDEX_ENTRY.size, _TIME_ENTRY.size


# A growing segment reserves disk space ahead of its end (shim.storage.reserve): nothing until it
# holds RESERVE_AFTER bytes, then as much again as it holds, at most RESERVE_MAX at a time and never
# past the segment's size limit. So a small partition reserves nothing, and a segment never has
# more reserved and unwritten than it has written. Sealing or closing it gives the rest back.
RESERVE_AFTER = 1 << 20
RESERVE_MAX = 16 << 20


def file_name(base_offset: int, suffix: str) -> str:
    return f"{base_offset:020d}{suffix}"


class FileRecords:
    """Whole record batches at ``position`` of a segment file, not yet read into memory."""

    __slots__ = ("_segment", "position", "size")

    def __init__(self, segment: "LogSegment", position: int, size: int) -> None:
        self._segment, self.position, self.size = segment, position, size

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        return self._segment.read(self.position, self.size)

    def open(self) -> "FileRegion":
        """A handle of its own on these bytes: retention may delete the segment while they are sent."""
        return FileRegion(os.fdopen(os.dup(self._segment.fileno()), "rb", buffering=0), self.position, self.size)


class OpenedRecords:
    """FileRecords given their file handle early (FileRecords.open), for an answer built over
    several turns of the loop: the segment may be deleted before the answer is encoded."""

    __slots__ = ("_region",)

    def __init__(self, region: "FileRegion") -> None:
        self._region = region

    def __len__(self) -> int:
        return self._region.size

    def read(self) -> bytes:
        return self._region.read()

    def open(self) -> "FileRegion":
        return self._region


class FileRegion:
    """Bytes of an open file, for the wire layer to send with sendfile; close it once sent."""

    __slots__ = ("file", "position", "size")

    def __init__(self, file, position: int, size: int) -> None:
        self.file, self.position, self.size = file, position, size

    def __len__(self) -> int:
        return self.size

    def read(self) -> bytes:
        return os.pread(self.file.fileno(), self.size, self.position)

    def close(self) -> None:
        self.file.close()


class LogSegment:
    def __init__(self, directory: Path, base_offset: int, index_interval: int, read_only: bool = False,
                 max_size: int | None = None, log_path: Path | None = None) -> None:
        self.directory = directory
        self.base_offset = base_offset
        self.index_interval = index_interval
        # another name while the segment is being written elsewhere (the cleaner's .cleaned file)
        self.log_path = log_path or directory / file_name(base_offset, ".log")
        self.read_only = read_only
        flags = os.O_RDONLY if read_only else os.O_RDWR | os.O_CREAT | os.O_APPEND
        self._fd = os.open(self.log_path, flags) if read_only else fs.disk.open(self.log_path, flags)
        self.size = os.fstat(self._fd).st_size
        self.max_size = max_size
        self._reserved = self.size  # the file's blocks reach this far (at least)
        self._reserving = not read_only  # until the filesystem refuses once
        if not read_only and self.size and reserve.allocated_past_end(self._fd):
            reserve.release(self._fd, self.size)  # left by a process that was killed: give it back
        self._dirty = False
        # (position, offset) up to which the file is known to be on disk: advanced by each fsync
        # (the recovery point of PartitionLog.recovery_point under fsync "always")
        self.durable = (self.size, base_offset)
        # how many offset and time index entries the .index/.timeindex files hold, None when the
        # files are not a prefix of the index in memory (see save_index)
        self._index_saved: tuple[int, int] | None = None
        self.next_offset = base_offset
        self.max_timestamp = -1
        self._offsets = array("q")
        self._positions = array("q")
        self._time_ts = array("q")
        self._time_offsets = array("q")
        self._since_index = 0
        self.offset_of_max_timestamp = base_offset  # last offset of the batch holding max_timestamp
        self.rolling_timestamp: int | None = None  # the first batch's max timestamp, once known

    # -- writing ----------------------------------------------------------------------------

    def append(self, chunks: tuple, size: int, base_offset: int, last_offset: int, max_timestamp: int) -> int:
        """Write one stamped batch of ``size`` bytes, given as consecutive buffers, whose offsets
        and max timestamp are as stored; returns its file position."""
        position = self.size
        if position + size > self._reserved and position >= RESERVE_AFTER and self._reserving:
            self._reserve(position, size)
        written = fs.disk.writev(self._fd, chunks)
        if written < size:  # a short write: finish it from where it stopped
            fs.write_all(self._fd, memoryview(b"".join(chunks))[written:])
        self.size = position + size
        self._dirty = True
        self._track(position, base_offset, last_offset, size, max_timestamp)
        return position

    def _reserve(self, position: int, total: int) -> None:
        length = min(RESERVE_MAX, position)
        if self.max_size is not None:
            length = min(length, self.max_size - position)
        length = max(length, total)
        # A refusal (no fallocate here, a full disk) is no error: the write goes ahead without, and
        # this segment stops asking.
        if reserve.reserve(self._fd, position, length):
            self._reserved = position + length
        else:
            self._reserving = False

    def release_reserved(self) -> None:
        """Give back the space reserved past the end (a sealed or closed segment no longer grows)."""
        if self._reserved > self.size:
            reserve.release(self._fd, self.size)
        self._reserved = self.size

    def _track(self, position: int, base_offset: int, last_offset: int, size: int, max_timestamp: int) -> None:
        if not position:  # Kafka: LogSegment.rollingBasedTimestamp, the first batch's (shim.storage.roll)
            self.rolling_timestamp = max_timestamp
        if max_timestamp > self.max_timestamp:
            self.max_timestamp = max_timestamp
            self.offset_of_max_timestamp = last_offset
        if self._since_index >= self.index_interval or not self._offsets:
            self._offsets.append(base_offset)
            self._positions.append(position)
            if not self._time_ts or self.max_timestamp > self._time_ts[-1]:
                self._time_ts.append(self.max_timestamp)
                self._time_offsets.append(self.offset_of_max_timestamp)
            self._since_index = 0
        self._since_index += size
        self.next_offset = last_offset + 1

    def flush(self) -> None:
        """fsync, if anything was written since the last one (idle partitions cost nothing)."""
        if self._dirty:
            fs.disk.fsync(self._fd)
            self._dirty = False
        self.durable = (self.size, self.next_offset)

    def truncate_to_position(self, position: int) -> None:
        fs.disk.ftruncate(self._fd, position)  # frees every block past it, reserved ones too
        self.size = self._reserved = position
        self._dirty = True

    # -- reading ----------------------------------------------------------------------------

    def read(self, position: int, size: int) -> bytes:
        return os.pread(self._fd, size, position)

    def fileno(self) -> int:
        return self._fd

    @property
    def closed(self) -> bool:
        """Closed or deleted (retention, DeleteRecords, a swap, the topic's deletion)."""
        return self._fd < 0

    def header_at(self, position: int) -> BatchHeader | None:
        data = os.pread(self._fd, HEADER_SIZE, position)
        return parse_header(data) if len(data) == HEADER_SIZE else None

    def iter_headers(self, position: int = 0) -> Iterator[tuple[int, BatchHeader]]:
        while position < self.size:
            h = self.header_at(position)
            if h is None:
                return
            yield position, h
            position += h.size

    def batch_boundary(self, start: int, limit: int) -> tuple[int, int]:
        """Where a read of whole batches from ``start`` must end to stay within ``limit``:
        (position, offset) of the first batch that does not fit, or the segment's end."""
        i = bisect.bisect_right(self._positions, limit) - 1
        walk_from = max(start, self._positions[i]) if i >= 0 else start
        for position, h in self.iter_headers(walk_from):
            if position + h.size > limit:
                return position, h.base_offset
        return self.size, self.next_offset

    def find(self, offset: int) -> tuple[int, BatchHeader] | None:
        """The first batch whose last offset is >= ``offset``."""
        i = bisect.bisect_right(self._offsets, offset) - 1
        start = self._positions[i] if i >= 0 else 0
        for position, h in self.iter_headers(start):
            if h.last_offset >= offset:
                return position, h
        return None

    def timestamp_search_start(self, ts: int, starting_offset: int) -> int | None:
        """Where a search for the first record with timestamp >= ``ts`` and offset >=
        ``starting_offset`` begins: the batch of the last time index entry at or below ``ts``, or
        of ``starting_offset`` if later (Kafka: LogSegment.findOffsetByTimestamp); None when no
        batch here reaches ``starting_offset``."""
        i = bisect.bisect_right(self._time_ts, ts) - 1
        found = self.find(max(self._time_offsets[i] if i >= 0 else self.base_offset, starting_offset))
        return found[0] if found else None

    # -- load and recovery ------------------------------------------------------------------

    def load(self, recover: bool, max_batch: int, trusted: tuple[int, int] | None = None,
             truncate: bool = True) -> int:
        """Rebuild the indexes by scanning the file; with ``recover``, also check every CRC.

        Stops at the first batch that is torn or corrupt and truncates the file there (without
        ``truncate``, only the segment's size: the caller truncates); returns the number of bytes cut.
        Without ``recover`` the indexes are read from their files when present.
        ``trusted``: the recovery point (position, offset) up to which the file is known good; the
        CRC check then starts there, with the index below it read from the index files, if they and
        the batches between their last entry and that point agree with it (else from the start).
        ``scanned`` tells how many bytes were CRC-checked.
        """
        self.scanned = 0
        if not recover and self._load_index_files():
            self.durable = (self.size, self.next_offset)  # a clean stop fsynced it all
            return 0
        position = 0
        if trusted is not None and trusted[0] and self._load_index_files(until=trusted):
            position = trusted[0]
        else:
            self._offsets, self._positions = array("q"), array("q")
            self._time_ts, self._time_offsets = array("q"), array("q")
            self.max_timestamp, self._since_index, self.next_offset = -1, 0, self.base_offset
            self.offset_of_max_timestamp, self._index_saved = self.base_offset, None
        start, start_offset = position, self.next_offset
        while position < self.size:
            head = os.pread(self._fd, HEADER_SIZE, position)
            if len(head) < HEADER_SIZE:
                break
            h = parse_header(head)
            if h.magic != MAGIC or h.batch_length < HEADER_SIZE - 12 or h.size > max_batch + HEADER_SIZE:
                break
            if position + h.size > self.size:
                break
            if recover and not crc_ok(os.pread(self._fd, h.size, position)):
                break
            self._track(position, h.base_offset, h.last_offset, h.size, h.max_timestamp)
            position += h.size
        self.scanned = position - start if recover else 0
        # what a recovery read back came from the page cache: on disk only once fsynced again
        self.durable = (start, start_offset) if recover else (position, self.next_offset)
        self._dirty = recover and position > start  # read back from the page cache, not known to be on disk
        cut = self.size - position
        if cut and (self.read_only or not truncate):
            self.size = position  # ignore the tail a running broker may still be writing
        elif cut:
            log.warning("%s: truncating %d bytes of torn or corrupt data at position %d", self.log_path, cut, position)
            self.truncate_to_position(position)
        return cut

    def _load_index_files(self, until: tuple[int, int] | None = None) -> bool:
        """The indexes from their files, then a walk of the batch headers after their last entry,
        indexing them as appends did: to the end, or to ``until``, a recovery point (position,
        offset), exactly, with the entries past it left out. The files may stop short of the point
        or, under one, be missing: a checkpoint writes them only once they lag by
        recovery_point.INDEX_LAG_BYTES, and the walk makes up the rest. False when the files and
        the log disagree (the caller then scans the segment afresh)."""
        idx = self.log_path.with_suffix(".index")
        tidx = self.log_path.with_suffix(".timeindex")
        try:
            raw, traw = idx.read_bytes(), tidx.read_bytes()
        except FileNotFoundError:
            if until is None:
                return False
            raw = traw = b""
        torn = len(raw) % _INDEX_ENTRY.size or len(traw) % _TIME_ENTRY.size
        if torn and until is None:
            return False
        end, end_offset = until if until is not None else (self.size, None)
        if end > self.size:
            return False
        offsets, positions = array("q"), array("q")
        for rel, pos in _INDEX_ENTRY.iter_unpack(raw[:len(raw) - len(raw) % _INDEX_ENTRY.size]):
            if pos >= end and until is not None:
                break
            offsets.append(self.base_offset + rel)
            positions.append(pos)
        if positions and positions[-1] >= self.size and self.size:
            return False
        time_ts, time_offsets = array("q"), array("q")
        for ts, rel in _TIME_ENTRY.iter_unpack(traw[:len(traw) - len(traw) % _TIME_ENTRY.size]):
            if end_offset is not None and self.base_offset + rel >= end_offset:
                break
            time_ts.append(ts)
            time_offsets.append(self.base_offset + rel)
        whole = not torn and len(offsets) * _INDEX_ENTRY.size == len(raw) and len(time_ts) * _TIME_ENTRY.size == len(traw)
        self._offsets, self._positions, self._time_ts, self._time_offsets = offsets, positions, time_ts, time_offsets
        walked = self._walk_to(positions[-1] if positions else 0, end)
        if walked is None or (end_offset is not None and walked != end_offset):
            return False
        self._index_saved = (len(offsets), len(time_ts)) if whole and raw else None
        return True

    def _walk_to(self, start: int, end: int) -> int | None:
        """Walk the batch headers from ``start`` (the last index entry's, or 0) to ``end``, adding
        the index entries appends would have added; the offset at ``end``, or None if the batches
        do not end there (the index is then left half built: the caller starts again)."""
        self.max_timestamp, self.offset_of_max_timestamp = (
            (self._time_ts[-1], self._time_offsets[-1]) if self._time_ts else (-1, self.base_offset))
        self._since_index, self.next_offset, position = 0, self.base_offset, start
        if start == end and start:  # nothing to walk: the offset at ``end`` is not known here
            return None
        while position < end:
            h = self.header_at(position)
            if h is None or h.magic != MAGIC or h.size < HEADER_SIZE or position + h.size > end:
                return None
            self._track(position, h.base_offset, h.last_offset, h.size, h.max_timestamp)
            position += h.size
        return self.next_offset

    def index_entries(self) -> tuple[int, int]:
        """How many offset and time index entries the index in memory holds."""
        return len(self._offsets), len(self._time_ts)

    def _index_bytes(self, start: int) -> bytes:
        """Offset index entries from the ``start``-th on, as the .index file holds them: relative
        offset and position, int32 big-endian each (packed by array, not per entry)."""
        out = array("i", bytes(_INDEX_ENTRY.size * (len(self._offsets) - start)))
        out[0::2] = array("i", map((-self.base_offset).__add__, self._offsets[start:]))
        out[1::2] = array("i", self._positions[start:])
        if sys.byteorder == "little":
            out.byteswap()
        return out.tobytes()

    def _time_index_bytes(self, start: int) -> bytes:
        """Time index entries from the ``start``-th on, as the .timeindex file holds them."""
        count = len(self._time_ts) - start
        rel = map((-self.base_offset).__add__, self._time_offsets[start:])
        return struct.pack(">" + "qi" * count, *itertools.chain.from_iterable(zip(self._time_ts[start:], rel)))

    def write_index_files(self, sync_dir: bool = True, sync: bool = True) -> None:
        idx, tidx = self._index_bytes(0), self._time_index_bytes(0)
        fs.atomic_write(self.log_path.with_suffix(".index"), idx, sync_dir, sync)
        fs.atomic_write(self.log_path.with_suffix(".timeindex"), tidx, sync_dir, sync)
        self._index_saved = (len(self._offsets), len(self._time_ts))

    def index_lag(self, position: int) -> int:
        """Bytes of the log below ``position`` indexed in memory and not in the index files: what
        a start after a crash would walk (the headers only) to rebuild their entries."""
        if self._index_saved is None:
            return position
        saved = self._index_saved[0]
        return position - self._positions[saved] if saved < len(self._positions) else 0

    def save_index(self, sync: bool) -> None:
        """Bring the index files up to the index in memory, for a recovery point inside this (the
        active) segment: the entries added since are appended (fsynced with ``sync``), or, when the
        files are not a prefix of it, both are written anew (Kafka's active segment has its index
        files mapped and written as it grows)."""
        if self._index_saved is None:
            self.write_index_files(sync_dir=sync, sync=sync)
            return
        n, m = self._index_saved
        if n < len(self._offsets):
            fs.append(self.log_path.with_suffix(".index"), self._index_bytes(n), sync)
        if m < len(self._time_ts):
            fs.append(self.log_path.with_suffix(".timeindex"), self._time_index_bytes(m), sync)
        self._index_saved = (len(self._offsets), len(self._time_ts))

    def close(self) -> None:
        if self._fd >= 0:
            if not self.read_only:
                self.release_reserved()
            (os.close if self.read_only else fs.disk.close)(self._fd)
            self._fd = -1

    def delete(self) -> None:
        """Remove the segment's files (the caller makes the removal durable if it must be)."""
        self.close()
        for suffix in (".log", ".index", ".timeindex", ".txnindex"):
            fs.disk.unlink(self.log_path.with_suffix(suffix))
