"""Committed-offset expiration (KIP-211; Kafka: GroupCoordinatorShard.cleanupGroupMetadata,
OffsetMetadataManager.cleanupExpiredOffsets, OffsetExpirationConditionImpl and each group type's
offsetExpirationCondition / isSubscribedToTopic; GroupMetadata.removeExpiredOffsets before 4.0).

Every ``offsets.retention.check.interval.ms`` each group is asked which of its offsets expired:

- a classic group with a protocol type, once Empty: every offset, ``offsets.retention.minutes``
  after the group became Empty (its state timestamp; the commit time when it has none);
- a classic group of the consumer protocol, while Stable: the offsets of topics no member
  subscribes to, counted from their commit;
- a classic group without a protocol type (standalone commits, manual assignment): every offset,
  counted from its commit;
- a consumer group (KIP-848), in any state: the offsets of topics it does not subscribe to,
  counted from their commit.

The offsets of a deleted topic go at once, in every group (:meth:`OffsetExpiration.on_topic_deleted`).

An offset committed with OffsetCommit v2-4's RetentionTimeMs carries an explicit expire timestamp,
and expires at it instead. A partition with a pending transactional offset is kept. Expired
offsets get tombstones in ``__consumer_offsets``; a group left Empty with no offsets and no pending
transactional offsets is deleted with them (its group tombstone), so a restart agrees.

Nothing here reads the clock: ``now_ms`` comes in, ``as_of_ms`` (the control plane's
``advance_clock``) evaluates the conditions later than now.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, NamedTuple

from ...errors import KafkaError
from .consumer_group import ConsumerGroup
from .records import OffsetAndMetadata
from .state import CONSUMER_PROTOCOL_TYPE, GroupMetadata, GroupState, OffsetsHolder

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator

log = logging.getLogger(__name__)

TP = tuple[str, int]
DEFAULT_RETENTION_MS = 7 * 24 * 60 * 60 * 1000  # offsets.retention.minutes = 10080
DEFAULT_CHECK_INTERVAL_MS = 600_000  # offsets.retention.check.interval.ms


class ExpirationCondition(NamedTuple):
    """Kafka: OffsetExpirationConditionImpl plus the group's isSubscribedToTopic."""

    base_timestamp: Callable[[OffsetAndMetadata], int]
    subscribed: frozenset[str]

    def is_expired(self, offset: OffsetAndMetadata, now_ms: int, retention_ms: int) -> bool:
        if offset.expire_timestamp != -1:  # OffsetCommit v2-4's retention time: the old semantics
            return now_ms >= offset.expire_timestamp
        return now_ms - self.base_timestamp(offset) >= retention_ms


def _commit_time(offset: OffsetAndMetadata) -> int:
    return offset.commit_timestamp


def classic_condition(group: GroupMetadata) -> ExpirationCondition | None:
    """Kafka: ClassicGroup.offsetExpirationCondition. None: nothing of the group expires now."""
    if group.protocol_type is None:
        return ExpirationCondition(_commit_time, frozenset())
    if group.is_(GroupState.EMPTY):
        became_empty = group.state_timestamp
        base = _commit_time if became_empty < 0 else (lambda _offset: became_empty)
        return ExpirationCondition(base, frozenset())
    subscribed = group.subscribed_topics()
    if group.protocol_type == CONSUMER_PROTOCOL_TYPE and subscribed is not None and group.is_(GroupState.STABLE):
        return ExpirationCondition(_commit_time, frozenset(subscribed))
    return None


def consumer_condition(group: ConsumerGroup, resolve_regex) -> ExpirationCondition:
    """Kafka: ConsumerGroup.offsetExpirationCondition -- by commit time, unsubscribed topics only."""
    return ExpirationCondition(_commit_time, frozenset(group.subscribed_topic_names(resolve_regex)))


def expired_offsets(group: OffsetsHolder, condition: ExpirationCondition, as_of_ms: int,
                    retention_ms: int) -> list[TP]:
    """Kafka: cleanupExpiredOffsets' selection -- never a partition with a pending transactional offset."""
    return [tp for tp, committed in group.offsets.items()
            if tp[0] not in condition.subscribed
            and condition.is_expired(committed.value, as_of_ms, retention_ms)
            and not group.has_pending_offsets(tp)]


class CleanupResult(NamedTuple):
    expired_offsets: list[str]  # "group/topic/partition"
    deleted_groups: list[str]


