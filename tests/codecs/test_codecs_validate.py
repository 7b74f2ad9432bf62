"""validate_batch makes the same accept/reject decision as decode_batch."""

import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import HEADER_SIZE, Compression, Header, InvalidBatch, decode_batch, encode_batch, validate_batch
from kafka_codecs import records as records_module
from kafka_codecs.records import UndecodablePayload
from kafka_codecs.batch import HEADER, write_crc
from kafka_codecs.compression import compress
from kafka_codecs.varint import encode_varint, encode_varlong

nullable_bytes = st.none() | st.binary(max_size=300)
headers = st.lists(st.builds(Header, st.text(max_size=10), nullable_bytes), max_size=3).map(tuple)
timestamps = st.integers(-1, 1 << 61)  # deltas of 1 to 9 varlong bytes
record_tuples = st.tuples(nullable_bytes, nullable_bytes, headers, timestamps)


def _raw_batch(payload: bytes, count: int, codec: int = Compression.NONE, magic: int = 2) -> bytes:
    """A batch around an already compressed payload, with a correct CRC."""
    out = bytearray(HEADER.pack(0, 49 + len(payload), -1, magic, 0, codec, max(count - 1, 0), 0, 0, -1, -1, -1, count))
    out += payload
    write_crc(out)
    return bytes(out)


def _verdict(fn, batch) -> bool:
    try:
        fn(batch)
    except InvalidBatch:
        return False
    return True


def _assert_same_verdict(batch) -> bool:
    expected = _verdict(decode_batch, batch)
    assert _verdict(validate_batch, batch) == expected
    return expected


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(record_tuples, min_size=1, max_size=8),
    codec=st.sampled_from(list(Compression)),
    is_transactional=st.booleans(),
    timestamp_type=st.sampled_from([0, 1]),
)
def test_accepts_every_encoded_batch(records, codec, is_transactional, timestamp_type):
    batch = encode_batch(records, compression=codec, is_transactional=is_transactional, timestamp_type=timestamp_type)
    assert validate_batch(batch) is True  # offset deltas 0, 1, 2, ...
    assert validate_batch(bytearray(batch)) is True
    assert validate_batch(memoryview(b"pad" + batch)[3:]) is True


def _mutate(payload: bytearray, data) -> None:
    kind = data.draw(st.sampled_from(["flip", "overwrite", "insert", "delete", "truncate", "varint"]))
    pos = data.draw(st.integers(0, max(len(payload) - 1, 0)))
    if kind == "flip" and payload:
        payload[pos] ^= 1 << data.draw(st.integers(0, 7))
    elif kind == "overwrite":
        chunk = data.draw(st.binary(min_size=1, max_size=6))
        payload[pos : pos + len(chunk)] = chunk
    elif kind == "insert":
        payload[pos:pos] = data.draw(st.binary(min_size=1, max_size=6))
    elif kind == "delete":
        del payload[pos : pos + data.draw(st.integers(1, 6))]
    elif kind == "truncate":
        del payload[pos:]
    else:  # replace a byte with a (possibly overlong or oversized) varint
        raw = data.draw(st.integers(0, (1 << 70) - 1))
        out = bytearray()
        while raw >= 0x80:
            out.append((raw & 0x7F) | 0x80)
            raw >>= 7
        out.append(raw)
        payload[pos : pos + 1] = out


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    records=st.lists(record_tuples, min_size=1, max_size=5),
    codec=st.sampled_from(list(Compression)),
    mutations=st.integers(0, 3),
    count_adjust=st.sampled_from([0, 0, 0, -1, 1, -100]),
    data=st.data(),
)
def test_corrupt_payloads_same_verdict_as_decode(records, codec, mutations, count_adjust, data):
    # Corrupt the decompressed records, then compress and frame them again
    # with a correct CRC, so only the record walk can tell.
    payload = bytearray(encode_batch(records)[HEADER_SIZE:])
    for _ in range(mutations):
        _mutate(payload, data)
    batch = _raw_batch(compress(codec, payload), len(records) + count_adjust, codec)
    accepted = _assert_same_verdict(batch)
    if mutations == 0 and count_adjust == 0:
        assert accepted


@settings(max_examples=200, deadline=None)
@given(
    codec=st.sampled_from(list(Compression)),
    pos=st.integers(0, 10_000),
    chunk=st.binary(min_size=1, max_size=4),
)
def test_corrupt_frames_same_verdict_as_decode(codec, pos, chunk):
    # Corruption anywhere after the CRC, compressed payload included.
    records = [(b"key", b"value" * 30, [("h", b"x")], 5), (None, b"v2", (), 6)]
    batch = bytearray(encode_batch(records, compression=codec))
    pos = 21 + pos % (len(batch) - 21)
    batch[pos : pos + len(chunk)] = chunk
    write_crc(batch)
    _assert_same_verdict(batch)


