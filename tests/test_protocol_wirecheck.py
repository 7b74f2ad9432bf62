"""The length checker that runs before kio parses a request (shim.protocol.wirecheck).

Each kind of bad length on hand-built frames; then, for every advertised (api, version), requests
built by hypothesis from kio's own schema classes and encoded by kio: the checker passes them,
refuses every truncation, and whatever it lets through after a huge count is written anywhere is
parsed by kio in a child process whose address space is capped (kio's defect aborts the process).
"""

from __future__ import annotations

import datetime
import functools
import multiprocessing
import resource
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from kio.static.primitive import Records

from shim.apis import REGISTRY
from shim.protocol.framing import FrameError
from shim.protocol.messages import RequestHeader, decode_request, encode_request, request_checker, request_class
from shim.protocol.messages import _reader as kio_reader
from shim.protocol.wirecheck import MalformedRequest

from kio_strategies import entities

st.register_type_strategy(Records, st.binary(max_size=64).map(Records))

ADVERTISED = [(key, v) for key, spec in sorted(REGISTRY.items()) for v in range(spec.min_version, spec.max_version + 1)]
HUGE_VARINT = bytes.fromhex("ffffffff0f")  # 2^32 - 1: a compact count of 2^32 - 2
HUGE_INT32 = struct.pack(">i", 0x7FFFFFFF)
HUGE_INT16 = struct.pack(">h", 0x7FFF)


def header_v2(api_key: int, version: int, client_id: bytes = b"c") -> bytes:
    return struct.pack(">hhih", api_key, version, 1, len(client_id)) + client_id + b"\x00"


def header_v1(api_key: int, version: int, client_id: bytes = b"c") -> bytes:
    return struct.pack(">hhih", api_key, version, 1, len(client_id)) + client_id


def refused(frame: bytes, key: int, version: int) -> str:
    with pytest.raises(MalformedRequest) as info:
        request_checker(key, version)(frame)
    return str(info.value)


# -- each kind of bad length ---------------------------------------------------------------------

FETCH_V12_FIXED = struct.pack(">iiiibii", -1, 500, 1, 1024, 0, 0, -1)  # replica .. session_epoch


def test_the_kio_reproducer_is_a_malformed_frame_not_an_abort():
    frame = header_v2(1, 12) + FETCH_V12_FIXED + HUGE_VARINT
    assert "FetchRequest.topics" in refused(frame, 1, 12)
    with pytest.raises(FrameError):
        decode_request(frame, 1, 12)


def test_compact_count_times_element_size_must_fit():
    # 3 partitions of a Fetch v12 topic need 3 * 33 bytes; 40 are there.
    frame = header_v2(1, 12) + FETCH_V12_FIXED + b"\x02" + b"\x02t" + b"\x04" + bytes(40)
    assert "FetchTopic.partitions" in refused(frame, 1, 12)


def test_legacy_count_huge_and_negative():
    fixed = struct.pack(">iiiib", -1, 500, 1, 1024, 0)  # Fetch v4
    assert "FetchRequest.topics" in refused(header_v1(1, 4) + fixed + HUGE_INT32, 1, 4)
    assert "FetchRequest.topics" in refused(header_v1(1, 4) + fixed + struct.pack(">i", -2), 1, 4)


def test_null_where_the_schema_has_no_null():
    fixed = struct.pack(">iiiib", -1, 500, 1, 1024, 0)
    assert "FetchRequest.topics" in refused(header_v1(1, 4) + fixed + struct.pack(">i", -1), 1, 4)
    assert "null" in refused(header_v2(1, 12) + FETCH_V12_FIXED + b"\x00", 1, 12)


def test_nullable_null_is_accepted():
    # Metadata v1: topics -1 means every topic.
    frame = header_v1(3, 1) + struct.pack(">i", -1)
    request_checker(3, 1)(frame)
    assert decode_request(frame, 3, 1)[1].topics is None


def test_strings_and_bytes_longer_than_the_frame():
    # DescribeGroups v0: an array of legacy strings; then Produce v3's legacy records bytes.
    assert "DescribeGroups" in refused(header_v1(15, 0) + struct.pack(">ih", 1, 0x7FFF) + b"g", 15, 0)
    assert "length" in refused(header_v1(15, 0) + struct.pack(">ih", 1, -2), 15, 0)
    produce = struct.pack(">hhiih", -1, 1, 1000, 1, 1) + b"t" + struct.pack(">iii", 1, 0, 0x7FFFFFF0) + bytes(8)
    assert "records" in refused(header_v1(0, 3) + produce, 0, 3)


def test_client_id_longer_than_the_frame():
    frame = struct.pack(">hhih", 18, 0, 1, 0x7FFF) + b"abc"
    assert "client_id" in refused(frame, 18, 0)


def test_compact_string_longer_than_the_frame():
    # ApiVersions v3: client_software_name claims 2^31 bytes.
    frame = header_v2(18, 3) + bytes.fromhex("8180808008") + b"x"
    assert "client_software_name" in refused(frame, 18, 3)


