"""Group state in ``__consumer_offsets`` (Kafka: GroupMetadataManager storeGroup/storeOffsets and
doLoadGroupsAndOffsets).

Writes are COORDINATOR appends of :meth:`PartitionLog.append`, synchronous, before the caller
changes anything in memory; under fsync "always" the API's answer waits for their fsync
(shim.apis._coordinator_sync). Loading replays every offsets partition from its log start: the last
record per key wins, transactional offset records wait for their producer's COMMIT/ABORT marker,
and those still open at the end are the pending transactional offsets of an ongoing transaction
(which the partition's producer state confirms). A group's records in its legacy partition (data
directories of earlier versions, shim.coordinators.partitioning) are replayed before all others;
its tombstones are written there as well.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable

from kafka_codecs.batch import parse_header
from kafka_codecs.control import ControlRecordType, read_end_txn_marker
from kafka_codecs.records import InvalidBatch, decode_batch, encode_batch

from ...errors import ErrorCode, KafkaError
from ...storage.log_manager import LogManager
from ...storage.producer_state import Origin
from ..partitioning import CURRENT, LEGACY, legacy_partition
from ..txn.coordinator import OFFSETS_TOPIC, TransactionCoordinator
from ..share import members as share_members
from ..steps import Steps, drain
from . import consumer_records as cr
from . import records as rec
from .records import GroupRecord, MemberRecord, OffsetAndMetadata
from .state import CommittedOffset, GroupMetadata

log = logging.getLogger(__name__)

TP = tuple[str, int]
LEGACY_SHIFT = 1 << 62  # subtracted from a legacy record's offset: it is older than every other record


def offsets_compression(props: dict) -> int:
    """``offsets.topic.compression.codec`` (Kafka: a CompressionType id, 0 none to 4 zstd); an
    unknown id stops the broker, as Kafka's CompressionType.forId does."""
    value = int(props.get("offsets.topic.compression.codec", "0"))
    if value not in range(5):
        raise ValueError(f"Unknown compression type id: {value}")
    return value


def _no_replica_check(topic: str, partition: int, min_isr: int) -> None:
    pass


def group_store_error(code: ErrorCode) -> ErrorCode:
    """Kafka: the storeGroup callback's mapping of append errors."""
    if code in (ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas):
        return ErrorCode.coordinator_not_available
    if code == ErrorCode.kafka_storage_error:  # the offsets partition's directory is offline
        return ErrorCode.not_coordinator
    if code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large):
        return ErrorCode.unknown_server_error
    return code


def mapped(e: KafkaError, mapping: Callable[[ErrorCode], ErrorCode]) -> KafkaError:
    """The error a failed append answers the client: a code the mapping changes goes without the
    append's message (Kafka: handleOperationException answers it with a null message)."""
    code = mapping(e.code)
    return KafkaError(code, e.message if code == e.code else None)


def offset_commit_error(code: ErrorCode) -> ErrorCode:
    """Kafka: GroupMetadataManager.maybeConvertOffsetCommitError."""
    if code in (ErrorCode.unknown_topic_or_partition, ErrorCode.not_enough_replicas):
        return ErrorCode.coordinator_not_available
    if code == ErrorCode.kafka_storage_error:  # the offsets partition's directory is offline
        return ErrorCode.not_coordinator
    if code in (ErrorCode.message_too_large, ErrorCode.record_list_too_large):
        return ErrorCode.invalid_commit_offset_size
    return code


@dataclass(slots=True)
class LoadedPartition:
    """What one offsets partition holds after replay."""

    groups: dict[str, tuple[GroupRecord, int]] = field(default_factory=dict)  # group -> (record, offset)
    offsets: dict[str, dict[TP, CommittedOffset]] = field(default_factory=dict)
    # (replay phase, offsets partition, producer id) -> group -> tp: a marker settles what its
    # partition's replay of that phase holds
    pending: dict[tuple[int, int, int], dict[str, dict[TP, CommittedOffset]]] = field(default_factory=dict)
    consumer_records: list = field(default_factory=list)  # consumer-group records, in log order
    share_records: list = field(default_factory=list)  # share-group records, in log order


