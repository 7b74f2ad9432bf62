"""Per-segment ``.txnindex`` of aborted transactions (Kafka: TransactionIndex, AbortedTxn).

Entry, 34 bytes big-endian: version int16 (0), producer_id int64, first_offset int64,
last_offset int64 (the ABORT marker), last_stable_offset int64.
"""

from __future__ import annotations

import struct
from pathlib import Path

from . import fs
from .producer_state import AbortedTxn

_ENTRY = struct.Struct(">hqqqq")


def pack(t: AbortedTxn) -> bytes:
    return _ENTRY.pack(0, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset)


def append(path: Path, txn: AbortedTxn, sync: bool) -> None:
    """Add one entry; with ``sync`` it is durable on return (as the ABORT marker it follows)."""
    fs.append(path, pack(txn), sync)


def load(path: Path) -> list[AbortedTxn]:
    if not path.exists():
        return []
    raw = path.read_bytes()
    whole = len(raw) - len(raw) % _ENTRY.size  # a torn last entry is dropped
    return [AbortedTxn(pid, first, last, lso) for _, pid, first, last, lso in _ENTRY.iter_unpack(raw[:whole])]


def rewrite(path: Path, txns: list[AbortedTxn]) -> None:
    if txns:
        fs.atomic_write(path, b"".join(pack(t) for t in txns))
    else:
        fs.remove(path, sync=True)
