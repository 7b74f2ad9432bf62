"""Records of ``__transaction_state`` (Kafka: TransactionLog.scala, TransactionLogKey/Value v0).

Key: version int16 (0), TransactionalId string. Value: version int16 (0), ProducerId int64,
ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
TransactionPartitions [Topic string, PartitionIds [int32]] (null when Empty),
TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64. A null value is a
tombstone. Strings are int16-length-prefixed UTF-8, arrays int32-count-prefixed (null = -1).
"""

from __future__ import annotations

import struct
from collections import defaultdict

from .state import TxnMetadata, TxnState

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")
_VALUE_HEAD = struct.Struct(">hqhib")
_VALUE_TAIL = struct.Struct(">qq")


def _string(s: str) -> bytes:
    raw = s.encode()
    return _I16.pack(len(raw)) + raw


def encode_key(transactional_id: str) -> bytes:
    return _I16.pack(0) + _string(transactional_id)


def encode_value(m: TxnMetadata) -> bytes:
    out = [_VALUE_HEAD.pack(0, m.producer_id, m.producer_epoch, m.timeout_ms, int(m.state))]
    if m.state is TxnState.EMPTY:
        out.append(_I32.pack(-1))
    else:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for topic, p in sorted(m.partitions):
            by_topic[topic].append(p)
        out.append(_I32.pack(len(by_topic)))
        for topic, parts in by_topic.items():
            out.append(_string(topic) + _I32.pack(len(parts)) + b"".join(_I32.pack(p) for p in parts))
    out.append(_VALUE_TAIL.pack(m.last_update_ms, m.txn_start_ms))
    return b"".join(out)


def _read_string(buf: bytes, pos: int) -> tuple[str, int]:
    (n,) = _I16.unpack_from(buf, pos)
    return buf[pos + 2 : pos + 2 + n].decode(), pos + 2 + n


class UnreadableRecord(ValueError):
    """A __transaction_state record this broker cannot read (skipped on load with a warning)."""


def decode_key(buf: bytes) -> str:
    try:
        return _read_string(buf, 2)[0]
    except (struct.error, TypeError, UnicodeDecodeError) as exc:
        raise UnreadableRecord(f"transaction log key: {exc}") from None


def decode_value(transactional_id: str, buf: bytes) -> TxnMetadata:
    try:
        return _decode_value(transactional_id, buf)
    except (struct.error, TypeError, ValueError, UnicodeDecodeError) as exc:
        raise UnreadableRecord(f"transaction log value of {transactional_id!r}: {exc}") from None


def _decode_value(transactional_id: str, buf: bytes) -> TxnMetadata:
    _, pid, epoch, timeout, status = _VALUE_HEAD.unpack_from(buf)
    pos = _VALUE_HEAD.size
    (count,) = _I32.unpack_from(buf, pos)
    pos += 4
    partitions = set()
    for _ in range(max(count, 0)):
        topic, pos = _read_string(buf, pos)
        (n,) = _I32.unpack_from(buf, pos)
        pos += 4
        for _ in range(n):
            partitions.add((topic, _I32.unpack_from(buf, pos)[0]))
            pos += 4
    last_update, start = _VALUE_TAIL.unpack_from(buf, pos)
    return TxnMetadata(transactional_id, pid, epoch, timeout, TxnState(status), partitions=partitions,
                       txn_start_ms=start, last_update_ms=last_update)
