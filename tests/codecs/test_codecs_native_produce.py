"""The C readers of kafka_codecs/_produce.c give their Python twins' answers on every input: a
Produce request read by ``produce_request`` as shim.protocol.produce_wire.decode_py reads it (or
left to kio by both), a batch passed by ``check_batch`` exactly when
shim.storage.validation's Python checks pass it, with the same header. Hypothesis draws the inputs
and damages them; a build with AddressSanitizer reads a corpus of damaged ones without a fault."""

from __future__ import annotations

import importlib
import os
import random
import shutil
import subprocess
import sys
import sysconfig
import types
import uuid
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import kafka_codecs
from kafka_codecs import native
from kafka_codecs.batch import BatchHeader
from shim.errors import KafkaError
from shim.protocol import produce_wire
from shim.storage import validation

import native_corpus

pytestmark = pytest.mark.skipif(native.produce_request is None, reason="kafka_codecs._walk is not built (ABI 3)")

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
MAX_BYTES = 1_048_588


def _seen(decoded):
    """A decoded request in plain values (records as bytes), None when left to kio."""
    if decoded is None:
        return None
    header, request = decoded
    return (tuple(header), request.transactional_id, request.acks, request.timeout_ms,
            tuple((t.name, t.topic_id, tuple((p.index, bytes(p.records)) for p in t.partition_data))
                  for t in request.topic_data))


def _both_read(frame: bytes, version: int):
    c = produce_wire.decode(frame, version)
    py = produce_wire.decode_py(frame, version)
    assert _seen(c) == _seen(py)
    if c is not None:
        assert type(c[1]) is produce_wire.ProduceRequest and type(c[0]) is type(py[0])
        assert all(p.records.obj is py[1].topic_data[i].partition_data[j].records.obj
                   for i, t in enumerate(c[1].topic_data) for j, p in enumerate(t.partition_data))
    return c


def _verdict(check, batch: bytes):
    try:
        return check(batch)
    except KafkaError as e:
        return (int(e.code), e.message)


def _both_check(batch: bytes, max_bytes: int = MAX_BYTES):
    """The C path's verdict, which must be the Python path's; and the C check alone accepts a batch
    exactly when the Python checks pass it, CRC aside, uncompressed only."""
    python = _verdict(lambda b: validation._validate(b, max_bytes, True, None, None), batch)
    assert _verdict(lambda b: validation.validate_client_batch(b, max_bytes), batch) == python
    header = native.check_batch(batch, max_bytes, BatchHeader)
    if header is not None:
        assert type(header) is BatchHeader
        assert python == header or (header.crc != kafka_codecs.compute_crc(batch) and python[1] ==
                                    "record batch CRC-32C mismatch")
    elif len(batch) < 23 or not batch[22] & 0x07:  # Attributes' low byte: the codec
        assert not isinstance(python, BatchHeader)
    return python


@pytest.mark.parametrize("seed", range(4))
def test_the_corpus_of_requests_reads_alike(seed):
    read = [_both_read(frame, version) for version, frame in native_corpus.requests(seed, 140)]
    assert any(r is not None for r in read) and any(r is None for r in read)


@pytest.mark.parametrize("version,frame", native_corpus.small_requests())
def test_every_cut_and_edge_byte_of_small_requests_reads_alike(version, frame):
    read = [_both_read(edited, version) for edited in native_corpus.edge_edits(frame)]
    assert _both_read(frame, version) is not None and any(r is None for r in read)


@pytest.mark.parametrize("seed", range(4))
def test_the_corpus_of_batches_is_judged_alike(seed):
    verdicts = [_both_check(b) for b in native_corpus.batches(seed, 150)]
    assert any(isinstance(v, BatchHeader) for v in verdicts) and any(isinstance(v, tuple) and
                                                                     not isinstance(v, BatchHeader) for v in verdicts)


