"""Kafka record batch v2 (magic 2) encoding, decoding and header access."""

from .batch import (
    COMPRESSION_MASK,
    CONTROL_FLAG,
    DELETE_HORIZON_FLAG,
    HEADER_SIZE,
    MAGIC,
    TIMESTAMP_TYPE_MASK,
    TRANSACTIONAL_FLAG,
    BatchHeader,
    Compression,
    TimestampType,
    compute_crc,
    crc_ok,
    iter_batches,
    parse_header,
    set_max_timestamp,
    stamp,
)
from .compression import compress, decompress
from .control import ControlRecordType, encode_end_txn_marker, read_control_type, read_end_txn_marker
from .records import Header, InvalidBatch, Record, decode_batch, encode_batch, validate_batch

__all__ = [
    "COMPRESSION_MASK",
    "CONTROL_FLAG",
    "DELETE_HORIZON_FLAG",
    "HEADER_SIZE",
    "MAGIC",
    "TIMESTAMP_TYPE_MASK",
    "TRANSACTIONAL_FLAG",
    "BatchHeader",
    "Compression",
    "ControlRecordType",
    "Header",
    "InvalidBatch",
    "Record",
    "TimestampType",
    "compress",
    "compute_crc",
    "crc_ok",
    "decode_batch",
    "decompress",
    "encode_batch",
    "encode_end_txn_marker",
    "iter_batches",
    "parse_header",
    "read_control_type",
    "read_end_txn_marker",
    "set_max_timestamp",
    "stamp",
    "validate_batch",
]