@pytest.mark.parametrize("varint", ["ffffffffff01", "ffffffff10", "ff"])
def test_varints_longer_than_five_bytes_above_32_bits_or_cut_short(varint):
    frame = header_v2(18, 3) + bytes.fromhex(varint)
    assert "varint" in refused(frame, 18, 3)


def test_tagged_fields_count_size_and_known_tag_data():
    base = header_v2(18, 3)[:-1]  # the header's tag section is what changes
    body = b"\x02a\x021\x00"
    assert "tagged fields count" in refused(base + b"\x7f" + body, 18, 3)
    fetch_tags = header_v2(1, 12) + FETCH_V12_FIXED + b"\x01\x01\x01"  # then Fetch v12's tag section
    assert "tagged fields size" in refused(fetch_tags + b"\x01\x00\x7f", 1, 12)
    # a tag the header does not know: kio refuses it anyway, and the checker before the walk
    assert "more than the 0 this version knows" in refused(base + b"\x01\x05\x01\x00" + body, 18, 3)
    # Fetch v12's tag 0 (cluster_id) whose string ends before the tag's declared size.
    fetch = header_v2(1, 12) + FETCH_V12_FIXED + b"\x01\x01\x01" + b"\x01\x00\x03\x01zz"
    assert "cluster_id" in refused(fetch, 1, 12)


def test_truncated_fixed_fields():
    # Heartbeat v0: group_id, then generation_id cut after one of its four bytes.
    assert "truncated" in refused(header_v1(12, 0) + b"\x00\x01g\x00", 12, 0)


# -- every advertised api/version, from requests kio encodes -----------------------------------


def examples(key: int, version: int, count: int = 4) -> tuple[bytes, ...]:
    """``count`` requests of this version built by hypothesis from kio's schema class, encoded
    by kio (derandomized: the same ones every run); the first ``count`` of ``_examples``, which
    hypothesis builds once per version for the tests below."""
    return _examples(key, version)[:count]


@functools.cache
def _examples(key: int, version: int) -> tuple[bytes, ...]:
    """Two requests whose every array holds one to three items, so that every field of the
    schema has a place in them (the huge counts below go to each place), then two whose arrays
    may also be empty or null."""
    return _drawn(key, version, 1) + _drawn(key, version, 0)


def _drawn(key: int, version: int, min_items: int) -> tuple[bytes, ...]:
    cls = request_class(key, version)
    strategy = entities(cls, min_items).map(lambda r: encode_request(RequestHeader(key, version, 7, "wirecheck"), r))
    out: list[bytes] = []

    @settings(max_examples=2, deadline=None, derandomize=True, database=None,
              suppress_health_check=list(HealthCheck))  # fmt: skip
    @given(strategy)
    def collect(frame):
        out.append(frame)

    collect()
    return tuple(out)


@pytest.mark.parametrize("key,version", ADVERTISED)
def test_every_version_passes_whole_and_is_refused_truncated(key, version):
    check = request_checker(key, version)
    for frame in examples(key, version):
        check(frame)
        assert decode_request(frame, key, version)[0].correlation_id == 7
        for cut in range(len(frame)):
            with pytest.raises(MalformedRequest):
                check(frame[:cut])


def _huge_variants(frame: bytes, flexible: bool):
    for i in range(len(frame)):
        if flexible:
            yield frame[:i] + HUGE_VARINT + frame[i + 1:]
        yield frame[:i] + HUGE_INT32 + frame[i + 4:]
        yield frame[:i] + HUGE_INT16 + frame[i + 2:]


def _parse_capped(frames: list[tuple[int, int, bytes]]) -> None:
    """Child process: kio parses each frame (which the checker passed) with 1 GiB of address
    space at most, as decode_request has it parse them after its check."""
    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    for key, version, frame in frames:
        cls = request_class(key, version)
        try:
            header, used = kio_reader(cls.__header_schema__)(frame, 0)
            kio_reader(cls)(frame, used)
        except Exception:  # noqa: BLE001 - decode_request makes any parse failure a FrameError
            pass
        except BaseException as exc:  # and a panic in kio's parser (pyo3's PanicException) too
            if type(exc).__name__ != "PanicException":
                raise


def test_a_huge_count_anywhere_in_any_version_is_refused_or_harmless():
    """Every position of every version's requests gets a huge varint, int32 and int16 in turn;
    what the checker lets through (the huge value landed in a plain number) kio parses in a
    child with a capped address space, where the unchecked frames abort it."""
    passed, refusals = {}, 0
    for key, version in ADVERTISED:
        check = request_checker(key, version)
        for frame in examples(key, version, 2):
            for variant in _huge_variants(frame, request_class(key, version).__flexible__):
                try:
                    check(variant)
                except MalformedRequest:
                    refusals += 1
                    continue
                passed[(key, version, variant)] = None  # a variant made twice is parsed once
    assert refusals and passed  # both branches exercised
    child = multiprocessing.get_context("fork").Process(target=_parse_capped, args=(list(passed),))
    child.start()
    child.join(120)
    assert child.exitcode == 0, f"kio died on one of the {len(passed)} frames the checker passed"


