"""Producer id allocation in persisted blocks (Kafka: ProducerIdManager).

The end of the current block is written before any id of it is handed out, so a restart never
reuses an id, even after kill -9.
"""

from __future__ import annotations

import os
from pathlib import Path

BLOCK_SIZE = 1000


class ProducerIdManager:
    def __init__(self, path: Path) -> None:
        self._path = path
        self._next = int(path.read_text()) if path.exists() else 0
        self._block_end = self._next

    def next_id(self) -> int:
        if self._next >= self._block_end:
            self._block_end = self._next + BLOCK_SIZE
            tmp = self._path.with_suffix(".tmp")
            tmp.write_text(str(self._block_end))
            os.replace(tmp, self._path)
        pid = self._next
        self._next += 1
        return pid
