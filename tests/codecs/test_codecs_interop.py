"""Batches built by real client libraries, and ours read by them.

kafka-python needs python-snappy, lz4 and zstandard for its codecs;
aiokafka uses cramjam.  Both build and parse batches offline.
"""

import aiokafka.record.default_records as aiokafka_records
import kafka.record.default_records as kafka_python_records
import pytest
from aiokafka.record.control_record import ABORT_MARKER, COMMIT_MARKER
from aiokafka.record.control_record import ControlRecord as AiokafkaControlRecord

from kafka_codecs import (
    Compression,
    Header,
    Record,
    crc_ok,
    decode_batch,
    encode_batch,
    encode_end_txn_marker,
    parse_header,
    set_max_timestamp,
    stamp,
)

BUILDERS = {
    "kafka-python": kafka_python_records.DefaultRecordBatchBuilder,
    "aiokafka": aiokafka_records.DefaultRecordBatchBuilder,
    "aiokafka-py": aiokafka_records._DefaultRecordBatchBuilderPy,
}
READERS = {
    "kafka-python": kafka_python_records.DefaultRecordBatch,
    "aiokafka": aiokafka_records.DefaultRecordBatch,
    "aiokafka-py": aiokafka_records._DefaultRecordBatchPy,
}

# Compressible and larger than one snappy (32 KiB) and lz4 (64 KiB) block, so
# the clients do not fall back to sending the batch uncompressed.
RECORDS = [
    (None, b"first value " * 10, [], 1_600_000_000_000),
    (b"key-1", b"", [("trace", b"abc"), ("empty", None)], 1_600_000_000_005),
    (b"key-2", None, [], 1_599_999_999_990),
    (b"big", b"0123456789abcdef" * 10_000, [("h", b"v")], 1_600_000_000_001),
]


def _build(builder_cls, codec, *, transactional=False):
    builder = builder_cls(
        magic=2, compression_type=codec, is_transactional=transactional, producer_id=77 if transactional else -1,
        producer_epoch=2 if transactional else -1, base_sequence=30 if transactional else -1, batch_size=1 << 22,
    )  # fmt: skip
    for offset, (key, value, headers, ts) in enumerate(RECORDS):
        assert builder.append(offset, timestamp=ts, key=key, value=value, headers=headers) is not None
    return bytes(builder.build())


def _expected(base_offset=0):
    return [
        Record(base_offset + i, ts, key, value, tuple(Header(k, v) for k, v in headers))
        for i, (key, value, headers, ts) in enumerate(RECORDS)
    ]


@pytest.mark.parametrize("codec", list(Compression))
@pytest.mark.parametrize("client", list(BUILDERS))
def test_decode_client_batches(client, codec):
    batch = _build(BUILDERS[client], codec)
    assert crc_ok(batch)
    header, records = decode_batch(batch)
    assert header.compression == codec
    assert (header.base_timestamp, header.max_timestamp) == (1_600_000_000_000, 1_600_000_000_005)
    assert records == _expected()


@pytest.mark.parametrize("client", list(BUILDERS))
def test_decode_client_transactional_batch(client):
    batch = bytearray(_build(BUILDERS[client], Compression.ZSTD, transactional=True))
    stamp(batch, 1000, 5)
    assert crc_ok(batch)
    header, records = decode_batch(batch)
    assert header.is_transactional and not header.is_control
    assert (header.producer_id, header.producer_epoch, header.base_sequence) == (77, 2, 30)
    assert header.last_sequence == 33 and header.next_offset == 1004
    assert records == _expected(1000)


def _client_view(reader_cls, batch):
    reader = reader_cls(batch)
    assert reader.validate_crc()
    return reader, [(r.offset, r.timestamp, r.key, r.value, list(r.headers)) for r in reader]


@pytest.mark.parametrize("codec", list(Compression))
@pytest.mark.parametrize("client", list(READERS))
def test_clients_read_our_batches(client, codec):
    batch = encode_batch(
        RECORDS, base_offset=42, compression=codec, producer_id=9, producer_epoch=1, base_sequence=0,
        is_transactional=True, partition_leader_epoch=3,
    )  # fmt: skip
    reader, records = _client_view(READERS[client], batch)
    assert reader.compression_type == codec
    assert reader.is_transactional and not reader.is_control_batch
    assert (reader.producer_id, reader.producer_epoch, reader.base_sequence) == (9, 1, 0)
    assert reader.next_offset == 46
    assert records == [(42 + i, ts, k, v, list(h)) for i, (k, v, h, ts) in enumerate(RECORDS)]


@pytest.mark.parametrize("client", list(READERS))
def test_clients_read_log_append_time(client):
    batch = bytearray(encode_batch(RECORDS, compression=Compression.LZ4))
    set_max_timestamp(batch, 1_700_000_000_000)
    reader, records = _client_view(READERS[client], bytes(batch))
    assert reader.timestamp_type == 1
    assert {ts for _, ts, *_ in records} == {1_700_000_000_000}


@pytest.mark.parametrize("commit", [True, False])
def test_kafka_python_reads_our_marker(commit):
    batch = encode_end_txn_marker(producer_id=5, producer_epoch=0, coordinator_epoch=3, commit=commit, timestamp=10)
    reader = kafka_python_records.DefaultRecordBatch(batch)
    assert reader.validate_crc() and reader.is_control_batch and reader.is_transactional
    (record,) = list(reader)
    assert (record.version, record.type, record.commit, record.abort) == (0, int(commit), commit, not commit)


@pytest.mark.parametrize("reader_name", ["aiokafka", "aiokafka-py"])
@pytest.mark.parametrize("commit", [True, False])
def test_aiokafka_reads_our_marker(reader_name, commit):
    batch = encode_end_txn_marker(producer_id=5, producer_epoch=0, coordinator_epoch=3, commit=commit, timestamp=10)
    reader, records = _client_view(READERS[reader_name], batch)
    assert reader.is_control_batch
    ((_, _, key, _, _),) = records
    assert AiokafkaControlRecord.parse(key) == (COMMIT_MARKER if commit else ABORT_MARKER)


def test_crc_matches_kafka_python():
    batch = _build(kafka_python_records.DefaultRecordBatchBuilder, Compression.GZIP)
    assert parse_header(batch).crc == kafka_python_records.DefaultRecordBatch(batch).crc
