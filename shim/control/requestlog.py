"""The request log: what each request was and how it was answered, bounded, for tests to assert on."""

from __future__ import annotations

import collections
from dataclasses import asdict, dataclass

DEFAULT_CAPACITY = 1000
MAX_CAPACITY = 100_000


@dataclass(frozen=True, slots=True)
class Entry:
    seq: int
    api: str
    api_key: int
    version: int
    correlation_id: int
    client_id: str | None
    node: int
    latency_ms: float
    error: str | None  # the first error code of the response other than NONE, as Kafka names it
    fault: int | None  # the rule that acted on the request
    outcome: str  # "answered", "no response" (acks=0), "error", "closed", "closed after"


class RequestLog:
    def __init__(self) -> None:
        self.enabled = False
        self._entries: collections.deque[Entry] = collections.deque(maxlen=DEFAULT_CAPACITY)
        self._seq = 0

    def start(self, capacity: int = DEFAULT_CAPACITY) -> None:
        if capacity != self._entries.maxlen:
            self._entries = collections.deque(self._entries, maxlen=capacity)
        self.enabled = True

    def stop(self) -> None:
        self.enabled = False

    def clear(self) -> None:
        self._entries.clear()

    def add(self, **fields) -> None:
        self._seq += 1
        self._entries.append(Entry(seq=self._seq, **fields))

    def entries(self, api: str | None = None, client_id: str | None = None, since: int = 0,
                limit: int | None = None) -> list[dict]:
        out = [asdict(e) for e in self._entries
               if e.seq > since and (api is None or e.api == api) and (client_id is None or e.client_id == client_id)]
        return out[-limit:] if limit else out

    @property
    def capacity(self) -> int:
        return self._entries.maxlen or 0

    def __len__(self) -> int:
        return len(self._entries)
