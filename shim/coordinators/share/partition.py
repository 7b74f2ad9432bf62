"""Share-partition state (KIP-932): which records of one (group, topic, partition) are in flight.

Kafka: SharePartition. The partition's records below ``start_offset`` are done; from it on, the
in-flight records each have a state (one table, :data:`TRANSITIONS`), a delivery count and, while
ACQUIRED, the member holding them and when its acquisition lock expires. A record is AVAILABLE until
a member acquires it (its delivery count goes up); the member then ACCEPTs it (ACKNOWLEDGED),
RELEASEs it (AVAILABLE again) or REJECTs it (ARCHIVED). A lock that expires makes the record
AVAILABLE again. A record released or expired after ``delivery_count_limit`` deliveries is ARCHIVED
instead (group.share.delivery.count.limit). What a member holds when its session closes is released
with its delivery count one lower (fetched, not delivered). ``start_offset`` moves past every leading ACKNOWLEDGED or
ARCHIVED record. Records never delivered (control batches, aborted transactions under
read_committed, gaps) enter ARCHIVED directly.

Plain and synchronous: every call takes ``now_ms``; :meth:`next_deadline` says when a lock expires.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from ...errors import ErrorCode, KafkaError


class RecordState(Enum):
    AVAILABLE = 0
    ACQUIRED = 1
    ACKNOWLEDGED = 2
    ARCHIVED = 4


class AckType(Enum):
    GAP = 0
    ACCEPT = 1
    RELEASE = 2
    REJECT = 3


S = RecordState
# Kafka: SharePartition.RecordState.validateTransition -- state -> the states it may move to.
TRANSITIONS: dict[RecordState, frozenset[RecordState]] = {
    S.AVAILABLE: frozenset({S.ACQUIRED, S.ARCHIVED}),
    S.ACQUIRED: frozenset({S.AVAILABLE, S.ACKNOWLEDGED, S.ARCHIVED}),
    S.ACKNOWLEDGED: frozenset(),
    S.ARCHIVED: frozenset(),
}
TERMINAL = frozenset({S.ACKNOWLEDGED, S.ARCHIVED})
NO_DEADLINE = 2**63 - 1


@dataclass(slots=True)
class InFlight:
    state: RecordState
    delivery_count: int = 0
    member_id: str | None = None
    lock_deadline: int = NO_DEADLINE


def transition(record: InFlight, to: RecordState) -> None:
    """The one place a record changes state; refuses a move the table does not allow."""
    if to not in TRANSITIONS[record.state]:
        raise KafkaError(ErrorCode.invalid_record_state, f"a record in state {record.state.name} cannot become {to.name}")
    record.state = to
    if to is not S.ACQUIRED:
        record.member_id, record.lock_deadline = None, NO_DEADLINE


class SharePartition:
    def __init__(self, start_offset: int, *, lock_duration_ms: int, delivery_count_limit: int,
                 max_in_flight: int) -> None:
        self.start_offset = start_offset
        self.lock_duration_ms = lock_duration_ms
        self.delivery_count_limit = delivery_count_limit
        self.max_in_flight = max_in_flight
        self.records: dict[int, InFlight] = {}  # offset >= start_offset -> its state
        self.end_offset = start_offset  # the first offset never fetched

    def copy(self) -> "SharePartition":
        """A copy to change before the change is persisted (compute, persist, then apply)."""
        other = SharePartition(self.start_offset, lock_duration_ms=self.lock_duration_ms,
                               delivery_count_limit=self.delivery_count_limit, max_in_flight=self.max_in_flight)
        other.end_offset = self.end_offset
        other.records = {o: InFlight(r.state, r.delivery_count, r.member_id, r.lock_deadline)
                         for o, r in self.records.items()}
        return other

    # -- what to fetch --------------------------------------------------------------------------

    def next_fetch_offset(self, now_ms: int) -> int | None:
        """The lowest offset a member could acquire now, or None at the in-flight limit."""
        self.expire(now_ms)
        available = [o for o, r in self.records.items() if r.state is S.AVAILABLE]
        if available:
            return min(available)
        if len(self.records) >= self.max_in_flight:
            return None  # Kafka: group.share.partition.max.record.locks
        return self.end_offset

    def acquire(self, member_id: str, offsets, deliverable: bool, now_ms: int) -> list[tuple[int, int, int]]:
        """Acquire for ``member_id`` the offsets of one fetched batch (``offsets``, ascending) that
        are AVAILABLE or new; a new offset that is not ``deliverable`` is ARCHIVED at once.
        Returns (first, last, delivery_count) ranges of what was acquired."""
        acquired: list[tuple[int, int, int]] = []
        for offset in offsets:
            if offset < self.start_offset:
                continue
            record = self.records.get(offset)
            if record is None:
                if offset < self.end_offset:
                    continue  # already done and dropped
                if len(self.records) >= self.max_in_flight:
                    break  # Kafka: group.share.partition.max.record.locks
                record = self.records[offset] = InFlight(S.AVAILABLE)
                self.end_offset = offset + 1
                if not deliverable:
                    transition(record, S.ARCHIVED)
                    continue
            if record.state is not S.AVAILABLE:
                continue
            transition(record, S.ACQUIRED)
            record.delivery_count += 1
            record.member_id, record.lock_deadline = member_id, now_ms + self.lock_duration_ms
            _extend(acquired, offset, record.delivery_count)
        self._advance()
        return acquired

    def skip_to(self, offset: int) -> None:
        """The log no longer holds records below ``offset`` (retention, DeleteRecords)."""
        if offset > self.start_offset:
            for o in [o for o in self.records if o < offset]:
                del self.records[o]
            self.start_offset = offset
            self.end_offset = max(self.end_offset, offset)

    def mark_gap(self, first: int, last: int) -> None:
        """Offsets the fetched data does not hold (compacted away) are never delivered: below
        ``end_offset`` an offset without a record is done, so no record is kept for them."""
        self.end_offset = max(self.end_offset, last + 1)
        self._advance()

    # -- acknowledgements -----------------------------------------------------------------------

    def acknowledge(self, member_id: str, first: int, last: int, types: list[int], now_ms: int) -> None:
        """Kafka: SharePartition.acknowledge -- one type for the whole range, or one per offset."""
        self.expire(now_ms)
        if last < first or (len(types) != 1 and len(types) != last - first + 1):
            raise KafkaError(ErrorCode.invalid_request, "acknowledgement types do not match the range")
        try:
            kinds = [AckType(t) for t in types]
        except ValueError:
            raise KafkaError(ErrorCode.invalid_request, f"unknown acknowledge type in {types}") from None
        if first < self.start_offset or last - first + 1 > len(self.records):  # cheap before the walk
            raise KafkaError(ErrorCode.invalid_record_state, f"offsets {first}-{last} are not all in flight")
        for offset in range(first, last + 1):
            record = self.records.get(offset)
            if record is None or record.state is not S.ACQUIRED or record.member_id != member_id:
                raise KafkaError(ErrorCode.invalid_record_state, f"offset {offset} is not acquired by this member")
        for i, offset in enumerate(range(first, last + 1)):
            kind = kinds[0] if len(kinds) == 1 else kinds[i]
            self._settle(self.records[offset], kind)
        self._advance()

    def roll_back(self, undo: "Undo") -> None:
        """Kafka: SharePartition.rollbackOrProcessStateUpdates -- the records a change whose write
        was lost moved go back to their state before it (acquired by the member, its lock and
        delivery count as they were), each unless it moved again since (acquired by another member,
        its lock expired); one the change finished and dropped is in flight again."""
        for offset, record in undo.before.items():
            current = self.records.get(offset)
            if (None if current is None else _values(current)) != undo.after[offset]:
                continue
            self.records[offset] = InFlight(*_values(record))
            self.start_offset = min(self.start_offset, offset)

    def release_member(self, member_id: str) -> None:
        """A member left or closed its share session: what it holds is available again, its
        delivery count one lower -- what the member did with a record it carried in the
        acknowledgements that closed the session, so the rest were fetched, not delivered; none is
        archived for the delivery-count limit (Kafka 4.1: SharePartition.releaseAcquiredRecords,
        DeliveryCountOps.DECREASE, KAFKA-17541)."""
        for record in self.records.values():
            if record.state is S.ACQUIRED and record.member_id == member_id:
                transition(record, S.AVAILABLE)
                record.delivery_count -= 1
        self._advance()

    def _settle(self, record: InFlight, kind: AckType) -> None:
        if kind is AckType.ACCEPT:
            transition(record, S.ACKNOWLEDGED)
        elif kind is AckType.RELEASE and record.delivery_count < self.delivery_count_limit:
            transition(record, S.AVAILABLE)
        else:  # REJECT, GAP, or released once too often
            transition(record, S.ARCHIVED)

    # -- acquisition locks ----------------------------------------------------------------------

    def expire(self, now_ms: int) -> bool:
        """Locks past their deadline release their records (Kafka: AcquisitionLockTimerTask);
        True if one did."""
        expired = False
        for record in self.records.values():
            if record.state is S.ACQUIRED and record.lock_deadline <= now_ms:
                self._settle(record, AckType.RELEASE)
                expired = True
        if expired:
            self._advance()
        return expired

    def next_deadline(self) -> int:
        return min((r.lock_deadline for r in self.records.values() if r.state is S.ACQUIRED), default=NO_DEADLINE)

    def state_of(self, offset: int) -> RecordState | None:
        record = self.records.get(offset)
        return record.state if record is not None else None

    def _advance(self) -> None:
        """Past every leading finished record; an offset below ``end_offset`` without a record is a
        gap or already done, and is jumped over."""
        while self.start_offset < self.end_offset:
            record = self.records.get(self.start_offset)
            if record is None:
                self.start_offset = min((o for o in self.records if o > self.start_offset), default=self.end_offset)
            elif record.state in TERMINAL:
                del self.records[self.start_offset]
                self.start_offset += 1
            else:
                break


@dataclass(slots=True)
class Undo:
    """What one change did to some records of a share partition, to roll back if its write is lost:
    each offset's record before it, and its values (:func:`_values`) after it (None: dropped)."""
    key: tuple[str, str, int]  # (group id, topic, partition)
    before: dict[int, InFlight]
    after: dict[int, tuple | None]


def undo_of(key, before: SharePartition, after: SharePartition, offsets) -> Undo:
    return Undo(key, {o: before.records[o] for o in offsets},
                {o: None if (r := after.records.get(o)) is None else _values(r) for o in offsets})


def _values(record: InFlight) -> tuple:
    return record.state, record.delivery_count, record.member_id, record.lock_deadline


def _extend(ranges: list[tuple[int, int, int]], offset: int, count: int) -> None:
    if ranges and ranges[-1][1] == offset - 1 and ranges[-1][2] == count:
        ranges[-1] = (ranges[-1][0], offset, count)
    else:
        ranges.append((offset, offset, count))