class OffsetExpiration:
    """The expiration timer of one group coordinator and the cleanup it runs."""

    def __init__(self, gc: "GroupCoordinator", retention_ms: int = DEFAULT_RETENTION_MS,
                 check_interval_ms: int = DEFAULT_CHECK_INTERVAL_MS) -> None:
        self.gc = gc
        self.retention_ms = retention_ms
        self.check_interval_ms = check_interval_ms
        self.next_check: int | None = None  # armed at load (Kafka: scheduleGroupMetadataExpiration)

    def schedule(self, now_ms: int) -> None:
        self.next_check = now_ms + self.check_interval_ms

    def tick(self, now_ms: int) -> int | None:
        """Run the cleanup when due; the next check's time."""
        if self.next_check is not None and now_ms >= self.next_check:
            self.cleanup(now_ms)
            self.schedule(now_ms)
        return self.next_check

    def advance(self, now_ms: int, advanced_ms: int, group_id: str | None = None) -> CleanupResult:
        """What the checks due within ``advanced_ms`` would remove, removed now: the conditions are
        evaluated at the last check time up to ``now_ms + advanced_ms`` (none is due: nothing)."""
        later = now_ms + advanced_ms
        if self.next_check is None or self.next_check > later:
            return CleanupResult([], [])
        last = self.next_check + (later - self.next_check) // self.check_interval_ms * self.check_interval_ms
        return self.cleanup(now_ms, max(last, now_ms), group_id)

    def cleanup(self, now_ms: int, as_of_ms: int | None = None, group_id: str | None = None) -> CleanupResult:
        """Kafka: cleanupGroupMetadata, for every group (or ``group_id``), the conditions evaluated
        at ``as_of_ms`` (default ``now_ms``). A group whose tombstones cannot be written is left
        as it was, to be tried again at the next check, as Kafka's timer retries."""
        as_of = now_ms if as_of_ms is None else as_of_ms
        result = CleanupResult([], [])
        for group in [g for g in self.gc.groups.values() if group_id in (None, g.group_id)]:
            self._classic(group, now_ms, as_of, result)
        for group in [g for g in self.gc.consumer.groups.values() if group_id in (None, g.group_id)]:
            self._consumer(group, now_ms, as_of, result)
        if result.expired_offsets or result.deleted_groups:
            log.info("offset expiration removed %d offsets and %d groups", len(result.expired_offsets),
                     len(result.deleted_groups))
        return result

    def _classic(self, group: GroupMetadata, now_ms: int, as_of: int, result: CleanupResult) -> None:
        condition = classic_condition(group)
        expired = [] if condition is None else expired_offsets(group, condition, as_of, self.retention_ms)
        delete = group.is_(GroupState.EMPTY) and _all_gone(group, expired)
        if not expired and not delete:
            return
        try:  # Kafka 3.9 (GroupMetadataManager.cleanupGroupMetadata): a group tombstone once it had a generation
            self.gc.store.write_tombstones(group.group_id, expired, delete and group.generation_id > 0, now_ms)
        except KafkaError as e:
            log.warning("could not expire the offsets of group %s: %s", group.group_id, e)
            return
        group.remove_offsets(expired)
        if delete:
            group.transition(GroupState.DEAD, now_ms)
            self._forget(group.group_id)
            self.gc.groups.pop(group.group_id, None)
        _report(result, group.group_id, expired, delete)

    def _consumer(self, group: ConsumerGroup, now_ms: int, as_of: int, result: CleanupResult) -> None:
        condition = consumer_condition(group, self.gc.consumer.resolve_regex)
        expired = expired_offsets(group, condition, as_of, self.retention_ms)
        delete = not group.members and _all_gone(group, expired)
        if not expired and not delete:
            return
        try:
            self.gc.store.write_tombstones(group.group_id, expired, False, now_ms)
            group.remove_offsets(expired)
            _report(result, group.group_id, expired, False)
            if delete:  # Kafka: maybeDeleteGroup -- the consumer group's own tombstones
                self.gc.consumer.delete(group, now_ms)
                self._forget(group.group_id)
                _report(result, group.group_id, [], True)
        except KafkaError as e:
            log.warning("could not expire the offsets of group %s: %s", group.group_id, e)

    def on_topic_deleted(self, topic: str, now_ms: int) -> list[str]:
        """Kafka: OffsetMetadataManager.onPartitionsDeleted -- a deleted topic's committed and pending
        offsets get tombstones in every group at once, whatever the retention; the groups stay (an
        Empty one left without offsets goes at the next check). Returns "group/topic/partition"s."""
        removed: list[str] = []
        for group in [*self.gc.groups.values(), *self.gc.consumer.groups.values()]:
            tps = sorted({tp for tp in group.offsets if tp[0] == topic}
                         | {tp for pending in group.pending_txn_offsets.values() for tp in pending if tp[0] == topic})
            if not tps:
                continue
            try:
                self.gc.store.write_tombstones(group.group_id, tps, False, now_ms)
            except KafkaError as e:
                log.warning("could not remove the offsets of deleted topic %s from group %s: %s", topic,
                            group.group_id, e)
                continue
            group.remove_offsets(tps)
            removed += [f"{group.group_id}/{t}/{p}" for t, p in tps]
        return removed

    def _forget(self, group_id: str) -> None:
        for pid in list(self.gc.producer_groups):
            self.gc._forget_producer_group(pid, group_id)


def _all_gone(group: OffsetsHolder, expired: list[TP]) -> bool:
    """Kafka: cleanupExpiredOffsets' answer -- every offset expired and no transaction open."""
    return len(expired) == len(group.offsets) and not group.pending_txn_offsets


def _report(result: CleanupResult, group_id: str, expired: list[TP], deleted: bool) -> None:
    result.expired_offsets.extend(f"{group_id}/{t}/{p}" for t, p in expired)
    if deleted:
        result.deleted_groups.append(group_id)