def _record(key=b"k", value=b"v", headers=b"\x00", ts_delta=0, offset_delta=0, length_adjust=0) -> bytes:
    body = b"\x00" + encode_varlong(ts_delta) + encode_varint(offset_delta)
    for field in (key, value):
        body += b"\x01" if field is None else encode_varint(len(field)) + field
    body += headers
    return encode_varint(len(body) + length_adjust) + body


@pytest.mark.parametrize("codec", list(Compression))
@pytest.mark.parametrize(
    "body, count",
    [
        (_record(length_adjust=1), 1),
        (_record(length_adjust=-1), 1),
        (_record(length_adjust=1000), 1),
        (_record(headers=b"\x01"), 1),  # negative header count
        (_record(headers=b"\x02\x01\x00"), 1),  # null header key
        (_record(headers=b"\x02\x02\xff\x00"), 1),  # header key not utf-8
        (_record(headers=b"\x02\x04\xe2\x82\x00"), 1),  # header key with a cut utf-8 sequence
        (_record(headers=b"\x02\x02h"), 1),  # header value missing
        (_record(headers=b"\xfe\xff\xff\xff\x0f"), 1),  # huge header count
        (_record(key=b"k" * 3)[:-4] + b"\x7f", 1),
        (b"\x80\x80", 1),
        (b"\x0a\x00\xff\xff\xff\xff\xff\xff\xff\xff\xff", 1),  # timestamp varlong too long
        (b"\x7f", 1),
        (_record() + b"\x00", 1),
        (_record() + _record(), 1),
        (_record(), 2),
        (_record(), 0),
        (b"", 1),
        (_record(), -1),
        # A length varint of 5 bytes that overflows int32, and one that fits.
        (b"\x90\x80\x80\x80\x10" + _record()[1:], 1),
        (b"\x90\x80\x80\x80\x00" + _record()[1:], 1),
        # An overlong but well-formed timestamp varlong (10 bytes), and one overflowing int64.
        (bytes([0x22, 0]) + b"\x80" * 9 + b"\x01" + _record()[3:], 1),
        (bytes([0x22, 0]) + b"\x80" * 9 + b"\x02" + _record()[3:], 1),
        # Negative key and value lengths other than -1 read as null.
        (encode_varint(6) + b"\x00\x00\x00\x05\x07\x00", 1),
        # Non-zero attributes and arbitrary offset deltas are not checked.
        (b"\x10\x7f\x00\x00\x02k\x02v\x00", 1),
        (_record(offset_delta=7) + _record(offset_delta=-3, ts_delta=-(1 << 40)), 2),
        (_record(key=b"k" * 200, value=b"v" * 70_000, headers=b"\x04\x02h\x01\x00\x80\x02" + b"x" * 128), 1),
    ],
)
def test_edge_cases_same_verdict_as_decode(codec, body, count):
    _assert_same_verdict(_raw_batch(compress(codec, body), count, codec))


def test_edge_cases_follow_kafkas_varint_rules():
    # ByteUtils: a varint of up to 5 bytes (a varlong of up to 10) is read, bits past the type's
    # width dropped; one byte more is an error.
    assert _assert_same_verdict(_raw_batch(b"\x90\x80\x80\x80\x00" + _record()[1:], 1))
    assert _assert_same_verdict(_raw_batch(b"\x90\x80\x80\x80\x10" + _record()[1:], 1))
    assert not _assert_same_verdict(_raw_batch(b"\x90\x80\x80\x80\x80\x00" + _record()[1:], 1))
    assert _assert_same_verdict(_raw_batch(bytes([0x22, 0]) + b"\x80" * 9 + b"\x01" + _record()[3:], 1))
    assert _assert_same_verdict(_raw_batch(bytes([0x22, 0]) + b"\x80" * 9 + b"\x02" + _record()[3:], 1))
    assert not _assert_same_verdict(_raw_batch(bytes([0x24, 0]) + b"\x80" * 10 + b"\x00" + _record()[3:], 1))
    # Kafka accepts a header key that is not UTF-8 (Java decodes it with replacement).
    assert _assert_same_verdict(_raw_batch(_record(headers=b"\x02\x02\xff\x00"), 1))


