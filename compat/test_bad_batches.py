"""Produce requests whose batch has a valid CRC but records Kafka refuses, and what it accepts.

Each batch is framed with a correct CRC-32C, so only reading its records can tell what is wrong,
as Kafka's LogValidator reads every record of every batch. The expected codes are Apache Kafka
3.9's answers, checked against it (``--kafka-bootstrap``), not guesses:

- a malformed record, compressed or not: INVALID_RECORD (87), nothing appended;
- a compressed payload that does not decompress: UNKNOWN_SERVER_ERROR (-1) (Kafka's decompressing
  stream throws a KafkaException, which is how it reaches the client);
- a compressed batch whose offset deltas are not 0, 1, 2, ...: UNKNOWN_SERVER_ERROR as well
  (Kafka would rebuild such a batch, and in 3.9 fails doing so);
- accepted as Kafka accepts them: non-zero record attributes, null values written with a length
  below -1, header keys that are not UTF-8, and any offset deltas in an uncompressed batch.

One deliberate difference: a compressed batch whose record length prefixes disagree with the
records. Kafka 3.9 refuses it uncompressed but accepts it compressed (its in-place path reads
compressed records without checking their lengths), and then its own consumers fail on it
("Invalid record size"). kafka-shim refuses it with INVALID_RECORD either way; against another
broker those cases are skipped with this reason.

Runs against ``compat_target``: nothing here looks inside the broker.
"""

from __future__ import annotations

import struct
import time

import pytest

from compat.txn_clients import wait_for
from kafka_codecs.batch import HEADER, HEADER_SIZE, LOG_OVERHEAD, MAGIC, write_crc
from kafka_codecs.compression import compress
from kafka_codecs.varint import encode_varint
from shim.errors import ErrorCode
from shim.protocol.messages import request_module

CODECS = {"none": 0, "gzip": 1, "snappy": 2, "lz4": 3, "zstd": 4}
TS = 1_700_000_000_000


def record(delta: int, *, value: bytes | None = b"v", headers=(), attributes=b"\x00", length_adjust=0,
           header_count: int | None = None, raw_value_length: int | None = None) -> bytes:
    body = bytearray(attributes) + b"\x00" + encode_varint(delta) + encode_varint(-1)  # no key
    if raw_value_length is not None:
        body += encode_varint(raw_value_length)
    else:
        body += encode_varint(-1) if value is None else encode_varint(len(value)) + value
    body += encode_varint(len(headers) if header_count is None else header_count)
    for key, val in headers:
        body += encode_varint(-1) if key is None else encode_varint(len(key)) + key
        body += encode_varint(len(val)) + val
    return encode_varint(len(body) + length_adjust) + bytes(body)


def frame(records: bytes, count: int, codec: int, payload: bytes | None = None) -> bytes:
    """One batch around ``records`` (compressed with ``codec``) or around a raw ``payload``."""
    payload = compress(codec, records) if payload is None else payload
    out = bytearray(HEADER_SIZE)
    HEADER.pack_into(out, 0, 0, HEADER_SIZE - LOG_OVERHEAD + len(payload), -1, MAGIC, 0, codec, count - 1,
                     TS, TS, -1, -1, -1, count)
    out += payload
    write_crc(out)
    return bytes(out)


def three(**second) -> bytes:
    return record(0) + record(1, **second) + record(2)


REFUSED = {
    "record-longer-than-declared": (lambda: three(length_adjust=-1), 3, ErrorCode.invalid_record),
    "record-shorter-than-declared": (lambda: three(length_adjust=1), 3, ErrorCode.invalid_record),
    "fewer-records-than-counted": (lambda: record(0) + record(1), 3, ErrorCode.invalid_record),
    "bytes-after-the-last-record": (lambda: three() + b"\x00\x00", 3, ErrorCode.invalid_record),
    "negative-header-count": (lambda: three(header_count=-1), 3, ErrorCode.invalid_record),
    "null-header-key": (lambda: three(headers=[(None, b"x")]), 3, ErrorCode.invalid_record),
    "varint-of-six-bytes": (lambda: record(0) + encode_varint(8) + b"\x00" + b"\xff" * 6 + b"\x00" + record(2), 3,
                            ErrorCode.invalid_record),
}
ACCEPTED = {
    "non-zero-attributes": lambda: three(attributes=b"\x07"),
    "null-value-of-length-minus-two": lambda: three(raw_value_length=-2),
    "header-key-not-utf8": lambda: three(headers=[(b"\xff\xfe", b"x")]),
}


