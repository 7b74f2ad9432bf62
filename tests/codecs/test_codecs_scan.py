"""The record scan of a topic config's checks: the C scan (kafka_codecs._walk.scan) and its Python
twin (records.scan_records_py) give the same verdicts and facts, and the facts are right."""

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kafka_codecs import HEADER_SIZE, encode_batch
from kafka_codecs import records as records_module
from kafka_codecs.records import _walk_records_py, scan_records_py

from test_codecs_validate import _mutate, _record, record_tuples

LONG = st.integers(-(1 << 63), (1 << 63) - 1)
needs_native = pytest.mark.skipif(records_module._scan is scan_records_py, reason="kafka_codecs._walk.scan was not built")


def _outcome(scan, payload, *args):
    try:
        return scan(payload, *args)
    except ValueError as exc:
        return f"rejected: {exc}"


@needs_native
@settings(max_examples=1500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records=st.lists(record_tuples, min_size=1, max_size=6), mutations=st.integers(0, 2),
       count_adjust=st.sampled_from([0, 0, 0, -1, 1]), base_ts=LONG | st.integers(0, 1 << 42),
       compact=st.booleans(), check=st.booleans(), now=LONG | st.integers(0, 1 << 42), before=LONG.map(abs) | st.integers(0, 1 << 40),
       after=LONG.map(abs) | st.integers(0, 1 << 40), cap=st.integers(0, 4), data=st.data())
def test_native_scan_matches_the_python_scan(records, mutations, count_adjust, base_ts, compact, check, now, before,
                                             after, cap, data):
    payload = bytearray(encode_batch(records)[HEADER_SIZE:])
    for _ in range(mutations):
        _mutate(payload, data)
    count = len(records) + count_adjust
    args = (count, base_ts, compact, check, now, min(before, (1 << 63) - 1), min(after, (1 << 63) - 1), cap)
    native = _outcome(records_module._scan, bytes(payload), *args)
    assert native == _outcome(scan_records_py, bytes(payload), *args)
    assert native == _outcome(records_module._scan, memoryview(b"xx" + payload)[2:], *args)
    # the scan's verdict is the walk's
    walk = _outcome(_walk_records_py, bytes(payload), count, base_ts)
    assert native == walk if isinstance(walk, str) else (native[0], native[8]) == walk


@pytest.mark.parametrize("scan", [scan_records_py, records_module._scan])
def test_scan_reports_null_keys_and_out_of_range_timestamps(scan):
    body = (_record(key=None, ts_delta=0) + _record(ts_delta=5, offset_delta=1)
            + _record(key=None, ts_delta=-3, offset_delta=2) + _record(ts_delta=100, offset_delta=3))
    # base 1000, now 1000: [1000 - 2, 1000 + 10] holds 1000 and 1005, not 997 nor 1100
    facts = scan(body, 4, 1000, False, True, 1000, 2, 10, 10)
    assert facts == (True, True, [0, 2], 2, [(2, 997, 2), (3, 1100, 3)], 2, 0, 100, 1100)
    capped = scan(body, 4, 1000, False, True, 1000, 2, 10, 1)
    assert capped[2:6] == ([0], 2, [(2, 997, 2)], 2)
    assert scan(body, 4, 1000, False, False, 1000, 2, 10, 10)[4:6] == ([], 0)
    # on a compacted topic a record's missing key is its only error (LogValidator.validateRecord)
    assert scan(body, 4, 1000, True, True, 1000, 2, 10, 10)[2:6] == ([0, 2], 2, [(3, 1100, 3)], 1)
    # RecordBatch.NO_TIMESTAMP (-1) is never out of range
    assert scan(_record(), 1, -1, False, True, 1 << 40, 0, 0, 10)[4:6] == ([], 0)


@pytest.mark.parametrize("scan", [scan_records_py, records_module._scan])
@pytest.mark.parametrize("body, canonical", [
    (_record() + _record(offset_delta=1), True),
    (_record() + _record(offset_delta=2), False),  # offset deltas out of order
    (_record(ts_delta=1), False),  # a first timestamp delta other than 0
    (b"\x10\x7f" + _record()[2:], False),  # non-zero attributes
    (_record(headers=b"\x02\x02h\x00"), True),
    (_record(headers=b"\x02\x02\xff\x00"), False),  # a header key the broker would decode and encode again
])
def test_scan_tells_records_the_broker_would_write_the_same(scan, body, canonical):
    assert scan(body, body.count(b"k\x02v"), 0, False, False, 0, 0, 0, 0)[1] is canonical


@pytest.mark.parametrize("scan", [scan_records_py, records_module._scan])
def test_an_overlong_varint_is_not_canonical(scan):
    body = b"\x90\x80\x80\x80\x00" + _record()[1:]  # the length in five bytes
    assert scan(body, 1, 0, False, False, 0, 0, 0, 0)[1] is False
