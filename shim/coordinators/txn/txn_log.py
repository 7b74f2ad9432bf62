"""Records of ``__transaction_state`` (Kafka: TransactionLog.scala, TransactionLogKey/Value v0).

Key: version int16 (0), TransactionalId string. Value: version int16 (0), ProducerId int64,
ProducerEpoch int16, TransactionTimeoutMs int32, TransactionStatus int8,
TransactionPartitions [Topic string, PartitionIds [int32]] (null when Empty),
TransactionLastUpdateTimestampMs int64, TransactionStartTimestampMs int64. A null value is a
tombstone. Strings are int16-length-prefixed UTF-8, arrays int32-count-prefixed (null = -1).

Value v1 (written once transaction.version >= 1 is finalized, i.e. Kafka 4.x emulation) is the
same fields in the flexible encoding -- unsigned-varint lengths plus one (0 = null) for strings
and arrays, a tagged-field section after each struct -- with tagged fields 0 PreviousProducerId,
1 NextProducerId and 2 ClientTransactionVersion written when not at their defaults (-1, -1, 0).
"""

from __future__ import annotations

import struct
from collections import defaultdict

from kafka_codecs.varint import decode_uvarint, encode_uvarint

from .state import TxnMetadata, TxnState

_I16, _I32 = struct.Struct(">h"), struct.Struct(">i")
_VALUE_HEAD = struct.Struct(">hqhib")
_VALUE_TAIL = struct.Struct(">qq")


def _string(s: str) -> bytes:
    raw = s.encode()
    return _I16.pack(len(raw)) + raw


def encode_key(transactional_id: str) -> bytes:
    return _I16.pack(0) + _string(transactional_id)


def encode_value(m: TxnMetadata, version: int = 0) -> bytes:
    if version >= 1:
        return _encode_value_v1(m)
    out = [_VALUE_HEAD.pack(0, m.producer_id, m.producer_epoch, m.timeout_ms, int(m.state))]
    if m.state is TxnState.EMPTY:
        out.append(_I32.pack(-1))
    else:
        by_topic = _by_topic(m)
        out.append(_I32.pack(len(by_topic)))
        for topic, parts in by_topic.items():
            out.append(_string(topic) + _I32.pack(len(parts)) + b"".join(_I32.pack(p) for p in parts))
    out.append(_VALUE_TAIL.pack(m.last_update_ms, m.txn_start_ms))
    return b"".join(out)


def _by_topic(m: TxnMetadata) -> dict[str, list[int]]:
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, p in sorted(m.partitions):
        by_topic[topic].append(p)
    return by_topic


_TAG_PREVIOUS_PRODUCER_ID, _TAG_NEXT_PRODUCER_ID, _TAG_CLIENT_TXN_VERSION = 0, 1, 2


def _encode_value_v1(m: TxnMetadata) -> bytes:
    out = [_VALUE_HEAD.pack(1, m.producer_id, m.producer_epoch, m.timeout_ms, int(m.state))]
    if m.state is TxnState.EMPTY:
        out.append(encode_uvarint(0))
    else:
        by_topic = _by_topic(m)
        out.append(encode_uvarint(len(by_topic) + 1))
        for topic, parts in by_topic.items():
            raw = topic.encode()
            out += [encode_uvarint(len(raw) + 1), raw, encode_uvarint(len(parts) + 1), b"".join(_I32.pack(p) for p in parts),
                    encode_uvarint(0)]
    out.append(_VALUE_TAIL.pack(m.last_update_ms, m.txn_start_ms))
    tags = [(tag, data) for tag, data, default in (
        (_TAG_PREVIOUS_PRODUCER_ID, struct.pack(">q", m.last_producer_id), m.last_producer_id == -1),
        (_TAG_NEXT_PRODUCER_ID, struct.pack(">q", m.next_producer_id), m.next_producer_id == -1),
        (_TAG_CLIENT_TXN_VERSION, _I16.pack(m.client_transaction_version), m.client_transaction_version == 0),
    ) if not default]
    out.append(encode_uvarint(len(tags)))
    out += [encode_uvarint(tag) + encode_uvarint(len(data)) + data for tag, data in tags]
    return b"".join(out)


def _decode_value_v1(transactional_id: str, buf: bytes) -> TxnMetadata:
    _, pid, epoch, timeout, status = _VALUE_HEAD.unpack_from(buf)
    count, pos = decode_uvarint(buf, _VALUE_HEAD.size)
    partitions = set()
    for _ in range(max(count - 1, 0)):
        n, pos = decode_uvarint(buf, pos)
        topic, pos = buf[pos:pos + n - 1].decode(), pos + n - 1
        n, pos = decode_uvarint(buf, pos)
        for _ in range(n - 1):
            partitions.add((topic, _I32.unpack_from(buf, pos)[0]))
            pos += 4
        _, pos = _skip_tags(buf, pos)
    last_update, start = _VALUE_TAIL.unpack_from(buf, pos)
    tags, _ = _skip_tags(buf, pos + _VALUE_TAIL.size)
    m = TxnMetadata(transactional_id, pid, epoch, timeout, TxnState(status), partitions=partitions,
                    txn_start_ms=start, last_update_ms=last_update)
    if _TAG_PREVIOUS_PRODUCER_ID in tags:
        m.last_producer_id = struct.unpack(">q", tags[_TAG_PREVIOUS_PRODUCER_ID])[0]
    if _TAG_NEXT_PRODUCER_ID in tags:
        m.next_producer_id = struct.unpack(">q", tags[_TAG_NEXT_PRODUCER_ID])[0]
    if _TAG_CLIENT_TXN_VERSION in tags:
        m.client_transaction_version = _I16.unpack(tags[_TAG_CLIENT_TXN_VERSION])[0]
    return m


def _skip_tags(buf: bytes, pos: int) -> tuple[dict[int, bytes], int]:
    count, pos = decode_uvarint(buf, pos)
    tags = {}
    for _ in range(count):
        tag, pos = decode_uvarint(buf, pos)
        size, pos = decode_uvarint(buf, pos)
        tags[tag], pos = buf[pos:pos + size], pos + size
    return tags, pos


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
        if _I16.unpack_from(buf)[0] >= 1:
            return _decode_value_v1(transactional_id, buf)
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
