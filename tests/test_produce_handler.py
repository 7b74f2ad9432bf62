"""The Produce handler end to end without sockets: kio-encoded requests through
shim.apis.dispatch.dispatch, decoded responses, error codes as a client sees them."""

from __future__ import annotations

import datetime
import itertools
import struct

import pytest

from kafka_codecs import Compression, encode_batch, encode_end_txn_marker, parse_header
from kafka_codecs.batch import write_crc
from shim.apis.dispatch import dispatch
from shim.errors import ErrorCode
from shim.protocol.messages import RequestHeader, decode_response, encode_request, request_module

PRODUCE = 0
TS = 1_700_000_000_000
PID = 31
_correlation = itertools.count(1)


def batch(seq=-1, n=1, *, pid=PID, epoch=0, compression=Compression.NONE, value_size=8, **kw) -> bytes:
    if seq < 0:
        pid = epoch = -1
    records = [(b"key-%d" % i, b"v" * value_size, [("h", b"x")], TS + i) for i in range(n)]
    return encode_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, compression=compression, **kw)


async def produce(node, partitions: dict, *, topic="t", version=9, acks=-1, transactional_id=None):
    """Send one Produce request; returns {partition: PartitionProduceResponse} or None (acks=0)."""
    m = request_module(PRODUCE, version)
    request = m.ProduceRequest(
        transactional_id=transactional_id,
        acks=acks,
        timeout=datetime.timedelta(seconds=5),
        topic_data=(m.TopicProduceData(
            name=topic,
            partition_data=tuple(m.PartitionProduceData(index=p, records=r) for p, r in partitions.items()),
        ),),
    )  # fmt: skip
    corr = next(_correlation)
    raw = await dispatch(node, encode_request(RequestHeader(PRODUCE, version, corr, "test"), request))
    if raw is None:
        return None
    got_corr, response = decode_response(raw, PRODUCE, version)
    assert got_corr == corr
    (topic_response,) = response.responses
    assert topic_response.name == topic
    return {p.index: p for p in topic_response.partition_responses}


async def produce_one(node, records, **kw):
    return (await produce(node, {0: records}, **kw))[0]


@pytest.fixture
def topic(node):
    node.logs.create_topic("t", 2)
    return node.logs.get("t", 0)


@pytest.mark.parametrize("version", [3, 8, 9, 10])
async def test_sequence_and_epoch_errors_on_the_wire(node, topic, version):
    sent = []
    for seq in range(0, 12, 2):  # six batches of two records, epoch 0
        r = await produce_one(node, batch(seq, 2), version=version)
        assert (r.error_code, r.base_offset) == (ErrorCode.none, seq)
        sent.append(batch(seq, 2))

    # A retry of one of the last five: success, original offset, nothing appended.
    r = await produce_one(node, sent[3], version=version)
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 6)
    assert topic.log_end_offset == 12

    # Older than the last five, a gap, a new epoch not at 0: out of order, offset -1.
    for records in (sent[0], batch(13), batch(5, epoch=1)):
        r = await produce_one(node, records, version=version)
        assert (r.error_code, r.base_offset) == (ErrorCode.out_of_order_sequence_number, -1)

    r = await produce_one(node, batch(0, epoch=1), version=version)
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 12)
    r = await produce_one(node, batch(1, epoch=0), version=version)
    assert (r.error_code, r.base_offset) == (ErrorCode.invalid_producer_epoch, -1)
    assert topic.log_end_offset == 13


async def test_unknown_producer_accepts_any_first_sequence_on_the_wire(node, topic):
    r = await produce_one(node, batch(999, 3, pid=77))
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 0)
    r = await produce_one(node, batch(1003, pid=77))
    assert r.error_code == ErrorCode.out_of_order_sequence_number
    r = await produce_one(node, batch(1002, pid=77))
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 3)


def _with_records_count(data: bytes, count: int) -> bytes:
    buf = bytearray(data)
    struct.pack_into(">i", buf, 57, count)
    write_crc(buf)  # a valid CRC, so only the count is wrong
    return bytes(buf)


def _corrupt_crc(data: bytes) -> bytes:
    buf = bytearray(data)
    buf[-1] ^= 0xFF  # inside the records, covered by the CRC
    return bytes(buf)


def _corrupt_compressed(data: bytes) -> bytes:
    buf = bytearray(data[:61]) + b"\x00garbage-that-is-not-gzip" * 3
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    write_crc(buf)
    return bytes(buf)