def _edits(data, raw: bytes) -> bytes:
    out = bytearray(raw)
    for _ in range(data.draw(st.integers(1, 4))):
        at = data.draw(st.integers(0, max(len(out) - 1, 0)))
        action = data.draw(st.sampled_from(["cut", "set", "insert", "append"]))
        if action == "cut":
            del out[at:]
        elif action == "set" and out:
            out[at] = data.draw(st.integers(0, 255))
        elif action == "insert":
            out[at:at] = data.draw(st.binary(min_size=1, max_size=4))
        else:
            out += data.draw(st.binary(min_size=1, max_size=4))
    return bytes(out)


@SETTINGS
@given(data=st.data(), version=st.integers(0, 13), seed=st.integers(0, 1 << 30))
def test_drawn_and_damaged_requests_read_alike(data, version, seed):
    rng = random.Random(seed)
    frame = native_corpus.request(version, [(
        "t" if version < 13 else uuid.UUID(int=rng.getrandbits(128)),
        {rng.randint(0, 9): native_corpus.batch(rng) for _ in range(rng.randint(0, 3))})],
        transactional_id=data.draw(st.one_of(st.none(), st.text(max_size=4))),
        client_id=data.draw(st.one_of(st.none(), st.text(max_size=4))))
    _both_read(frame, version)
    _both_read(_edits(data, frame), version)


@SETTINGS
@given(frame=st.binary(max_size=80), version=st.integers(0, 13))
def test_random_bytes_read_alike(frame, version):
    _both_read(frame, version)


@SETTINGS
@given(data=st.data(), seed=st.integers(0, 1 << 30), max_bytes=st.sampled_from([MAX_BYTES, 100, 61]),
       recrc=st.booleans())
def test_drawn_and_damaged_batches_are_judged_alike(data, seed, max_bytes, recrc):
    rng = random.Random(seed)
    raw = native_corpus.batch(rng, producer_id=data.draw(st.sampled_from([-1, 0, 5])),
                              base_sequence=data.draw(st.sampled_from([-1, 0, 9])))
    _both_check(raw, max_bytes)
    bad = _edits(data, raw)
    _both_check(native_corpus.with_crc(bad) if recrc else bad, max_bytes)


def test_a_compressed_batch_is_left_to_the_python_checks():
    from kafka_codecs import Compression, encode_batch

    raw = encode_batch([(b"k", b"v" * 100, [], 1)], compression=Compression.GZIP)
    assert native.check_batch(raw, MAX_BYTES, BatchHeader) is None
    assert isinstance(_both_check(raw), BatchHeader)


def test_the_header_given_carries_the_records_largest_timestamp():
    raw = bytearray(kafka_codecs.encode_batch([(None, b"a", [], 10), (None, b"b", [], 30), (None, b"c", [], 20)]))
    raw[35:43] = (5).to_bytes(8, "big")  # a producer's MaxTimestamp that disagrees with its records
    h = native.check_batch(native_corpus.with_crc(raw), MAX_BYTES, BatchHeader)
    assert h.max_timestamp == 30 and h == _both_check(native_corpus.with_crc(raw))


def test_a_build_older_than_the_readers_leaves_them_to_python(monkeypatch):
    """A stale _walk (ABI 2, without produce_request and check_batch) is not used for them."""
    stale = types.ModuleType("kafka_codecs._walk")
    stale.ABI = 2
    monkeypatch.setitem(sys.modules, "kafka_codecs._walk", stale)
    monkeypatch.setattr(kafka_codecs, "_walk", stale, raising=False)
    try:
        reloaded = importlib.reload(native)
        assert reloaded.produce_request is None and reloaded.check_batch is None
    finally:
        monkeypatch.undo()
        importlib.reload(native)
    assert native.produce_request is not None


