"""shim.protocol.produce_wire reads Produce requests as kio does and writes their plain answers as
kio does: on every version, on requests hypothesis draws, on those requests damaged, and on answers
drawn over every field the writer packs."""

from __future__ import annotations

import datetime
import uuid

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from shim.errors import ErrorCode
from shim.protocol import produce_wire
from shim.protocol.framing import FrameError
from shim.protocol.messages import (
    RequestHeader,
    decode_request,
    encode_request,
    encode_response,
    make,
    request_module,
    response_class,
    response_module,
)

VERSIONS = range(0, 14)
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))

ascii_text = st.text(st.characters(min_codepoint=0, max_codepoint=127), max_size=12)
any_text = st.one_of(ascii_text, st.text(max_size=6))
int16 = st.integers(-(1 << 15), (1 << 15) - 1)
int32 = st.integers(-(1 << 31), (1 << 31) - 1)
int64 = st.integers(-(1 << 63), (1 << 63) - 1)


def _request(version: int, draw, text) -> tuple[bytes, bool]:
    """A kio-encoded ProduceRequest frame; whether the fast reader must take it (no nulls where
    it defers to kio, ASCII strings only)."""
    m = request_module(0, version)
    plain = True
    topics = []
    for _ in range(draw(st.integers(0, 3))):
        parts = []
        for _ in range(draw(st.integers(0, 3))):
            records = draw(st.one_of(st.none(), st.binary(max_size=300)))
            plain &= records is not None
            parts.append(m.PartitionProduceData(index=draw(int32), records=records))
        if version >= produce_wire.TOPIC_ID_VERSION:
            topic = m.TopicProduceData(topic_id=draw(st.one_of(st.none(), st.uuids())), partition_data=tuple(parts))
        else:
            name = draw(text)
            plain &= name.isascii()
            topic = m.TopicProduceData(name=name, partition_data=tuple(parts))
        topics.append(topic)
    fields = dict(acks=draw(int16), timeout=datetime.timedelta(milliseconds=draw(int32)), topic_data=tuple(topics))
    if version >= produce_wire.TRANSACTIONAL_ID_VERSION:
        fields["transactional_id"] = txn = draw(st.one_of(st.none(), text))
        plain &= txn is None or txn.isascii()
    client_id = draw(st.one_of(st.none(), text))
    plain &= client_id is None or client_id.isascii()
    header = RequestHeader(0, version, draw(int32), client_id)
    return encode_request(header, m.ProduceRequest(**fields)), plain


def _seen(header, request) -> tuple:
    """What a handler reads of a request, in plain values."""
    return (
        tuple(header),
        getattr(request, "transactional_id", None),
        request.acks,
        request.timeout // datetime.timedelta(milliseconds=1),
        tuple((getattr(t, "name", None), getattr(t, "topic_id", None),
               tuple((p.index, None if p.records is None else bytes(p.records)) for p in t.partition_data))
              for t in request.topic_data),
    )


def _kio(frame: bytes, version: int):
    try:
        return _seen(*decode_request(frame, 0, version))
    except FrameError:
        return "malformed"


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(data=st.data())
def test_reads_what_kio_reads(version, data):
    frame, plain = _request(version, data.draw, any_text)
    fast = produce_wire.decode(frame, version)
    if plain:
        assert fast is not None
    if fast is not None:
        assert _seen(*fast) == _kio(frame, version)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(data=st.data())