def _with_records(data: bytes, records: bytes) -> bytes:
    """``data``'s header (count, compression) around other record bytes, compressed as it is,
    with a correct CRC: only reading the records can tell what is wrong."""
    from kafka_codecs.compression import compress

    h = parse_header(data)
    buf = bytearray(data[:61]) + compress(h.compression, records)
    struct.pack_into(">i", buf, 8, len(buf) - 12)
    write_crc(buf)
    return bytes(buf)


def _record(offset_delta: int, length_adjust: int = 0, header_key: bytes = b"h") -> bytes:
    body = b"\x00\x00" + bytes([offset_delta * 2]) + b"\x01\x02v\x02" + bytes([len(header_key) * 2]) + header_key + b"\x00"
    return bytes([(len(body) + length_adjust) * 2]) + body


def _malformed(compression=Compression.NONE) -> bytes:
    return _with_records(batch(n=3, compression=compression), _record(0) + _record(1, length_adjust=1) + _record(2))


def _out_of_order(compression=Compression.NONE, header_key=b"h") -> bytes:
    return _with_records(batch(n=3, compression=compression), _record(0) + _record(2, header_key=header_key) + _record(1))


INVALID = {
    "crc-mismatch": (lambda: _corrupt_crc(batch(n=3)), ErrorCode.corrupt_message),
    "crc-mismatch-compressed": (lambda: _corrupt_crc(batch(n=3, compression=Compression.GZIP)), ErrorCode.corrupt_message),
    # What Apache Kafka 3.9 answers (compat/test_bad_batches.py holds both brokers to it).
    "undecodable-compressed-payload": (lambda: _corrupt_compressed(batch(n=3, compression=Compression.GZIP)),
                                       ErrorCode.unknown_server_error),
    "malformed-record": (_malformed, ErrorCode.invalid_record),
    "malformed-record-compressed": (lambda: _malformed(Compression.LZ4), ErrorCode.invalid_record),
    "offsets-out-of-order-compressed": (lambda: _out_of_order(Compression.SNAPPY), ErrorCode.unknown_server_error),
    "control-batch": (lambda: encode_end_txn_marker(producer_id=PID, producer_epoch=0, coordinator_epoch=0,
                                                    commit=True, timestamp=TS), ErrorCode.invalid_record),
    "control-flag-non-transactional": (lambda: batch(n=1, is_control=True), ErrorCode.invalid_record),
    "two-batches": (lambda: batch(n=2) + batch(n=2), ErrorCode.invalid_record),
    "records-count-above-delta": (lambda: _with_records_count(batch(n=3), 4), ErrorCode.invalid_record),
    "records-count-below-delta": (lambda: _with_records_count(batch(n=3), 2), ErrorCode.invalid_record),
    "base-offset-not-zero": (lambda: batch(n=2, base_offset=5), ErrorCode.invalid_record),
    "too-large": (lambda: batch(n=1, value_size=2_000), ErrorCode.message_too_large),
}  # fmt: skip


@pytest.fixture(params=["native", "python"])
def record_walk(request, monkeypatch):
    """The C record walk, and the Python one a broker falls back to where it was not built."""
    from kafka_codecs import records

    if request.param == "python":
        monkeypatch.setattr(records, "_walk", records._walk_records_py)
    elif not records.NATIVE_WALK:
        pytest.skip("kafka_codecs._walk was not built")
    return request.param


@pytest.mark.parametrize("version", [3, 9])
@pytest.mark.parametrize("case", sorted(INVALID))
async def test_invalid_batches_get_kafkas_error_codes_and_append_nothing(node, version, case, record_walk):
    node.logs.create_topic("t", 2, {"max.message.bytes": "1000"})
    make, code = INVALID[case]
    p0, p1 = node.logs.get("t", 0), node.logs.get("t", 1)
    before = (p0.log_end_offset, p0.size_bytes())
    got = await produce(node, {0: make(), 1: batch(n=2)}, version=version)
    assert got[0].error_code == code
    assert got[0].base_offset == -1
    assert (p0.log_end_offset, p0.size_bytes()) == before
    # The other partition of the same request is unaffected.
    assert (got[1].error_code, got[1].base_offset) == (ErrorCode.none, 0)
    assert p1.log_end_offset == 2


async def test_what_kafka_does_not_check_is_accepted(node, topic):
    # Offset deltas of an uncompressed batch and the encoding of header keys are not validated
    # by Kafka either.
    data = _out_of_order(header_key=b"\xff\xfe")
    r = await produce_one(node, data)
    assert (r.error_code, r.base_offset) == (ErrorCode.none, 0)
    assert topic.log_end_offset == 3