_ASAN_DRIVER = """
import importlib.util, sys
sys.path[:0] = sys.argv[2:]
spec = importlib.util.spec_from_file_location("_walk", sys.argv[1])
walk = importlib.util.module_from_spec(spec); spec.loader.exec_module(walk)
from kafka_codecs.batch import BatchHeader
from shim.protocol import produce_wire
import native_corpus
read = 0
for seed in range(6):
    for version, frame in native_corpus.requests(seed, 200):
        for cut in (len(frame), len(frame) // 2, len(frame) - 1):
            read += walk.produce_request(produce_wire._CLASSES, frame[:cut], version) is not None
    for b in native_corpus.batches(seed, 200):
        for cut in (len(b), len(b) - 1, 61):
            walk.check_batch(b[:cut], 1 << 20, BatchHeader)
            walk.check_batch(bytearray(b[:cut]), 100, BatchHeader)
for version, frame in native_corpus.small_requests():
    for edited in native_corpus.edge_edits(frame):
        read += walk.produce_request(produce_wire._CLASSES, edited, version) is not None
print("read", read)
"""


def _asan_runtime() -> str | None:
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        return None
    path = subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()
    return path if os.path.isabs(path) and os.path.exists(path) else None


@pytest.mark.skipif(_asan_runtime() is None, reason="no C compiler with AddressSanitizer")
def test_an_address_sanitized_build_reads_the_corpus_without_a_fault(tmp_path):
    source = Path(kafka_codecs.__file__).with_name("_walk.c")
    so = tmp_path / ("_walk" + sysconfig.get_config_var("EXT_SUFFIX"))
    cc = shutil.which("cc") or shutil.which("gcc")
    build = subprocess.run([cc, "-O1", "-g", "-fwrapv", "-fsanitize=address,undefined", "-fno-omit-frame-pointer",
                            "-shared", "-fPIC", f"-I{sysconfig.get_paths()['include']}", str(source), "-o", str(so)],
                           capture_output=True, text=True)
    assert build.returncode == 0, build.stderr
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "LD_PRELOAD": _asan_runtime(), "ASAN_OPTIONS": "detect_leaks=0:abort_on_error=0",
           "UBSAN_OPTIONS": "halt_on_error=1:print_stacktrace=1", "PYTHONMALLOC": "malloc"}
    run = subprocess.run([sys.executable, "-c", _ASAN_DRIVER, str(so), str(root), str(root / "codecs"),
                          str(Path(__file__).parent)],
                         capture_output=True, text=True, env=env, timeout=600)
    assert run.returncode == 0 and "ERROR: AddressSanitizer" not in run.stderr, run.stderr[-3000:]
    assert "runtime error" not in run.stderr, run.stderr[-3000:]
    assert int(run.stdout.split()[-1]) > 0


def _claiming(version: int, left: int) -> bytes:
    """A frame of ``version`` whose one topic claims as many partitions as it has bytes left,
    which hold zeros: no partition can be read whole from it, and ``left`` zeros follow."""
    frame = bytearray(native_corpus.request(version, [("t" if version < 13 else uuid.UUID(int=1), {})]))
    count = left + 1 if version >= 9 else left
    tail = bytes(left)
    if version >= 9:  # the partition count is the varint before the topic's and request's tagged fields
        del frame[-3:]
        frame += _varint(count) + tail
    else:
        del frame[-4:]
        frame += count.to_bytes(4, "big") + tail
    return bytes(frame)


def _varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append(value & 0x7F | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


@pytest.mark.parametrize("version", [3, 9, 13])
def test_a_count_of_more_items_than_the_bytes_can_hold_allocates_nothing_for_them(version):
    """Read in C the partition tuple is allocated before its items: a count that cannot fit is
    refused first, so a frame of N bytes never asks for 8 N bytes of item slots."""
    import tracemalloc

    frame = _claiming(version, 4 << 20)
    assert produce_wire.decode_py(frame, version) is None
    tracemalloc.start()
    try:
        assert produce_wire.decode(frame, version) is None
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20
