"""Committed offsets of a group coordinator (Kafka 3.9: GroupCoordinator.handleCommitOffsets,
handleTxnCommitOffsets, handleFetchOffsets, handleDeleteGroups, handleDeleteOffsets and
GroupMetadataManager.storeOffsets/getOffsets/handleTxnCompletion).

Mixed into :class:`~shim.coordinators.group.coordinator.GroupCoordinator`. Plain commits are
appended and applied at once. A transactional commit (TxnOffsetCommit) is appended as a
transactional batch of the producer and held as pending per producer id until the producer's
COMMIT or ABORT marker reaches the group's offsets partition (:meth:`OffsetOperations.on_marker`):
COMMIT makes them the committed offsets unless a plain commit was written after them, ABORT drops
them. While any is pending for a partition, OffsetFetch with RequireStable answers
UNSTABLE_OFFSET_COMMIT for it (KIP-447).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...errors import ErrorCode, KafkaError
from ..txn.coordinator import OFFSETS_TOPIC
from .records import OffsetAndMetadata
from .consumer_group import ConsumerGroup
from .state import CommittedOffset, GroupMetadata, GroupState, OffsetsHolder, check_group_id

if TYPE_CHECKING:
    from .coordinator import GroupCoordinator

S = GroupState
E = ErrorCode
TP = tuple[str, int]
OFFSET_METADATA_MAX_BYTES = 4096  # Kafka: offset.metadata.max.bytes


TXN_ABORTABLE_VERSION = 4  # TxnOffsetCommit v4+ knows TRANSACTION_ABORTABLE (KIP-890 part 1)
ADD_PARTITION_VERSION = 5  # TxnOffsetCommit v5 adds the offsets partition itself (transaction version 2)


def verification_error(code: ErrorCode, version: int = 3) -> ErrorCode:
    """The leader's mapping of the coordinator's answer for TxnOffsetCommit (Kafka:
    AddPartitionsToTxnManager, txnOffsetCommitRequestVersionToTransactionSupportedOperation)."""
    if code == E.producer_fenced:
        return E.invalid_producer_epoch
    if code == E.transaction_abortable and version < TXN_ABORTABLE_VERSION:
        return E.invalid_txn_state
    return code


class OffsetOperations:
    groups: dict[str, GroupMetadata]
    producer_groups: dict[int, set[str]]

    # -- OffsetCommit (8) -------------------------------------------------------------------

    def commit_offsets(self: "GroupCoordinator", group_id: str, member_id: str, group_instance_id: str | None,
                       generation_id: int, offsets: dict[TP, OffsetAndMetadata], now_ms: int,
                       version: int = 9) -> dict[TP, ErrorCode]:
        """Kafka: handleCommitOffsets. Generation -1 is a consumer without group management; a
        consumer group's members name their member epoch instead."""
        consumer = self.consumer.groups.get(group_id)
        if consumer is not None:
            error = validate_consumer_commit(consumer, member_id, group_instance_id, generation_id, False, version)
            return {tp: error for tp in offsets} if error is not None else self._store(consumer, offsets, now_ms)
        group = self.groups.get(group_id)
        try:
            check_group_id(group_id, allow_empty=True)
            if group is None:
                if generation_id >= 0:
                    raise KafkaError(E.illegal_generation, f"group {group_id!r} has no generation {generation_id}")
                group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=now_ms)
            _raise(self._validate_offset_commit(group, generation_id, member_id, group_instance_id, False))
            if group.is_(S.COMPLETING_REBALANCE):
                raise KafkaError(E.rebalance_in_progress)
            if group.state in (S.STABLE, S.PREPARING_REBALANCE):
                self._schedule_heartbeat(group.members[member_id], now_ms)
        except KafkaError as e:
            return {tp: e.code for tp in offsets}
        return self._store(group, offsets, now_ms)

    def _store(self: "GroupCoordinator", group: OffsetsHolder, offsets: dict[TP, OffsetAndMetadata], now_ms: int,
               producer: tuple[int, int] | None = None) -> dict[TP, ErrorCode]:
        """Kafka: storeOffsets -- too-long metadata is refused per partition, the rest written in one batch."""
        ok = {tp: o for tp, o in offsets.items() if len(o.metadata.encode()) <= OFFSET_METADATA_MAX_BYTES}
        results = {tp: E.offset_metadata_too_large for tp in offsets if tp not in ok}
        if not ok:
            return results
        try:
            if producer is None:
                position = self.store.store_offsets(group.group_id, ok, now_ms)
            else:
                position = self.store.store_txn_offsets(group.group_id, *producer, ok, now_ms)
        except KafkaError as e:
            return results | {tp: e.code for tp in ok}
        target = group.offsets if producer is None else group.pending_txn_offsets.setdefault(producer[0], {})
        for tp, o in ok.items():
            target[tp] = CommittedOffset(o, position)
        if producer is not None:
            self.producer_groups.setdefault(producer[0], set()).add(group.group_id)
        return results | {tp: E.none for tp in ok}

    def _validate_offset_commit(self: "GroupCoordinator", group: GroupMetadata, generation_id: int, member_id: str,
                                group_instance_id: str | None, transactional: bool) -> ErrorCode | None:
        """Kafka: validateOffsetCommit."""
        if generation_id < 0 and group.is_(S.EMPTY):
            return None  # the admin client, or a consumer without group management
        if generation_id >= 0 or member_id != "" or group_instance_id is not None:
            error = self._validate_current_member(group, member_id, group_instance_id)
            if error is None and generation_id != group.generation_id:
                error = E.illegal_generation
            return error
        if not transactional and not group.is_(S.EMPTY):
            return E.unknown_member_id  # only members commit to a non-empty group
        return None

    # -- TxnOffsetCommit (28) ---------------------------------------------------------------

    def commit_txn_offsets(self: "GroupCoordinator", group_id: str, transactional_id: str, producer_id: int,
                           producer_epoch: int, member_id: str, group_instance_id: str | None, generation_id: int,
                           offsets: dict[TP, OffsetAndMetadata], now_ms: int, version: int = 3,
                           new_coordinator: bool = False) -> dict[TP, ErrorCode]:
        """The group's offsets partition must be in the producer's ongoing transaction
        (AddOffsetsToTxn; from request v5 it is added here); KIP-447 member checks apply when the
        request names a member or generation. The order of the checks is the coordinator's:
        ``new_coordinator`` is Kafka 4's (GroupCoordinatorService.commitTransactionalOffsets,
        OffsetMetadataManager.commitTransactionalOffset), else Kafka 3.9's GroupCoordinator."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return {tp: e.code for tp in offsets}
        if new_coordinator:
            return self._commit_txn_offsets_4(group_id, transactional_id, producer_id, producer_epoch, member_id,
                                              group_instance_id, generation_id, offsets, now_ms, version)
        # Kafka 3.9: handleTxnCommitOffsets adds an unknown group (Empty, in memory) before it
        # verifies the transaction, so a refused commit leaves it behind until the offsets
        # retention check finds it without offsets
        group = self._offsets_group(group_id)
        if group is None:
            group = self.groups[group_id] = GroupMetadata(group_id, state_timestamp=now_ms)
        try:
            self._verify_in_transaction(group_id, transactional_id, producer_id, producer_epoch, now_ms, version)
            self._validate_txn_commit(group, member_id, group_instance_id, generation_id, version)
        except KafkaError as e:
            return {tp: e.code for tp in offsets}
        return self._store(group, offsets, now_ms, producer=(producer_id, producer_epoch))

    def _commit_txn_offsets_4(self: "GroupCoordinator", group_id: str, transactional_id: str, producer_id: int,
                              producer_epoch: int, member_id: str, group_instance_id: str | None, generation_id: int,
                              offsets: dict[TP, OffsetAndMetadata], now_ms: int, version: int) -> dict[TP, ErrorCode]:
        """Kafka 4: the transactional write verifies the transaction before its operation runs;
        the operation finds the group, creating a simple one only for generation -1 (an unknown
        group with a generation is ILLEGAL_GENERATION), and a refused or failed write is reverted,
        so no group is left behind."""
        try:
            self._verify_in_transaction(group_id, transactional_id, producer_id, producer_epoch, now_ms, version)
            group = self._offsets_group(group_id)
            created = group is None
            if created:
                if generation_id >= 0:
                    raise KafkaError(E.illegal_generation, f"group {group_id!r} has no generation {generation_id}")
                group = GroupMetadata(group_id, state_timestamp=now_ms)
            self._validate_txn_commit(group, member_id, group_instance_id, generation_id, version)
        except KafkaError as e:
            return {tp: e.code for tp in offsets}
        if created:
            self.groups[group_id] = group
        results = self._store(group, offsets, now_ms, producer=(producer_id, producer_epoch))
        if created and any(code not in (E.none, E.offset_metadata_too_large) for code in results.values()):
            del self.groups[group_id]  # the write failed: the runtime reverts the operation's changes
        return results

    def _validate_txn_commit(self: "GroupCoordinator", group: OffsetsHolder, member_id: str,
                             group_instance_id: str | None, generation_id: int, version: int) -> None:
        if isinstance(group, GroupMetadata):
            _raise(self._validate_offset_commit(group, generation_id, member_id, group_instance_id, True))
        else:  # Kafka: TxnOffsetCommit has no STALE_MEMBER_EPOCH; it answers ILLEGAL_GENERATION
            error = validate_consumer_commit(group, member_id, group_instance_id, generation_id, True, version)
            _raise(E.illegal_generation if error == E.stale_member_epoch else error)

    def _verify_in_transaction(self: "GroupCoordinator", group_id: str, transactional_id: str, producer_id: int,
                               producer_epoch: int, now_ms: int, version: int) -> None:
        """KIP-890, synchronously: the first write of a transaction to the partition asks the
        transaction coordinator to verify it (part 1) or, from v5, to add it (part 2); later ones
        are checked by the log (producer epoch)."""
        if self.store.in_ongoing_txn(group_id, producer_id):
            return
        topic, partition = self.txn.offsets_partition(group_id)
        try:
            if version >= ADD_PARTITION_VERSION:
                self.txn.add_offsets(transactional_id, producer_id, producer_epoch, group_id, now_ms,
                                     transaction_version=2)
            else:
                self.txn.verify_partition(transactional_id, producer_id, producer_epoch, topic, partition)
        except KafkaError as e:
            raise KafkaError(verification_error(e.code, version), e.message) from None

    def on_marker(self: "GroupCoordinator", producer_id: int, topic: str, partition: int, commit: bool) -> None:
        """A COMMIT/ABORT marker was written (Kafka: handleTxnCompletion): settle the producer's
        pending offsets of the groups in that offsets partition."""
        if topic != OFFSETS_TOPIC:
            return
        for group_id in list(self.producer_groups.get(producer_id, ())):
            if partition not in self.store.partitions_of(group_id):  # a transaction open across an upgrade
                continue
            group = self._offsets_group(group_id)
            if group is not None:
                group.complete_txn_offsets(producer_id, commit)
            self._forget_producer_group(producer_id, group_id)

    def _forget_producer_group(self, producer_id: int, group_id: str) -> None:
        groups = self.producer_groups.get(producer_id)
        if groups is not None:
            groups.discard(group_id)
            if not groups:
                del self.producer_groups[producer_id]

    # -- OffsetFetch (9) --------------------------------------------------------------------

    def fetch_offsets(self, group_id: str, require_stable: bool,
                      partitions: list[TP] | None) -> list[tuple[TP, OffsetAndMetadata | None, ErrorCode]]:
        """Kafka: getOffsets. ``partitions`` None means every partition with a committed offset."""
        group = self._offsets_group(group_id)
        if group is None:
            return [(tp, None, E.none) for tp in partitions or ()]
        out = []
        for tp in group.offsets if partitions is None else partitions:
            if require_stable and group.has_pending_offsets(tp):
                out.append((tp, None, E.unstable_offset_commit))
            else:
                committed = group.offsets.get(tp)
                out.append((tp, committed.value if committed else None, E.none))
        return out

    def validate_offset_fetch(self, group_id: str, member_id: str | None, member_epoch: int) -> ErrorCode:
        """Kafka: ConsumerGroup.validateOffsetFetch (OffsetFetch v9+). Classic groups check nothing."""
        group = self.consumer.groups.get(group_id)
        if group is None or (member_id is None and member_epoch < 0):
            return E.none
        member = group.members.get(member_id)
        if member is None:
            return E.unknown_member_id
        if member_epoch == member.member_epoch:
            return E.none
        return E.illegal_generation if member.uses_classic_protocol else E.stale_member_epoch

    def _offsets_group(self, group_id: str) -> OffsetsHolder | None:
        """The group of either type that holds ``group_id``'s offsets."""
        return self.consumer.groups.get(group_id) or self.groups.get(group_id)

    # -- DeleteGroups (42), OffsetDelete (47) -----------------------------------------------

    def delete_groups(self, group_ids: list[str], now_ms: int) -> dict[str, ErrorCode]:
        """Kafka: handleDeleteGroups -- only empty groups; their offsets go with them."""
        results = {}
        for group_id in dict.fromkeys(group_ids):
            group = self.groups.get(group_id)
            consumer = self.consumer.groups.get(group_id)
            unwritable = self._unwritable(group_id) if group is not None or consumer is not None else None
            if unwritable is not None:
                results[group_id] = unwritable
            elif consumer is not None:
                results[group_id] = self._delete_consumer_group(consumer, now_ms)
            elif group is None:
                results[group_id] = E.group_id_not_found
            elif not group.is_(S.EMPTY):
                results[group_id] = E.non_empty_group
            else:
                group.transition(S.DEAD, now_ms)
                self._cleanup(group, list(group.offsets), now_ms)
                results[group_id] = E.none
        return results

    def delete_offsets(self: "GroupCoordinator", group_id: str, partitions: list[TP],
                       now_ms: int) -> tuple[ErrorCode, dict[TP, ErrorCode]]:
        """Kafka: handleDeleteOffsets -- not for topics an active consumer group subscribes to."""
        try:
            check_group_id(group_id)
        except KafkaError as e:
            return e.code, {}
        group = self.groups.get(group_id)
        consumer = self.consumer.groups.get(group_id)
        unwritable = self._unwritable(group_id) if group is not None or consumer is not None else None
        if unwritable is not None:
            return unwritable, {}
        if consumer is not None:
            return E.none, self._delete_consumer_offsets(consumer, partitions, now_ms)
        if group is None:
            return E.group_id_not_found, {}
        results: dict[TP, ErrorCode] = {}
        if group.is_(S.EMPTY):
            eligible = list(partitions)
        elif group.protocol_type == "consumer":
            subscribed = group.subscribed_topics()
            eligible = [tp for tp in partitions if subscribed is not None and tp[0] not in subscribed]
            kept = set(eligible)
            results = {tp: E.group_subscribed_to_topic for tp in partitions if tp not in kept}
        else:
            return E.non_empty_group, {}
        if eligible:
            self._cleanup(group, eligible, now_ms)
        return E.none, results | {tp: E.none for tp in eligible}

    def _unwritable(self, group_id: str) -> ErrorCode | None:
        """The error a delete answers when the group's offsets partition cannot be written, else None."""
        try:
            self.store.check_writable(group_id)
        except KafkaError as e:
            return e.code
        return None

    def _delete_consumer_group(self: "GroupCoordinator", group: ConsumerGroup, now_ms: int) -> ErrorCode:
        if group.members:
            return E.non_empty_group
        try:
            self.store.write_tombstones(group.group_id, group.remove_offsets(list(group.offsets)), False, now_ms)
            self.consumer.delete(group, now_ms)
        except KafkaError as e:
            return e.code
        for pid in list(self.producer_groups):
            self._forget_producer_group(pid, group.group_id)
        return E.none

    def _delete_consumer_offsets(self: "GroupCoordinator", group: ConsumerGroup, partitions: list[TP],
                                 now_ms: int) -> dict[TP, ErrorCode]:
        subscribed = group.subscribed_topic_names(self.consumer.resolve_regex) if group.members else set()
        eligible = [tp for tp in partitions if tp[0] not in subscribed]
        if eligible:
            self.store.write_tombstones(group.group_id, group.remove_offsets(eligible), False, now_ms)
        return {tp: E.group_subscribed_to_topic for tp in partitions if tp[0] in subscribed} | {
            tp: E.none for tp in eligible}

    def _cleanup(self, group: GroupMetadata, partitions: list[TP], now_ms: int) -> None:
        """Kafka: cleanupGroupMetadata -- drop offsets, write their tombstones; an empty group without
        offsets is dead and goes too (its metadata tombstone only if it ever had a generation)."""
        removed = group.remove_offsets(partitions)
        if group.is_(S.EMPTY) and not group.has_offsets():
            group.transition(S.DEAD, now_ms)
        dead = group.is_(S.DEAD)
        if dead:
            self.groups.pop(group.group_id, None)
            for pid in list(self.producer_groups):
                self._forget_producer_group(pid, group.group_id)
        self.store.write_tombstones(group.group_id, removed, dead and group.generation_id > 0, now_ms)


def validate_consumer_commit(group: ConsumerGroup, member_id: str, instance_id: str | None, member_epoch: int,
                             transactional: bool, version: int) -> ErrorCode | None:
    """Kafka: ConsumerGroup.validateOffsetCommit -- a member commits at its current member epoch
    (STALE_MEMBER_EPOCH otherwise), with OffsetCommit v9+; anyone commits to an empty group."""
    if member_epoch < 0 and not group.members:
        return None
    if transactional and member_epoch < 0 and member_id == "" and instance_id is None:
        return None
    member = group.members.get(member_id)
    if member is None:
        return E.unknown_member_id
    if member.uses_classic_protocol:  # its generation is its member epoch
        return E.illegal_generation if member_epoch != member.member_epoch else None
    if not transactional and version < 9:
        return E.unsupported_version
    return E.stale_member_epoch if member_epoch != member.member_epoch else None


def _raise(error: ErrorCode | None) -> None:
    if error is not None:
        raise KafkaError(error)
