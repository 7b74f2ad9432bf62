"""Control batches (ControlRecordType.java, EndTransactionMarker.java).

A control record's key is (version int16, type int16); a transaction
marker's value is (version int16, coordinator_epoch int32).
"""

import struct
from enum import IntEnum

from .records import InvalidBatch, decode_batch, encode_batch

_KEY = struct.Struct(">hh")
_END_TXN_VALUE = struct.Struct(">hi")
CONTROL_KEY_VERSION = 0
END_TXN_MARKER_VERSION = 0


class ControlRecordType(IntEnum):
    ABORT = 0
    COMMIT = 1
    LEADER_CHANGE = 2
    SNAPSHOT_HEADER = 3
    SNAPSHOT_FOOTER = 4
    KRAFT_VERSION = 5
    KRAFT_VOTERS = 6


def encode_end_txn_marker(
    *,
    producer_id: int,
    producer_epoch: int,
    coordinator_epoch: int,
    commit: bool,
    timestamp: int,
    base_offset: int = 0,
    partition_leader_epoch: int = -1,
) -> bytes:
    """The batch MemoryRecords.writeEndTransactionalMarker writes."""
    kind = ControlRecordType.COMMIT if commit else ControlRecordType.ABORT
    key = _KEY.pack(CONTROL_KEY_VERSION, kind)
    value = _END_TXN_VALUE.pack(END_TXN_MARKER_VERSION, coordinator_epoch)
    return encode_batch(
        [(key, value, (), timestamp)],
        base_offset=base_offset,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        is_transactional=True,
        is_control=True,
        partition_leader_epoch=partition_leader_epoch,
    )


def read_control_type(batch) -> ControlRecordType | int:
    """Type of the first record of a control batch; unknown types as int."""
    return _parse_key(_first_control_record(batch).key)


def read_end_txn_marker(batch) -> tuple[ControlRecordType, int]:
    """(ABORT or COMMIT, coordinator_epoch) of a transaction marker batch."""
    record = _first_control_record(batch)
    kind = _parse_key(record.key)
    if kind not in (ControlRecordType.ABORT, ControlRecordType.COMMIT):
        raise InvalidBatch(f"control record type {kind} is not a transaction marker")
    value = record.value
    # EndTransactionMarker.deserializeValue: newer versions may append fields.
    if value is None or len(value) < _END_TXN_VALUE.size:
        raise InvalidBatch("end transaction marker value is too short")
    version, coordinator_epoch = _END_TXN_VALUE.unpack_from(value)
    if version < 0:
        raise InvalidBatch(f"invalid end transaction marker version {version}")
    return kind, coordinator_epoch


def _first_control_record(batch):
    header, records = decode_batch(batch)
    if not header.is_control:
        raise InvalidBatch("not a control batch")
    if not records:
        raise InvalidBatch("control batch has no records")
    return records[0]


def _parse_key(key: bytes | None) -> ControlRecordType | int:
    # ControlRecordType.parseTypeId: only a negative version is corruption;
    # other versions keep the type at the same place.
    if key is None or len(key) < _KEY.size:
        raise InvalidBatch("control record key is too short")
    version, kind = _KEY.unpack_from(key)
    if version < 0:
        raise InvalidBatch(f"invalid control record key version {version}")
    try:
        return ControlRecordType(kind)
    except ValueError:
        return kind
