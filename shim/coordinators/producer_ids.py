"""Producer id allocation in persisted blocks (Kafka: ProducerIdManager).

The end of the current block is written (atomically and durably) before any id of it is handed
out, so a restart never reuses an id, even after kill -9 or a power loss.
"""

from __future__ import annotations

from pathlib import Path

from ..storage import fs

BLOCK_SIZE = 1000


class ProducerIdManager:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._next = int(path.read_text()) if path.exists() else 0
        self._block_end = self._next

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._block_end = self._next + BLOCK_SIZE
            fs.atomic_write(self._path, str(self._block_end).encode())
        pid = self._next
        self._next += 1
        return pid