def produce(wire, topic: str, batch: bytes) -> int:
    m = request_module(0, 9)
    part = m.PartitionProduceData(index=0, records=batch)
    r = wire.call(0, 9, transactional_id=None, acks=-1, timeout=10_000,
                  topic_data=(m.TopicProduceData(name=topic, partition_data=(part,)),))
    return r.responses[0].partition_responses[0].error_code


@pytest.fixture
def topic(wire):
    name = f"bad-batches-{time.time_ns()}"
    wire.create_topic(name)
    wait_for(lambda: wire.list_offset(name, 0, 0, check=False) is not None, 30, 0.05, f"a leader for {name}")
    return name


def _refused(wire, topic, batch, code) -> None:
    before = wire.list_offset(topic, 0, 0)
    assert produce(wire, topic, batch) == code
    assert wire.list_offset(topic, 0, 0) == before, "a refused batch must append nothing"


STRICTER = {"record-longer-than-declared", "record-shorter-than-declared"}


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("case", REFUSED)
def test_malformed_records_are_refused(compat_target, wire, topic, codec, case):
    if case in STRICTER and codec != "none" and not compat_target.is_shim:
        pytest.skip("Apache Kafka 3.9 accepts record lengths that disagree with the records of a compressed "
                    "batch (and its consumers then fail on them); kafka-shim refuses them as it does uncompressed")
    make, count, code = REFUSED[case]
    _refused(wire, topic, frame(make(), count, CODECS[codec]), code)
    assert produce(wire, topic, frame(three(), 3, CODECS[codec])) == 0  # the partition still takes batches


@pytest.mark.parametrize("codec", CODECS)
@pytest.mark.parametrize("case", ACCEPTED)
def test_what_kafka_does_not_check_is_accepted(wire, topic, codec, case):
    before = wire.list_offset(topic, 0, 0)
    assert produce(wire, topic, frame(ACCEPTED[case](), 3, CODECS[codec])) == 0
    assert wire.list_offset(topic, 0, 0) == before + 3


@pytest.mark.parametrize("codec", [c for c in CODECS if c != "none"])
def test_undecodable_compressed_payloads(wire, topic, codec):
    _refused(wire, topic, frame(b"", 3, CODECS[codec], payload=b"\xde\xad\xbe\xef" * 8), ErrorCode.unknown_server_error)
    whole = compress(CODECS[codec], three())
    _refused(wire, topic, frame(b"", 3, CODECS[codec], payload=whole[:-3]), ErrorCode.unknown_server_error)


@pytest.mark.parametrize("codec", CODECS)
def test_offset_deltas_out_of_order(wire, topic, codec):
    batch = frame(record(0) + record(2) + record(1), 3, CODECS[codec])
    if codec == "none":  # not checked: the batch is stored as it came
        before = wire.list_offset(topic, 0, 0)
        assert produce(wire, topic, batch) == 0
        assert wire.list_offset(topic, 0, 0) == before + 3
    else:
        _refused(wire, topic, batch, ErrorCode.unknown_server_error)
        # A malformed record in the same batch is reported first, as Kafka reads them all first.
        _refused(wire, topic, frame(record(1) + record(0), 3, CODECS[codec]), ErrorCode.invalid_record)


def test_frame_helper_makes_a_valid_batch():
    data = frame(three(), 3, 0)
    assert struct.unpack_from(">i", data, 57)[0] == 3
    from kafka_codecs import validate_batch

    assert validate_batch(data) is True