def test_a_damaged_frame_is_read_as_kio_reads_it_or_left_to_kio(version, data):
    frame = bytearray(_request(version, data.draw, ascii_text)[0])
    for _ in range(data.draw(st.integers(1, 3))):
        action = data.draw(st.sampled_from(["cut", "set", "insert", "append"]))
        at = data.draw(st.integers(0, max(len(frame) - 1, 0)))
        if action == "cut":
            del frame[at:]
        elif action == "set" and frame:
            frame[at] = data.draw(st.integers(0, 255))
        elif action == "insert":
            frame[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        else:
            frame += data.draw(st.binary(min_size=1, max_size=4))
    frame = bytes(frame)
    if len(frame) < 8:
        return  # shorter than the fixed start the dispatcher peeks first
    fast = produce_wire.decode(frame, version)
    if fast is not None:
        assert _seen(*fast) == _kio(frame, version)


@pytest.mark.parametrize("frame", [
    b"\x00\x00\x00\x09\x00\x00\x00\x01\x00\x00\x00",  # a tagged field in the header: kio's to read
    b"\x00\x00\x00\x09\x00\x00\x00\x01\xff\xff\x00\x00\x00\x01\x00\x00\x00\x00\x02\x02\x81\x00\x00\x00",
])
def test_shapes_it_leaves_to_kio(frame):
    assert produce_wire.decode(frame, 9) is None


def test_records_are_a_view_of_the_frame_not_a_copy():
    m = request_module(0, 9)
    request = m.ProduceRequest(transactional_id=None, acks=-1, timeout=datetime.timedelta(seconds=1), topic_data=(
        m.TopicProduceData(name="t", partition_data=(m.PartitionProduceData(index=0, records=b"batch"),)),))
    frame = encode_request(RequestHeader(0, 9, 1, "c"), request)
    header, read = produce_wire.decode(frame, 9)
    (topic,) = read.topic_data
    (part,) = topic.partition_data
    assert isinstance(part.records, memoryview) and part.records.obj is frame
    assert (header.client_id, topic.name, bytes(part.records), read.timeout) == (
        "c", "t", b"batch", datetime.timedelta(seconds=1))


# -- answers --------------------------------------------------------------------------------

def _kio_answer(version: int, correlation_id: int, topics, throttle_ms: int) -> bytes:
    m = response_module(0, version)
    responses = tuple(
        make(m.TopicProduceResponse, name=name, topic_id=topic_id, partition_responses=tuple(
            make(m.PartitionProduceResponse, index=i, error_code=ErrorCode(e), base_offset=b, log_append_time=t,
                 log_start_offset=s, record_errors=(), error_message=None)
            for i, e, b, t, s in partitions))
        for name, topic_id, partitions in topics)
    return encode_response(correlation_id, make(response_class(0, version), responses=responses,
                                                node_endpoints=(), throttle_time=throttle_ms))


codes = st.sampled_from([c.value for c in ErrorCode])
append_times = st.one_of(st.just(-1), st.integers(0, 1 << 45))
partition = st.tuples(int32, codes, int64, append_times, int64)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(correlation_id=int32, throttle_ms=st.integers(0, (1 << 31) - 1),
       topics=st.lists(st.tuples(any_text, st.one_of(st.none(), st.uuids()), st.lists(partition, max_size=3)),
                       max_size=3))
def test_answers_are_kio_bytes(version, correlation_id, throttle_ms, topics):
    expected = _kio_answer(version, correlation_id, topics, throttle_ms)
    assert produce_wire.encode_answer(correlation_id, version, topics, throttle_ms) == expected


def test_a_long_topic_name_and_many_partitions():
    topics = [("x" * 300, uuid.uuid4(), [(i, 0, i * 10, -1, 0) for i in range(200)])]
    for version in (8, 9, 13):
        assert produce_wire.encode_answer(7, version, topics, 0) == _kio_answer(version, 7, topics, 0)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@given(st.integers(0, (1 << 28) - 1), st.binary(max_size=3))
def test_unsigned_varints_of_up_to_four_bytes_are_read_with_their_end(value, after):
    raw = _varint(value)
    assert produce_wire._uvarint(b"\xff" + raw + after, 1) == (value, 1 + len(raw))


@pytest.mark.parametrize("raw", [b"\x80\x00", b"\x81\x80\x00", b"\xff\xff\x80\x00", b"\x80\x80\x80\x80\x01",
                                 b"\xff\xff\xff\xff\x7f"])
def test_overlong_or_wider_varints_are_left_to_kio(raw):
    with pytest.raises(produce_wire._Other):
        produce_wire._uvarint(raw, 0)


@pytest.mark.parametrize("raw", [b"", b"\x80", b"\xff\xff", b"\xff\xff\xff"])
def test_a_varint_cut_short_is_not_read(raw):
    with pytest.raises(IndexError):
        produce_wire._uvarint(raw, 0)


@pytest.mark.parametrize("version", VERSIONS)
@SETTINGS
@given(correlation_id=int32, throttle_ms=st.integers(0, (1 << 31) - 1), name=any_text,
       topic_id=st.one_of(st.none(), st.uuids()), p=partition)
def test_an_answer_of_one_partition_is_kio_bytes(version, correlation_id, throttle_ms, name, topic_id, p):
    """The answer to librdkafka's request, one partition of one topic, written by its own writer."""
    topics = [(name, topic_id, [p])]
    expected = _kio_answer(version, correlation_id, topics, throttle_ms)
    assert produce_wire.encode_answer(correlation_id, version, topics, throttle_ms) == expected


@pytest.mark.parametrize("field", ["transactional_id", "name"])
def test_a_compact_string_over_32767_bytes_closes_the_connection_as_in_kafka(field):
    """Kafka's generated reader refuses a string longer than 0x7fff bytes, so the Produce does not
    parse: the fast reader leaves such a frame to kio's path, where wirecheck refuses it."""
    m = request_module(0, 9)
    for size, ok in ((0x7FFF, True), (0x8000, False)):
        names = {"transactional_id": None, "name": "t", field: "x" * size}
        request = m.ProduceRequest(transactional_id=names["transactional_id"], acks=-1,
                                   timeout=datetime.timedelta(seconds=1), topic_data=(m.TopicProduceData(
                                       name=names["name"], partition_data=(m.PartitionProduceData(
                                           index=0, records=b"batch"),)),))
        frame = encode_request(RequestHeader(0, 9, 1, "c"), request)
        # both readers, the C one (decode, where built) and its Python twin, leave it to kio's path
        assert (produce_wire.decode(frame, 9) is not None, produce_wire.decode_py(frame, 9) is not None) == (ok, ok)
        if not ok:
            with pytest.raises(FrameError, match="a string of 32768 bytes"):
                decode_request(frame, 0, 9)
