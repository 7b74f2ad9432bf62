import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import Compression, Header, InvalidBatch, Record, crc_ok, decode_batch, encode_batch, parse_header
from kafka_codecs.batch import HEADER, write_crc
from kafka_codecs.compression import compress
from kafka_codecs.varint import encode_varint, encode_varlong

nullable_bytes = st.none() | st.binary(max_size=40)
headers = st.lists(st.builds(Header, st.text(max_size=10), nullable_bytes), max_size=3).map(tuple)
timestamps = st.integers(-1, 1 << 50)
record_tuples = st.tuples(nullable_bytes, nullable_bytes, headers, timestamps)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(record_tuples, min_size=1, max_size=8),
    codec=st.sampled_from(list(Compression)),
    base_offset=st.integers(0, 1 << 62),
    producer=st.tuples(st.integers(-1, (1 << 63) - 1), st.integers(-1, (1 << 15) - 1), st.integers(-1, (1 << 31) - 1)),
    is_transactional=st.booleans(),
    leader_epoch=st.integers(-1, (1 << 31) - 1),
)
def test_round_trip(records, codec, base_offset, producer, is_transactional, leader_epoch):
    producer_id, producer_epoch, base_sequence = producer
    batch = encode_batch(
        records, base_offset=base_offset, compression=codec, producer_id=producer_id,
        producer_epoch=producer_epoch, base_sequence=base_sequence, is_transactional=is_transactional,
        partition_leader_epoch=leader_epoch,
    )  # fmt: skip
    assert crc_ok(batch)
    header, decoded = decode_batch(batch)
    assert header.compression == codec
    assert (header.base_offset, header.partition_leader_epoch) == (base_offset, leader_epoch)
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == producer
    assert header.is_transactional == is_transactional
    assert header.records_count == len(records) == header.last_offset_delta + 1
    assert header.base_timestamp == records[0][3]
    assert header.max_timestamp == max(r[3] for r in records)
    expected = [Record(base_offset + i, ts, k, v, h) for i, (k, v, h, ts) in enumerate(records)]
    assert decoded == expected


def test_record_objects_and_header_pairs_accepted():
    rec = Record(offset=99, timestamp=5, key=None, value=b"v", headers=(Header("a", None),))
    batch = encode_batch([rec, (b"k", b"", [("b", b"x")], 7)], base_offset=10)
    _, decoded = decode_batch(batch)
    assert decoded == [
        Record(10, 5, None, b"v", (Header("a", None),)),
        Record(11, 7, b"k", b"", (Header("b", b"x"),)),
    ]


def test_null_and_empty_are_distinct():
    _, (rec,) = decode_batch(encode_batch([(None, b"", [("", b""), ("n", None)], 0)]))
    assert rec.key is None and rec.value == b""
    assert rec.headers == (Header("", b""), Header("n", None))


def test_decode_accepts_any_buffer():
    batch = encode_batch([(b"k", b"v", (), 1)], compression=Compression.ZSTD)
    expected = decode_batch(batch)
    assert decode_batch(bytearray(batch)) == expected
    assert decode_batch(memoryview(b"pad" + batch)[3:]) == expected


def test_encode_rejects_empty():
    with pytest.raises(ValueError):
        encode_batch([])


def test_known_record_bytes():
    # One uncompressed record: length, attributes, ts delta, offset delta,
    # key (-1 = null), value "v", one header "h" -> null.
    batch = encode_batch([(None, b"v", [("h", None)], 0)])
    body = batch[61:]
    assert body == bytes([10 * 2, 0, 0, 0, 1, 2, ord("v"), 2, 2, ord("h"), 1])


# --- malformed batches ----------------------------------------------------


def _raw_batch(body: bytes, count: int, attributes: int = 0, magic: int = 2) -> bytes:
    out = bytearray(HEADER.pack(0, 49 + len(body), -1, magic, 0, attributes, max(count - 1, 0), 0, 0, -1, -1, -1, count))
    out += body
    write_crc(out)
    return bytes(out)


def _record(key=b"k", value=b"v", headers=b"\x00", ts_delta=0, offset_delta=0, length_adjust=0) -> bytes:
    body = b"\x00" + encode_varlong(ts_delta) + encode_varint(offset_delta)
    for field in (key, value):
        body += b"\x01" if field is None else encode_varint(len(field)) + field
    body += headers
    return encode_varint(len(body) + length_adjust) + body


def test_raw_helper_is_valid():
    _, records = decode_batch(_raw_batch(_record() + _record(offset_delta=1), 2))
    assert [r.key for r in records] == [b"k", b"k"]