async def test_batch_of_exactly_max_message_bytes_is_accepted(node):
    node.logs.create_topic("t", 1, {"max.message.bytes": "1000"})
    size = next(v for v in range(2000) if len(batch(n=1, value_size=v)) == 1000)
    assert (await produce_one(node, batch(n=1, value_size=size))).error_code == ErrorCode.none
    over = batch(n=1, value_size=size + 1)
    assert len(over) == 1001
    assert (await produce_one(node, over)).error_code == ErrorCode.message_too_large


async def test_refusals_carry_no_message_as_in_kafka(node):
    """Kafka puts an error message in a Produce answer only for record errors and a transaction
    verification's own text (ReplicaManager: LogAppendResult.hasCustomErrorMessage); the Java
    producer then shows its default text for the code."""
    node.logs.create_topic("t", 1, {"max.message.bytes": "100"})
    r = await produce_one(node, batch(n=1, value_size=200))
    assert (r.error_code, r.error_message) == (ErrorCode.message_too_large, None)
    r = await produce(node, {5: batch(n=1)})
    assert (r[5].error_code, r[5].error_message) == (ErrorCode.unknown_topic_or_partition, None)


@pytest.mark.parametrize("version,code", [(9, ErrorCode.invalid_txn_state), (11, ErrorCode.transaction_abortable)])
async def test_a_partition_not_in_the_transaction_is_answered_with_kafkas_message(node, topic, version, code):
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, 0)
    data = encode_batch([(b"k", b"v", [], TS)], producer_id=pid, producer_epoch=epoch, base_sequence=0,
                        is_transactional=True)
    r = await produce_one(node, data, version=version, transactional_id="tx")
    message = "Partition was not added to the transaction" if code == ErrorCode.invalid_txn_state else None
    assert (r.error_code, r.error_message) == (code, message)
    assert topic.log_end_offset == 0


async def test_an_acks_0_produce_that_fails_closes_the_connection(node):
    """Kafka closes the connection of an acks=0 Produce with an error in any partition, the only
    way its producer learns of it (KafkaApis.handleProduceRequest); one that succeeds is silent."""
    from shim.protocol.framing import CloseConnection

    node.logs.create_topic("t", 1, {"max.message.bytes": "100"})
    assert await produce(node, {0: batch(n=1)}, acks=0) is None
    with pytest.raises(CloseConnection, match="MESSAGE_TOO_LARGE"):
        await produce(node, {0: batch(n=1, value_size=200)}, acks=0)
    with pytest.raises(CloseConnection, match="UNKNOWN_TOPIC_OR_PARTITION"):
        await produce(node, {0: batch(n=1), 3: batch(n=1)}, acks=0)
    assert node.logs.get("t", 0).log_end_offset == 2  # the good partition of that request appended


async def test_zstd_needs_produce_v7(node, topic):
    data = batch(n=2, compression=Compression.ZSTD)
    assert (await produce_one(node, data, version=6)).error_code == ErrorCode.unsupported_compression_type
    assert (await produce_one(node, data, version=7)).error_code == ErrorCode.none


async def test_acks_zero_appends_without_a_response(node, topic):
    assert await produce(node, {0: batch(n=3)}, acks=0) is None
    assert topic.log_end_offset == 3


async def test_unknown_partition(node, topic):
    got = await produce(node, {7: batch(n=1)})
    assert got[7].error_code == ErrorCode.unknown_topic_or_partition


async def test_stored_batch_is_the_client_batch_with_offset_stamped(node, topic):
    await produce_one(node, batch(n=1))
    data = batch(0, 4, compression=Compression.LZ4)
    r = await produce_one(node, data)
    assert r.base_offset == 1
    stored = topic.read(1, 1 << 20, False).data
    assert len(stored) == len(data)
    h = parse_header(stored)
    assert (h.base_offset, h.crc, h.records_count) == (1, parse_header(data).crc, 4)
    # Only BaseOffset (0-8) and PartitionLeaderEpoch (12-16) are the broker's; the rest is as sent.
    assert stored[8:12] == data[8:12] and stored[16:] == data[16:]


async def test_a_compacted_topic_refuses_records_without_a_key(node):
    # Kafka: LogValidator.validateKey -- INVALID_RECORD with the record's index
    node.logs.create_topic("c", 1, {"cleanup.policy": "compact"})
    keyless = encode_batch([(b"k", b"v", [], TS), (None, b"v", [], TS)])
    r = await produce_one(node, keyless, topic="c")
    assert r.error_code == ErrorCode.invalid_record
    assert [e.batch_index for e in r.record_errors] == [1]
    assert "Compacted topic cannot accept message without key in topic partition c-0." in \
        r.record_errors[0].batch_index_error_message
    assert node.logs.get("c", 0).log_end_offset == 0
    r = await produce_one(node, encode_batch([(b"k", b"v", [], TS)]), topic="c")
    assert r.error_code == ErrorCode.none
