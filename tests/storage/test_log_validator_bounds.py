"""When the produce path reads a batch's records for the timestamp bounds (shim.storage.log_validator):
with only message.timestamp.after.max.ms set, as Kafka 4 sets it by default (KIP-1030), the header's
MaxTimestamp decides, so batches within the bound stay bytes and only one past it is read."""

from __future__ import annotations

import pytest

from kafka_codecs import encode_batch
from kafka_codecs.batch import parse_header
from shim.errors import ErrorCode
from shim.storage.log_validator import RecordErrors, needs_record_pass, validate_records
from shim.storage.partition_log import LogConfig

NOW = 1_800_000_000_000
HOUR = 3_600_000


def header(*stamps):
    batch = encode_batch([(None, b"v%d" % i, (), ts) for i, ts in enumerate(stamps)])
    return batch, parse_header(batch)


def test_a_batch_within_the_after_bound_is_not_read():
    config = LogConfig(timestamp_after_max_ms=HOUR)
    _, h = header(NOW - 10 * HOUR, NOW + HOUR)  # the earliest does not matter without a before bound
    assert not needs_record_pass(config, h, NOW)
    _, ahead = header(NOW, NOW + HOUR + 1)
    assert needs_record_pass(config, ahead, NOW)


def test_a_batch_past_it_is_read_to_name_the_records_at_fault():
    config = LogConfig(timestamp_after_max_ms=HOUR)
    batch, h = header(NOW, NOW + 2 * HOUR, NOW + 3 * HOUR)
    with pytest.raises(RecordErrors) as caught:
        validate_records(batch, h, config, NOW, "t-0")
    assert caught.value.code == ErrorCode.invalid_timestamp
    assert [i for i, _ in caught.value.record_errors] == [1, 2]


@pytest.mark.parametrize("config", [LogConfig(timestamp_before_max_ms=HOUR),
                                    LogConfig(timestamp_before_max_ms=HOUR, timestamp_after_max_ms=HOUR)])
def test_a_before_bound_needs_every_record(config):
    _, h = header(NOW, NOW)  # MaxTimestamp says nothing of the earliest record
    assert needs_record_pass(config, h, NOW)


def test_no_bound_and_log_append_time_read_nothing():
    _, h = header(NOW + 10 * HOUR)
    assert not needs_record_pass(LogConfig(), h, NOW)
    assert not needs_record_pass(LogConfig(timestamp_after_max_ms=HOUR, log_append_time=True), h, NOW)