@pytest.mark.parametrize("codec", list(Compression))
def test_every_truncation_is_invalid(codec):
    batch = encode_batch([(b"key", b"value" * 20, [("h", b"v")], 1), (None, None, (), 2)], compression=codec)
    for cut in range(len(batch)):
        with pytest.raises(InvalidBatch):
            decode_batch(batch[:cut])


def test_trailing_bytes_after_batch_invalid():
    with pytest.raises(InvalidBatch):
        decode_batch(encode_batch([(b"k", b"v", (), 1)]) + b"\x00")


@pytest.mark.parametrize("codec", list(Compression))
@pytest.mark.parametrize("declared", [0, 1, 3, 100])
def test_records_count_mismatch(codec, declared):
    body = compress(codec, _record() + _record(offset_delta=1))
    with pytest.raises(InvalidBatch, match="record"):
        decode_batch(_raw_batch(body, declared, attributes=codec))


def test_negative_records_count():
    with pytest.raises(InvalidBatch):
        decode_batch(_raw_batch(_record(), -1))


@pytest.mark.parametrize(
    "body",
    [
        _record(length_adjust=1),  # declared length longer than the fields
        _record(length_adjust=-1),  # shorter
        _record(length_adjust=1000),  # beyond the batch
        _record(headers=b"\x01"),  # negative header count
        _record(headers=b"\x02\x01\x00"),  # null header key
        _record(headers=b"\x02\x02h"),  # header value missing
        _record(key=b"k" * 3)[:-4] + b"\x7f",  # key length past the end
        b"\x80\x80",  # truncated length varint
        b"\x0a\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff",  # timestamp varlong too long
        b"\x7f",  # negative record length
        _record() + b"\x00",  # trailing byte after the last record
    ],
)
def test_malformed_records(body):
    with pytest.raises(InvalidBatch):
        decode_batch(_raw_batch(body, 1))


def test_header_key_not_utf8_is_read_as_java_reads_it():
    # Kafka stores header keys as bytes and Java decodes them with new String(bytes, UTF_8), which
    # replaces malformed sequences: such a record is valid.
    (record,) = decode_batch(_raw_batch(_record(headers=b"\x02\x04\xffk\x02v"), 1))[1]
    assert record.headers == (Header("\ufffdk", b"v"),)


def test_varints_as_kafka_reads_them():
    # ByteUtils.readVarint takes at most 5 bytes and drops bits past 32; readVarlong 10 and 64.
    five = b"\x90\x80\x80\x80\x10" + _record()[1:]  # 8, with bits above 32 set
    assert decode_batch(_raw_batch(five, 1))[1][0].value == b"v"
    with pytest.raises(InvalidBatch, match="too long"):
        decode_batch(_raw_batch(b"\x90\x80\x80\x80\x80\x00" + _record()[1:], 1))
    ts = bytes([0x22, 0]) + b"\xff" * 9 + b"\x03" + _record()[3:]  # zig-zag of all 64 bits set: -2**63
    assert decode_batch(_raw_batch(ts, 1))[1][0].timestamp == -(1 << 63)
    with pytest.raises(InvalidBatch, match="too long"):
        decode_batch(_raw_batch(bytes([0x24, 0]) + b"\x80" * 10 + b"\x00" + _record()[3:], 1))


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_garbage_compressed_payload(codec):
    with pytest.raises(InvalidBatch):
        decode_batch(_raw_batch(b"\xde\xad\xbe\xef" * 8, 1, attributes=codec))


@pytest.mark.parametrize("attributes", [5, 6, 7])
def test_unknown_codec_invalid(attributes):
    with pytest.raises(InvalidBatch):
        decode_batch(_raw_batch(_record(), 1, attributes=attributes))


def test_wrong_magic_invalid():
    with pytest.raises(InvalidBatch, match="magic"):
        decode_batch(_raw_batch(_record(), 1, magic=1))


def test_bad_batch_length_invalid():
    batch = bytearray(encode_batch([(b"k", b"v", (), 1)]))
    for length in (-1, 0, 48, parse_header(batch).batch_length + 1):
        struct.pack_into(">i", batch, 8, length)
        with pytest.raises(InvalidBatch):
            decode_batch(batch)


@settings(max_examples=150, deadline=None)
@given(
    codec=st.sampled_from(list(Compression)),
    pos=st.integers(0, 10_000),
    data=st.binary(min_size=1, max_size=4),
)
def test_corruption_never_escapes_as_other_errors(codec, pos, data):
    batch = bytearray(encode_batch([(b"key", b"value", [("h", b"x")], 5), (None, b"v2", (), 6)], compression=codec))
    pos = 21 + pos % (len(batch) - 21)
    batch[pos : pos + len(data)] = data
    try:
        decode_batch(batch)
    except InvalidBatch:
        pass