@pytest.mark.parametrize("codec", list(Compression))
def test_offset_deltas_in_order_is_reported(codec):
    def verdict(*deltas):
        body = b"".join(_record(offset_delta=d) for d in deltas)
        return validate_batch(_raw_batch(compress(codec, body), len(deltas), codec))

    assert verdict(0) and verdict(0, 1, 2)
    assert not verdict(1) and not verdict(0, 2, 1) and not verdict(0, 1, 5)


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_undecodable_payload_is_its_own_error(codec):
    with pytest.raises(UndecodablePayload):
        validate_batch(_raw_batch(b"\xde\xad\xbe\xef" * 8, 1, codec))
    with pytest.raises(InvalidBatch) as info:  # decompresses, but a record is malformed
        validate_batch(_raw_batch(compress(codec, _record(length_adjust=1)), 1, codec))
    assert not isinstance(info.value, UndecodablePayload)


def _walk_outcome(walk, payload: bytes, count: int, base_ts: int = 1_700_000_000_000):
    try:
        return walk(payload, count, base_ts)
    except ValueError as exc:  # the C walk raises ValueError, the Python one InvalidBatch (a ValueError)
        return f"rejected: {exc}"


needs_native = pytest.mark.skipif(not records_module.NATIVE_WALK, reason="kafka_codecs._walk was not built")


@needs_native
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(record_tuples, min_size=1, max_size=5), mutations=st.integers(0, 3),
       count_adjust=st.sampled_from([0, 0, 0, -1, 1, -100]), data=st.data(),
       base_ts=st.integers(-(1 << 63), (1 << 63) - 1) | st.integers(-5, 1 << 42))
def test_native_walk_matches_the_python_walk(records, mutations, count_adjust, data, base_ts):
    # Same verdict, same message, same offset-order answer and MaxTimestamp (wrapping past Java's
    # long range included), on valid and corrupted payloads.
    payload = bytearray(encode_batch(records)[HEADER_SIZE:])
    for _ in range(mutations):
        _mutate(payload, data)
    count = len(records) + count_adjust
    native = _walk_outcome(records_module._walk, bytes(payload), count, base_ts)
    assert native == _walk_outcome(records_module._walk_records_py, bytes(payload), count, base_ts)
    assert native == _walk_outcome(records_module._walk, memoryview(b"xx" + payload)[2:], count, base_ts)


@needs_native
@pytest.mark.parametrize(
    "payload, count",
    [(b"", 1), (b"", 0), (b"\x00", 0), (b"\x80" * 5 + b"\x00", 1), (b"\xff" * 12, 1),
     (_record(headers=b"\x7f"), 1), (_record(headers=b"\x02\x03"), 1), (_record(headers=b"\x02\x00\x7f"), 1),
     (_record(key=b"k" * 300), 1), (_record(offset_delta=-5), 1), (_record() * 3, 3)],
)
def test_native_walk_matches_the_python_walk_on_edges(payload, count):
    assert _walk_outcome(records_module._walk, payload, count) == _walk_outcome(
        records_module._walk_records_py, payload, count)


@pytest.mark.parametrize("codec", [c for c in Compression if c != Compression.NONE])
def test_garbage_compressed_payload(codec):
    with pytest.raises(InvalidBatch):
        validate_batch(_raw_batch(b"\xde\xad\xbe\xef" * 8, 1, codec))


@pytest.mark.parametrize("codec", [5, 6, 7])
def test_unknown_codec(codec):
    with pytest.raises(InvalidBatch):
        validate_batch(_raw_batch(_record(), 1, codec))


def test_frame_errors():
    with pytest.raises(InvalidBatch, match="magic"):
        validate_batch(_raw_batch(_record(), 1, magic=1))
    with pytest.raises(InvalidBatch):
        validate_batch(b"\x00" * 10)
    batch = bytearray(encode_batch([(b"k", b"v", (), 1)]))
    with pytest.raises(InvalidBatch):
        validate_batch(batch + b"\x00")
    for length in (-1, 0, 48, len(batch) - 12 + 1):
        struct.pack_into(">i", batch, 8, length)
        with pytest.raises(InvalidBatch):
            validate_batch(batch)


def _jlong(value: int) -> int:
    return (value + (1 << 63)) % (1 << 64) - (1 << 63)


@pytest.mark.parametrize("walk", [records_module._walk_records_py, records_module._walk], ids=["python", "native"])
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(record_tuples, min_size=1, max_size=6), base_ts=st.integers(-(1 << 63), (1 << 63) - 1))
def test_the_walk_gives_the_largest_record_timestamp(walk, records, base_ts):
    # LogValidator: the largest of RecordBatch.NO_TIMESTAMP (-1) and each record's base + delta as a
    # Java long, whatever the header's MaxTimestamp says
    batch = bytearray(encode_batch(records))
    struct.pack_into(">q", batch, 27, base_ts)  # BaseTimestamp
    _, decoded = decode_batch(bytes(batch))
    expected = max([-1] + [_jlong(r.timestamp) for r in decoded])
    assert walk(bytes(batch[HEADER_SIZE:]), len(records), base_ts) == (True, expected)
