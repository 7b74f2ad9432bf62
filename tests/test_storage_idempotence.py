"""Idempotent-producer sequence and epoch rules, on PartitionLog directly (no sockets).

Kafka's rules (ProducerStateManager, ProducerAppendInfo.checkSequence, ProducerStateEntry):
a retry of one of the last five batches of the current epoch succeeds with its original base
offset and appends nothing; any other sequence that does not follow the last one is
OUT_OF_ORDER_SEQUENCE_NUMBER; an older epoch is INVALID_PRODUCER_EPOCH; a newer epoch must start
at sequence 0; a producer with no state accepts any sequence; sequences wrap from INT32_MAX to 0.
"""

from __future__ import annotations

import pytest

from kafka_codecs import Compression, encode_batch, parse_header
from shim.storage.producer_state import Origin
from shim.errors import ErrorCode, KafkaError
from shim.storage.partition_log import LogConfig
from shim.storage.validation import validate_client_batch

INT32_MAX = 2**31 - 1
PID = 4242
TS = 1_700_000_000_000


def batch(seq: int, n: int = 1, *, pid: int = PID, epoch: int = 0, compression=Compression.NONE) -> bytes:
    records = [(b"k%d" % i, b"value-%d" % i, [("seq", str(seq).encode())], TS + i) for i in range(n)]
    return encode_batch(records, producer_id=pid, producer_epoch=epoch, base_sequence=seq, compression=compression)


def append(plog, data: bytes):
    buf = bytearray(data)
    h = validate_client_batch(buf, plog.config.max_message_bytes)
    return plog.append(buf, h, TS, origin=Origin.CLIENT)


def rejected(plog, data: bytes) -> ErrorCode:
    """Append must fail; returns the error code and checks that nothing reached the log."""
    end, size = plog.log_end_offset, plog.size_bytes()
    with pytest.raises(KafkaError) as info:
        append(plog, data)
    assert (plog.log_end_offset, plog.size_bytes()) == (end, size)
    return info.value.code


def produce_run(plog, sizes, *, epoch=0, first_seq=0):
    """Append consecutive batches of the given record counts; returns [(batch bytes, base offset)]."""
    out, seq = [], first_seq
    for n in sizes:
        data = batch(seq, n, epoch=epoch)
        res = append(plog, data)
        assert not res.duplicate
        out.append((data, res.base_offset))
        seq += n
    return out


def test_duplicate_of_each_of_the_last_five_batches_returns_its_original_offset(open_log):
    plog = open_log()
    sent = produce_run(plog, [1, 2, 3, 1, 4, 2, 5])  # seven batches, 18 records
    end, size = plog.log_end_offset, plog.size_bytes()
    assert end == 18
    for data, base in sent[-5:]:
        res = append(plog, data)
        assert res.duplicate
        assert res.base_offset == base
    assert (plog.log_end_offset, plog.size_bytes()) == (end, size)
    # Duplicates leave the producer's state alone: the next sequence is still 18.
    assert append(plog, batch(18)).base_offset == 18


def test_duplicate_detection_works_for_compressed_batches(open_log):
    plog = open_log()
    first = batch(0, 10, compression=Compression.ZSTD)
    assert append(plog, first).base_offset == 0
    res = append(plog, first)
    assert res.duplicate and res.base_offset == 0
    assert plog.log_end_offset == 10


def test_retry_older_than_the_last_five_batches_is_out_of_order(open_log):
    plog = open_log()
    sent = produce_run(plog, [1] * 6)
    assert rejected(plog, sent[0][0]) == ErrorCode.out_of_order_sequence_number
    # The second batch is still one of the last five.
    res = append(plog, sent[1][0])
    assert res.duplicate and res.base_offset == sent[1][1]


def test_sequence_gap_is_out_of_order(open_log):
    plog = open_log()
    produce_run(plog, [3])  # sequences 0..2
    assert rejected(plog, batch(4)) == ErrorCode.out_of_order_sequence_number
    assert rejected(plog, batch(100)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(3)).base_offset == 3


def test_partial_overlap_with_a_recent_batch_is_not_a_duplicate(open_log):
    plog = open_log()
    produce_run(plog, [3, 3])  # sequences 0..2 and 3..5
    # Same first sequence as the second batch but a different length: not a retry of it.
    assert rejected(plog, batch(3, 2)) == ErrorCode.out_of_order_sequence_number
    assert rejected(plog, batch(1, 2)) == ErrorCode.out_of_order_sequence_number


def test_stale_epoch_is_invalid_producer_epoch(open_log):
    plog = open_log()
    old = batch(0, epoch=2)
    append(plog, old)
    produce_run(plog, [2], epoch=3, first_seq=0)
    assert rejected(plog, batch(1, epoch=2)) == ErrorCode.invalid_producer_epoch
    assert rejected(plog, batch(0, epoch=2)) == ErrorCode.invalid_producer_epoch
    # A retry of the old epoch's batch is not a duplicate once the epoch moved on.
    assert rejected(plog, old) == ErrorCode.invalid_producer_epoch
    assert append(plog, batch(2, epoch=3)).base_offset == 3


