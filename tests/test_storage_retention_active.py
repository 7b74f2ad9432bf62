"""Retention reaches the active segment (Kafka rolls first); start-up removes only real leftovers."""

from kafka_codecs.batch import parse_header
from kafka_codecs.records import encode_batch

from shim.storage.producer_state import Origin
from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig, PartitionLog


def _append(plog, ts, n=3):
    batch = bytearray(encode_batch([(b"k", b"v", (), ts)] * n))
    return plog.append(batch, parse_header(batch), ts, origin=Origin.CLIENT)


def test_time_retention_expires_a_quiet_partition(tmp_path):
    plog = PartitionLog(tmp_path / "t-0", "t", 0, LogConfig(retention_ms=1000), clean=True)
    _append(plog, 10_000)
    _append(plog, 10_500)
    assert len(plog.segments) == 1 and plog.enforce_retention(11_000) == 0  # not expired yet
    assert plog.enforce_retention(12_000) == 1
    assert (plog.log_start_offset, plog.log_end_offset) == (6, 6)
    assert len(plog.segments) == 1 and plog.segments[0].base_offset == 6 and plog.segments[0].size == 0
    assert plog.read(6, 1 << 20, False).data == b""
    assert _append(plog, 20_000).base_offset == 6  # offsets continue after the expired ones
    plog.close()
    reopened = PartitionLog(tmp_path / "t-0", "t", 0, LogConfig(retention_ms=1000), clean=True)
    assert (reopened.log_start_offset, reopened.log_end_offset) == (6, 9)
    reopened.close()


def test_size_retention_includes_the_active_segment(tmp_path):
    plog = PartitionLog(tmp_path / "t-0", "t", 0, LogConfig(retention_bytes=0), clean=True)
    _append(plog, 1)
    assert plog.enforce_retention(2) == 1
    assert plog.log_start_offset == plog.log_end_offset == 3
    assert plog.enforce_retention(3) == 0  # an empty active segment is never deleted
    plog.close()


def test_start_up_removes_partitions_of_deleted_topics_but_nothing_foreign(tmp_path):
    logs = LogManager(tmp_path, LogConfig())
    logs.create_topic("gone", 2)
    logs.create_topic("kept", 1)
    _append(logs.get("gone", 0), 5)
    foreign = tmp_path / "photos-2024"
    foreign.mkdir()
    (foreign / "beach.jpg").write_bytes(b"not a log")
    logs.close()
    # A crash between saving the topic list and removing the directories leaves them behind.
    logs = LogManager(tmp_path, LogConfig())
    info = logs.topics.pop("gone")
    logs._save_topics()
    for p in range(info.partitions):
        logs.logs.pop(("gone", p)).close()
    logs.close()
    logs = LogManager(tmp_path, LogConfig())
    assert not (tmp_path / "gone-0").exists() and not (tmp_path / "gone-1").exists()
    assert (tmp_path / "kept-0").is_dir() and (foreign / "beach.jpg").read_bytes() == b"not a log"
    logs.close()
