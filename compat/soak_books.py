"""What the crash soak's workers were told, and the checks of it after each restart.

``IdemBook``: an idempotent producer's records, each acknowledged one at its offset, once, in send
order (``verify_idempotent`` of compat/crash_soak.py). ``TxnBook``: a transactional producer's
transactions, each committed one whole and once under read_committed, no aborted one, one whose
outcome was cut by the kill whole or not at all; and its group's committed offset (each committing
transaction n sends offset n) the last committed transaction's, or one cut by the kill whose
records are visible.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field


@dataclass
class IdemBook:
    acked: dict = field(default_factory=dict)  # (partition, value) -> offset
    sent: dict = field(default_factory=dict)  # partition -> values sent, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def note_sent(self, partition: int, value: bytes) -> None:
        with self.lock:
            self.sent.setdefault(partition, []).append(value)

    def note_acked(self, partition: int, value: bytes, offset: int) -> None:
        with self.lock:
            self.acked[(partition, value)] = offset


@dataclass
class TxnBook:
    topic: str
    group: str
    records: dict = field(default_factory=dict)  # transaction number -> [(partition, value)]
    committed: set = field(default_factory=set)  # commit acknowledged
    aborted: set = field(default_factory=set)  # abort acknowledged
    uncertain: set = field(default_factory=set)  # outcome asked for, no answer (yet)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, n: int, records: list) -> None:
        with self.lock:
            self.records[n] = records

    def asking(self, n: int) -> None:
        with self.lock:
            self.uncertain.add(n)

    def settled(self, n: int, committed: bool) -> None:
        with self.lock:
            self.uncertain.discard(n)
            (self.committed if committed else self.aborted).add(n)

    def verify(self, log: dict, eos: int) -> list[str]:
        """``log``: partition -> {offset: (key, value)} read under read_committed, values
        ``<prefix>-<n>-<i>``; ``eos``: the group's committed offset of soak-idem-0 (-1 if none)."""
        found: list[str] = []
        seen: dict[int, list] = {}
        for p, records in log.items():
            numbers = []
            for _, (_, value) in sorted(records.items()):
                n = int(value.split(b"-")[1])
                seen.setdefault(n, []).append((p, value))
                numbers.append(n)
            if numbers != sorted(numbers):
                found.append(f"{self.topic}-{p}: committed transactions out of order")
        for n, records in sorted(seen.items()):
            if n in self.aborted:
                found.append(f"{self.topic}: aborted transaction {n} is visible under read_committed")
            elif sorted(records) != sorted(self.records.get(n, [])):
                found.append(f"{self.topic}: transaction {n}: {len(records)} records visible, "
                             f"{len(self.records.get(n, []))} written")  # fmt: skip
        for n in sorted(self.committed - set(seen)):
            found.append(f"{self.topic}: committed transaction {n} is missing")
        last = max(self.committed, default=-1)
        if eos < last or (eos > last and eos not in self.uncertain):
            found.append(f"{self.group}: committed offset {eos}, last committed transaction {last}")
        if eos >= 0 and eos not in seen:
            found.append(f"{self.group}: offset {eos} committed by a transaction that is not visible")
        return found


def verify_idempotent(topic: str, log: dict, acked: dict, sent: dict, found: list) -> None:
    """``acked``: (partition, value) -> the offset it was acknowledged at; ``sent``: partition ->
    values in send order. Each acknowledged record is at its offset, each value at most once and
    in send order."""
    for (p, value), offset in acked.items():
        if log[p].get(offset, (None, None))[1] != value:
            found.append(f"{topic}-{p}: acknowledged {value!r} at {offset}, the log has {log[p].get(offset)}")
    for p, records in log.items():
        values = [v for _, (_, v) in sorted(records.items())]
        if len(values) != len(set(values)):
            found.append(f"{topic}-{p}: {len(values) - len(set(values))} values twice")
        order = {v: i for i, v in enumerate(sent.get(p, []))}
        ranks = [order.get(v, -1) for v in values]
        if ranks != sorted(ranks) or -1 in ranks:
            found.append(f"{topic}-{p}: values out of send order or never sent")