def test_new_epoch_must_start_at_sequence_zero(open_log):
    plog = open_log()
    produce_run(plog, [4, 6])  # epoch 0, sequences 0..9
    assert rejected(plog, batch(10, epoch=1)) == ErrorCode.out_of_order_sequence_number
    assert rejected(plog, batch(5, epoch=1)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(0, 2, epoch=1)).base_offset == 10
    assert append(plog, batch(2, epoch=1)).base_offset == 12
    # The bump forgot epoch 0: its sequences are now stale, not duplicates.
    assert rejected(plog, batch(4, 6, epoch=0)) == ErrorCode.invalid_producer_epoch


def test_unknown_producer_accepts_any_sequence_then_enforces_order(open_log):
    plog = open_log()
    assert append(plog, batch(1234, 2)).base_offset == 0
    assert append(plog, batch(77, pid=PID + 1, epoch=9)).base_offset == 2
    assert rejected(plog, batch(1237)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(1236)).base_offset == 3
    assert rejected(plog, batch(79, pid=PID + 1, epoch=9)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(78, pid=PID + 1, epoch=9)).base_offset == 4


def test_sequence_wraps_at_int32_max(open_log):
    plog = open_log()
    append(plog, batch(INT32_MAX - 2, 2))  # INT32_MAX-2, INT32_MAX-1
    wrapping = batch(INT32_MAX, 3)  # INT32_MAX, 0, 1
    assert parse_header(wrapping).last_sequence == 1
    assert append(plog, wrapping).base_offset == 2
    # The wrapped batch is recognised as a duplicate.
    res = append(plog, wrapping)
    assert res.duplicate and res.base_offset == 2
    # After the wrap the next sequence is 2, not INT32_MAX + 3 and not 0.
    assert rejected(plog, batch(0)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(2)).base_offset == 5


def test_single_record_batch_at_int32_max_is_followed_by_zero(open_log):
    plog = open_log()
    append(plog, batch(INT32_MAX - 1))
    append(plog, batch(INT32_MAX))
    assert rejected(plog, batch(1)) == ErrorCode.out_of_order_sequence_number
    assert append(plog, batch(0)).base_offset == 2


def test_batches_without_producer_id_are_never_deduplicated(open_log):
    plog = open_log()
    data = encode_batch([(b"k", b"v", [], TS)])
    assert [append(plog, data).base_offset for _ in range(3)] == [0, 1, 2]


@pytest.mark.parametrize("segment_bytes", [LogConfig().segment_bytes, 300], ids=["one-segment", "rolled-with-snapshots"])
@pytest.mark.parametrize("shutdown", ["clean", "crash"])
def test_producer_state_survives_reopen(open_log, shutdown, segment_bytes):
    config = LogConfig(segment_bytes=segment_bytes)
    plog = open_log(config)
    sent = produce_run(plog, [1, 2, 3, 1, 4, 2, 5], epoch=1)
    end = plog.log_end_offset
    if shutdown == "clean":
        open_log.close(plog)
    else:
        open_log.crash(plog)
    plog = open_log(config, clean=shutdown == "clean")
    assert plog.log_end_offset == end
    assert (len(plog.segments) > 2) == (segment_bytes < 10_000)
    for data, base in sent[-5:]:
        res = append(plog, data)
        assert res.duplicate and res.base_offset == base
    assert rejected(plog, sent[0][0]) == ErrorCode.out_of_order_sequence_number
    assert rejected(plog, batch(19, epoch=1)) == ErrorCode.out_of_order_sequence_number
    assert rejected(plog, batch(18, epoch=0)) == ErrorCode.invalid_producer_epoch
    assert append(plog, batch(18, epoch=1)).base_offset == end


# -- COORDINATOR appends (Kafka: AppendOrigin.COORDINATOR) ----------------------------------------


def coordinator_append(plog, data: bytes):
    return plog.append(data, parse_header(data), TS, origin=Origin.COORDINATOR)


def test_coordinator_appends_skip_duplicate_and_sequence_checks(open_log):
    """The group coordinator writes every transactional offset commit with base sequence 0, as
    Kafka's storeOffsets does: the same sequence twice is two appends, not a duplicate."""
    plog = open_log()
    first = coordinator_append(plog, batch(0))
    again = coordinator_append(plog, batch(0))
    assert (first.base_offset, again.base_offset, again.duplicate) == (0, 1, False)
    assert coordinator_append(plog, batch(77)).base_offset == 2  # out of sequence: not checked either
    assert rejected(plog, batch(5)) == ErrorCode.out_of_order_sequence_number  # a client still is


def test_coordinator_appends_still_check_the_producer_epoch(open_log):
    plog = open_log()
    append(plog, batch(0, epoch=3))
    with pytest.raises(KafkaError) as info:
        coordinator_append(plog, batch(0, epoch=2))
    assert info.value.code == ErrorCode.invalid_producer_epoch
    assert plog.log_end_offset == 1