class GroupStore:
    def __init__(self, logs: LogManager, txn: TransactionCoordinator, compression: int = 0) -> None:
        self.logs = logs
        self.txn = txn
        # offsets.topic.compression.codec: every batch the coordinator writes is compressed so
        # (Kafka: GroupMetadataManager's and CoordinatorRuntime's compression)
        self.compression = compression
        # (topic, partition, min.insync.replicas) -> None, or NOT_ENOUGH_REPLICAS: the simulated
        # cluster's ISR of the group's offsets partition (shim.cluster.Cluster.check_min_isr)
        self.check_min_isr: Callable[[str, int, int], None] = _no_replica_check

    def partition_for(self, group_id: str) -> int:
        return self.txn.offsets_partition(group_id)[1]

    def partitions_of(self, group_id: str) -> tuple[int, ...]:
        """The group's Kafka partition and, if it differs, the legacy one older data may be in."""
        legacy = legacy_partition(group_id, self.txn.offsets_partitions)
        return (self.partition_for(group_id),) if legacy is None else (self.partition_for(group_id), legacy)

    def _log(self, group_id: str):
        self.logs.ensure_topic(OFFSETS_TOPIC, self.txn.offsets_partitions)
        return self.logs.get(OFFSETS_TOPIC, self.partition_for(group_id))

    def _append(self, group_id: str, records: list[tuple[bytes, bytes | None]], now_ms: int, **producer) -> int:
        """Append one batch to the group's offsets partition; returns its base offset. Tombstones
        go to the group's legacy partition too, so that once the log cleaner drops them from the
        Kafka partition no legacy record of the key comes back on the next start-up."""
        base_offset = self._append_to(self._log(group_id), records, now_ms, **producer)
        legacy = legacy_partition(group_id, self.txn.offsets_partitions)
        tombstones = [(k, v) for k, v in records if v is None]
        if legacy is not None and tombstones:
            self._append_to(self.logs.get(OFFSETS_TOPIC, legacy), tombstones, now_ms)
        return base_offset

    def _append_to(self, plog, records: list[tuple[bytes, bytes | None]], now_ms: int, **producer) -> int:
        """The coordinator's one write: an acks=all append (Kafka: CoordinatorPartitionWriter and
        GroupMetadataManager append with acks=-1), refused with NOT_ENOUGH_REPLICAS while the
        partition's ISR is below its min.insync.replicas; callers map the code for their API."""
        self.check_min_isr(OFFSETS_TOPIC, plog.partition, plog.config.min_insync_replicas)
        batch = encode_batch([(k, v, (), now_ms) for k, v in records], compression=self.compression, **producer)
        return plog.append(batch, parse_header(batch), now_ms, origin=Origin.COORDINATOR).base_offset

    # -- writes -----------------------------------------------------------------------------

    def store_group(self, group: GroupMetadata, assignment: dict[str, bytes], now_ms: int) -> None:
        """Write the group's metadata with ``assignment``; raises KafkaError with Kafka's storeGroup code.
        A record that cannot fit the offsets partition's max.message.bytes fails as its append would
        (UNKNOWN_SERVER_ERROR), without being built: 2,000 members subscribed to 1,000 topics each
        made an 80 MB record, built and checksummed in one turn of the loop (1 s) only to be refused."""
        self.check_fits(group, assignment)
        members = tuple(
            MemberRecord(m.member_id, m.group_instance_id, m.client_id, m.client_host, m.rebalance_timeout_ms,
                         m.session_timeout_ms, m.metadata(group.protocol_name), assignment[m.member_id])
            for m in group.members.values()
        )
        value = rec.group_value(GroupRecord(group.protocol_type or "", group.generation_id, group.protocol_name,
                                            group.leader_id, group.state_timestamp, members))
        try:
            self._append(group.group_id, [(rec.group_key(group.group_id), value)], now_ms)
        except KafkaError as e:
            raise mapped(e, group_store_error) from None

    def check_fits(self, group: GroupMetadata, assignment: dict[str, bytes]) -> None:
        """Raise what an append of the group's metadata record would fail with when the members'
        subscriptions and assignments alone cannot fit the offsets partition's max.message.bytes:
        MESSAGE_TOO_LARGE, answered UNKNOWN_SERVER_ERROR without a message as Kafka's storeGroup
        (3.9) and CoordinatorOperationExceptionHelper.handleOperationException (4.x) answer it."""
        try:
            limit = self._log(group.group_id).config.max_message_bytes
        except KafkaError as e:
            raise mapped(e, group_store_error) from None
        least = 0  # the members' subscriptions and assignments alone: the batch is larger
        for m in group.members.values():
            least += len(m.metadata(group.protocol_name)) + len(assignment[m.member_id])
            if least > limit:
                log.warning("the metadata of group %s exceeds the offsets topic's max.message.bytes %d",
                            group.group_id, limit)
                raise mapped(KafkaError(ErrorCode.message_too_large), group_store_error)

    def append_records(self, group_id: str, records: list[tuple[bytes, bytes | None]], now_ms: int) -> None:
        """Consumer-group records in one batch; KafkaError with Kafka's storeGroup code."""
        try:
            self._append(group_id, records, now_ms)
        except KafkaError as e:
            raise mapped(e, group_store_error) from None

    def store_offsets(self, group_id: str, offsets: dict[TP, OffsetAndMetadata], now_ms: int) -> int:
        return self._store_offsets(group_id, offsets, now_ms)

    def store_txn_offsets(self, group_id: str, producer_id: int, producer_epoch: int,
                          offsets: dict[TP, OffsetAndMetadata], now_ms: int) -> int:
        """Offsets as a transactional batch of the producer, base sequence 0 as Kafka writes it
        (GroupMetadataManager.storeOffsets): a coordinator append has no sequence to check."""
        return self._store_offsets(group_id, offsets, now_ms, producer_id=producer_id, producer_epoch=producer_epoch,
                                   base_sequence=0, is_transactional=True)

    def _store_offsets(self, group_id: str, offsets: dict[TP, OffsetAndMetadata], now_ms: int, **producer) -> int:
        records = [(rec.offset_key(group_id, t, p), rec.offset_value(o)) for (t, p), o in offsets.items()]
        try:
            return self._append(group_id, records, now_ms, **producer)
        except KafkaError as e:
            raise mapped(e, offset_commit_error) from None

    def check_writable(self, group_id: str) -> None:
        """KafkaError with Kafka's storeGroup code when the group's offsets partition is missing (a
        client created the offsets topic with fewer partitions): checked before a delete changes
        anything."""
        try:
            self._log(group_id)
        except KafkaError as e:
            raise mapped(e, group_store_error) from None

    def write_tombstones(self, group_id: str, tps: list[TP], group_too: bool, now_ms: int) -> None:
        records = [(rec.offset_key(group_id, t, p), None) for t, p in tps]
        if group_too:
            records.append((rec.group_key(group_id), None))
        if records:
            try:
                self._append(group_id, records, now_ms)
            except KafkaError as e:
                raise mapped(e, group_store_error) from None

    def in_ongoing_txn(self, group_id: str, producer_id: int) -> bool:
        return producer_id in self._log(group_id).producer_state.ongoing_txns

    # -- load -------------------------------------------------------------------------------

    def load(self) -> list[LoadedPartition]:
        return drain(self.load_steps())

    def load_steps(self) -> "Steps[list[LoadedPartition]]":
        """Replay every offsets partition into one :class:`LoadedPartition`: first each group's
        records found in its legacy partition (older data directories), then all others, so a
        group's newer records (those in its Kafka partition) override its legacy ones. A step
        ends after each batch (shim.coordinators.steps)."""
        if OFFSETS_TOPIC not in self.logs.topics:
            return []
        n = self.logs.topics[OFFSETS_TOPIC].partitions
        legacy_of: dict[str, int | None] = {}  # group -> its legacy partition, if any

        def legacy(group_id: str) -> int | None:
            if group_id not in legacy_of:
                legacy_of[group_id] = legacy_partition(group_id, n)
            return legacy_of[group_id]

        # First as if no record were in its legacy partition: a data directory written since groups
        # are placed as Kafka places them has none, and its partitions are then decoded once, not
        # twice (start-up replays the never-cleaned active segments, up to 100 MiB each).
        legacy_seen = False

        def current(group_id: str, p: int) -> bool:
            nonlocal legacy_seen
            if legacy(group_id) == p:
                legacy_seen = True
                return False
            return True

        out = LoadedPartition()
        for p in range(n):
            yield from self._replay_partition(out, p, CURRENT, lambda g, p=p: current(g, p))
        if not legacy_seen:  # the LEGACY phase would have replayed nothing
            return [out]
        out = LoadedPartition()
        for phase in (LEGACY, CURRENT):
            for p in range(n):
                in_phase = lambda g, p=p, phase=phase: (legacy(g) == p) == (phase == LEGACY)  # noqa: E731
                yield from self._replay_partition(out, p, phase, in_phase)
        return [out]

    def load_groups(self, group_ids: set[str]) -> LoadedPartition:
        """What the offsets partitions hold of ``group_ids`` (a coordinator move: Kafka's new
        coordinator loads them from the log), replayed in :meth:`load`'s order."""
        out = LoadedPartition()
        if OFFSETS_TOPIC not in self.logs.topics:
            return out
        placed = {g: self.partitions_of(g) for g in group_ids}  # (Kafka partition, legacy partition if any)
        for phase, index in ((LEGACY, 1), (CURRENT, 0)):
            for p in sorted({ps[index] for ps in placed.values() if len(ps) > index}):
                mine = lambda g, p=p, i=index: len(placed.get(g, ())) > i and placed[g][i] == p  # noqa: E731
                drain(self._replay_partition(out, p, phase, mine))
        return out

    def _replay_partition(self, out: LoadedPartition, partition: int, phase: int,
                          in_phase: Callable[[str], bool]) -> "Steps[None]":
        plog = self.logs.get(OFFSETS_TOPIC, partition)
        shift = LEGACY_SHIFT if phase == LEGACY else 0  # a legacy record is older than any other
        for raw in plog.iter_batches():
            h, records = decode_batch(raw)
            if h.is_control:
                _replay_marker(out, raw, (phase, partition, h.producer_id))
                yield
                continue
            for r in records:
                _replay_record(out, r, h, in_phase, (phase, partition), shift)
            yield
        ongoing = plog.producer_state.ongoing_txns
        for key in [k for k in out.pending if k[:2] == (phase, partition) and k[2] not in ongoing]:
            # No open transaction and no marker: the log cleaner removed a COMMIT marker once no batch of
            # its transaction was left beside it (an aborted transaction's batches go before its marker).
            _complete_pending(out, key, commit=True)