def test_the_capped_child_does_die_on_an_unchecked_huge_count():
    """The child above would notice: kio alone, on the reproducer, does not survive the cap."""
    child = multiprocessing.get_context("fork").Process(target=_kio_alone)
    child.start()
    child.join(60)
    assert child.exitcode != 0


def _kio_alone() -> None:
    from kio.serial import readers as r

    resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))
    r.compact_array_reader(r.read_int32)(HUGE_VARINT, 0)


def test_a_panic_in_kio_is_a_malformed_frame(monkeypatch):
    """pyo3 turns a Rust panic into PanicException, a BaseException the broker's `except
    Exception` would let through; decode_request makes it a FrameError like any parse failure."""
    import shim.protocol.messages as messages

    class PanicException(BaseException):  # pyo3_runtime.PanicException's shape: not an Exception
        pass

    def panicking(cls):
        def read(buffer, offset):
            raise PanicException("index out of bounds")

        return read

    frame = header_v1(18, 0)
    monkeypatch.setattr(messages, "_reader", panicking)
    with pytest.raises(FrameError, match="kio panicked"):
        decode_request(frame, 18, 0)

    def interrupted(cls):
        def read(buffer, offset):
            raise KeyboardInterrupt

        return read

    monkeypatch.setattr(messages, "_reader", interrupted)
    with pytest.raises(KeyboardInterrupt):
        decode_request(frame, 18, 0)


def _tagged(body: bytes, tags: list[bytes]) -> bytes:
    """``body`` (a kio-encoded flexible request) with its top-level tagged fields replaced."""
    from kafka_codecs.varint import encode_uvarint

    assert body[-1] == 0  # kio wrote no tagged fields
    return body[:-1] + encode_uvarint(len(tags)) + b"".join(tags)


def _metadata_v12() -> bytes:
    request = request_class(3, 12)(topics=None, allow_auto_topic_creation=True, include_topic_authorized_operations=False)
    return encode_request(RequestHeader(3, 12, 1, "c"), request)


def test_a_megabyte_of_empty_tagged_fields_is_refused_before_it_is_walked():
    """A Metadata v12 of 300,000 empty tagged fields (1.2 MB): the checker walked every one in
    Python (2 to 5 s with the event loop held; a 100 MiB frame, minutes) before kio refused the
    first unknown tag. A count above the tags the version knows is refused at once."""
    from kafka_codecs.varint import encode_uvarint

    frame = _tagged(_metadata_v12(), [encode_uvarint(i) + b"\x00" for i in range(300_000)])
    with pytest.raises(MalformedRequest, match="MetadataRequest tagged fields: more than the 0 this version knows"):
        request_checker(3, 12)(frame)


def test_an_unknown_tag_is_refused_where_it_is_read():
    with pytest.raises(MalformedRequest, match="FetchRequest tagged fields: unknown tag 5"):
        request_checker(1, 12)(_tagged(_fetch_v12(), [b"\x05\x00"]))


def _fetch_v12() -> bytes:
    import datetime

    request = request_class(1, 12)(max_wait=datetime.timedelta(0), min_bytes=1, max_bytes=1, isolation_level=0,
                                   topics=(), forgotten_topics_data=(), rack_id="", cluster_id=None)  # fmt: skip
    return encode_request(RequestHeader(1, 12, 1, "c"), request)


def test_a_known_tag_passes_and_a_repeated_one_is_refused():
    """Fetch v12 knows one tag (ClusterId, 0): once is parsed; twice, which no client writes and kio
    would read as the last, is more tags than the version knows."""
    once = _tagged(_fetch_v12(), [b"\x00\x02\x02x"])
    assert decode_request(once, 1, 12)[1].cluster_id == "x"
    with pytest.raises(MalformedRequest, match="more than the 1 this version knows"):
        request_checker(1, 12)(_tagged(_fetch_v12(), [b"\x00\x02\x02x", b"\x00\x02\x02y"]))


def test_a_compact_string_over_32767_bytes_is_refused_as_kafka_refuses_it():
    """Kafka's generated readers refuse a string field longer than 0x7fff bytes ("string field ...
    had invalid length"), so the request does not parse: a compact length may claim more than a
    legacy one can. A ConsumerGroupHeartbeat's 100,000-byte regex was compiled and cached."""
    m_fields = dict(group_id="g", member_id="m", member_epoch=0, instance_id=None, rack_id=None,
                    rebalance_timeout=datetime.timedelta(seconds=30), subscribed_topic_names=None,
                    server_assignor=None, topic_partitions=None)
    for size, ok in ((0x7FFF, True), (0x8000, False)):
        frame = encode_request(RequestHeader(68, 1, 1, "c"), request_class(68, 1)(
            subscribed_topic_regex="a" * size, **m_fields))
        if ok:
            assert decode_request(frame, 68, 1)[1].subscribed_topic_regex == "a" * size
        else:
            assert "subscribed_topic_regex: a string of 32768 bytes" in refused(frame, 68, 1)
    # in an array (DescribeGroups v5's group ids) too
    frame = header_v2(15, 5) + b"\x02" + bytes.fromhex("818002") + b"g" * 0x8000 + b"\x00\x00"
    assert "a string of 32768 bytes" in refused(frame, 15, 5)
