"""Per-segment ``.txnindex`` of aborted transactions (Kafka: TransactionIndex, AbortedTxn).

Entry, 34 bytes big-endian: version int16 (0), producer_id int64, first_offset int64,
last_offset int64 (the ABORT marker), last_stable_offset int64.
"""

from __future__ import annotations

import os
import struct
from pathlib import Path

from .producer_state import AbortedTxn

_ENTRY = struct.Struct(">hqqqq")


def append(path: Path, txn: AbortedTxn) -> None:
    with open(path, "ab", buffering=0) as f:
        f.write(_ENTRY.pack(0, txn.producer_id, txn.first_offset, txn.last_offset, txn.last_stable_offset))


def load(path: Path) -> list[AbortedTxn]:
    if not path.exists():
        return []
    raw = path.read_bytes()
    whole = len(raw) - len(raw) % _ENTRY.size  # a torn last entry is dropped
    return [AbortedTxn(pid, first, last, lso) for _, pid, first, last, lso in _ENTRY.iter_unpack(raw[:whole])]


def rewrite(path: Path, txns: list[AbortedTxn]) -> None:
    if not txns:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_suffix(".txnindex.tmp")
    tmp.write_bytes(b"".join(_ENTRY.pack(0, t.producer_id, t.first_offset, t.last_offset, t.last_stable_offset) for t in txns))
    os.replace(tmp, path)