def _replay_marker(out: LoadedPartition, raw: bytes, key: tuple[int, int, int]) -> None:
    try:
        kind, _ = read_end_txn_marker(raw)
    except InvalidBatch:
        return  # other control records are not transaction markers
    _complete_pending(out, key, commit=kind is ControlRecordType.COMMIT)


def _complete_pending(out: LoadedPartition, key: tuple[int, int, int], commit: bool) -> None:
    for group_id, pending in out.pending.pop(key, {}).items():
        if not commit:
            continue
        committed = out.offsets.setdefault(group_id, {})
        for tp, c in pending.items():
            if tp not in committed or committed[tp].record_offset < c.record_offset:
                committed[tp] = c


def _replay_record(out: LoadedPartition, r, h, in_phase: Callable[[str], bool], scope: tuple[int, int],
                   shift: int) -> None:
    """Replay ``r`` if its group belongs to this phase of the replay (``in_phase``)."""
    try:
        if r.key is not None and len(r.key) >= 2 and int.from_bytes(r.key[:2], "big") in cr.KINDS:
            record = cr.decode(r.key, r.value)
            if in_phase(record.group_id):
                out.consumer_records.append(record)
            return
        if r.key is not None and len(r.key) >= 2 and int.from_bytes(r.key[:2], "big") in share_members.KINDS:
            record = share_members.decode(r.key, r.value)
            if in_phase(record.group_id):
                out.share_records.append(record)
            return
        key = rec.read_key(r.key)
        if not in_phase(key.group_id):
            return
        if isinstance(key, rec.GroupKey):
            if r.value is None:
                # Committed offsets have tombstones of their own (a classic group converted to a
                # consumer group keeps them); its pending transactional offsets go with it.
                out.groups.pop(key.group_id, None)
                for groups in out.pending.values():
                    groups.pop(key.group_id, None)
            else:
                out.groups[key.group_id] = (rec.read_group_value(r.value), h.base_offset)
            return
        value = None if r.value is None else CommittedOffset(rec.read_offset_value(r.value), h.base_offset - shift)
    except rec.UnknownRecord as e:
        log.warning("skipping a record of %s: %s", OFFSETS_TOPIC, e)
        return
    tp = (key.topic, key.partition)
    if h.is_transactional:
        target = out.pending.setdefault((*scope, h.producer_id), {}).setdefault(key.group_id, {})
    else:
        target = out.offsets.setdefault(key.group_id, {})
    if value is None:
        target.pop(tp, None)
        if not h.is_transactional:
            # A deleted offset also drops pending transactional ones, as deletion does live.
            for groups in out.pending.values():
                groups.get(key.group_id, {}).pop(tp, None)
    else:
        target[tp] = value
