"""Producer state snapshots: ``<offset>.snapshot`` (Kafka: ProducerStateManager.writeSnapshot).

Layout: version int16 (1), crc uint32 (CRC-32C of the rest), entry count int32, then per producer:
producer_id int64, epoch int16, coordinator_epoch int32, last_timestamp int64,
current_txn_first_offset int64 (-1 none), batch count int8, and per batch last_seq int32,
last_offset int64, offset_delta int32, timestamp int64. Kafka keeps only the last batch; we keep
all five so duplicate detection survives a restart as well as it does in memory.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from . import fs
from .producer_state import BatchMetadata, ProducerStateEntry, ProducerStateManager
from .segment import file_name

_HEAD = struct.Struct(">hIi")
_ENTRY = struct.Struct(">qhiqqb")
_BATCH = struct.Struct(">iqiq")
VERSION = 1


def _crc32c(data) -> int:
    from crc32c import crc32c  # imported when first needed (see kafka_codecs.batch.compute_crc)

    return crc32c(data)


def write(directory: Path, offset: int, state: ProducerStateManager, sync_dir: bool = True,
          sync: bool = True) -> Path:
    """Write the snapshot at ``offset`` atomically; ``sync=False`` (fsync "never"): no fsync, a
    damaged or missing snapshot is found by its CRC at load and the state replayed from the log."""
    return write_encoded(directory, offset, encode(state), sync_dir, sync)


def write_encoded(directory: Path, offset: int, data: bytes, sync_dir: bool = True, sync: bool = True) -> Path:
    """Write a snapshot :func:`encode` made (on any thread: the state may have moved on since)."""
    path = directory / file_name(offset, ".snapshot")
    fs.atomic_write(path, data, sync_dir, sync)  # Kafka flushes a snapshot before the recovery point passes it
    return path


def encode(state: ProducerStateManager) -> bytes:
    parts = []
    for e in state.producers.values():
        first = -1 if e.current_txn_first_offset is None else e.current_txn_first_offset
        parts.append(_ENTRY.pack(e.producer_id, e.producer_epoch, e.coordinator_epoch, e.last_timestamp, first, len(e.batches)))
        parts.extend(_BATCH.pack(b.last_seq, b.last_offset, b.offset_delta, b.timestamp) for b in e.batches)
    body = struct.pack(">i", len(state.producers)) + b"".join(parts)
    return struct.pack(">hI", VERSION, _crc32c(body)) + body


def read(path: Path, state: ProducerStateManager) -> bool:
    """Load a snapshot into an empty ``state``; False if the file is damaged."""
    return decode(path.read_bytes(), state)


def decode(data: bytes, state: ProducerStateManager) -> bool:
    """Load what :func:`encode` made into an empty ``state``; False if it is damaged."""
    if len(data) < _HEAD.size:
        return False
    version, crc, count = _HEAD.unpack_from(data)
    if version != VERSION or _crc32c(data[6:]) != crc:
        return False
    pos = _HEAD.size
    for _ in range(count):
        pid, epoch, coord, ts, first, nb = _ENTRY.unpack_from(data, pos)
        pos += _ENTRY.size
        e = ProducerStateEntry(pid, epoch, coord, ts, None if first < 0 else first)
        for _ in range(nb):
            e.batches.append(BatchMetadata(*_BATCH.unpack_from(data, pos)))
            pos += _BATCH.size
        state.producers[pid] = e
        if e.current_txn_first_offset is not None:
            state.ongoing_txns[pid] = e.current_txn_first_offset
    return True


def offsets(directory: Path, names: list[str] | None = None) -> list[int]:
    """The snapshots' offsets, in order; ``names`` is a listing of ``directory`` already made."""
    return fs.numbered(os.listdir(directory) if names is None else names, ".snapshot")


def path_for(directory: Path, offset: int) -> Path:
    return directory / file_name(offset, ".snapshot")
