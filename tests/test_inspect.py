"""kafka-shim inspect: read-only view of a live broker's data directory."""

import json
import subprocess
import sys

import confluent_kafka as ck
import pytest

from shim.inspect import inspect_data_dir


def _txn_producer(bootstrap, txn_id):
    p = ck.Producer({"bootstrap.servers": bootstrap, "transactional.id": txn_id})
    p.init_transactions(10)
    return p


def test_open_and_aborted_transactions_while_serving(kafka_shim):
    bs = kafka_shim.bootstrap_servers
    data_dir = kafka_shim.broker.config.data_dir
    plain = ck.Producer({"bootstrap.servers": bs})
    plain.produce("inspected", value=b"p0")
    plain.flush(10)
    aborted = _txn_producer(bs, "aborter")
    aborted.begin_transaction()
    aborted.produce("inspected", value=b"a0")
    aborted.produce("inspected", value=b"a1")
    aborted.flush(10)
    aborted.abort_transaction(10)  # offsets 1-2, marker 3
    held = _txn_producer(bs, "holder")
    held.begin_transaction()
    held.produce("inspected", value=b"h0")  # offset 4, stays open
    held.flush(10)
    before = sorted(p.name for p in data_dir.iterdir())

    report = kafka_shim.call(inspect_data_dir, data_dir, 10**13)
    (part,) = [p for p in report["partitions"] if p["topic"] == "inspected"]
    assert (part["log_start_offset"], part["high_watermark"], part["last_stable_offset"]) == (0, 5, 4)
    (open_txn,) = part["open_transactions"]
    assert open_txn["transactional_id"] == "holder" and open_txn["first_offset"] == 4
    assert open_txn["producer_epoch"] == 0 and open_txn["age_ms"] > 0
    (abort,) = part["aborted_transactions"]
    assert (abort["first_offset"], abort["last_offset"]) == (1, 3)
    states = {t["transactional_id"]: t["state"] for t in report["transactions"]}
    assert states == {"aborter": "CompleteAbort", "holder": "Ongoing"}
    assert sorted(p.name for p in data_dir.iterdir()) == before  # read-only: nothing created or removed
    held.abort_transaction(10)


def test_cli_json_and_table(kafka_shim, tmp_path):
    bs = kafka_shim.bootstrap_servers
    p = _txn_producer(bs, "cli")
    p.begin_transaction()
    p.produce("cli-topic", value=b"x")
    p.commit_transaction(10)
    data_dir = str(kafka_shim.broker.config.data_dir)
    out = subprocess.run([sys.executable, "-m", "shim", "inspect", "--data-dir", data_dir, "--json"],
                         capture_output=True, text=True, check=True).stdout
    (part,) = [x for x in json.loads(out)["partitions"] if x["topic"] == "cli-topic"]
    assert part["high_watermark"] == 2 and part["last_stable_offset"] == 2 and not part["open_transactions"]
    table = subprocess.run([sys.executable, "-m", "shim", "inspect", "--data-dir", data_dir],
                           capture_output=True, text=True, check=True).stdout
    assert "cli-topic-0" in table and "CompleteCommit" in table
    missing = subprocess.run([sys.executable, "-m", "shim", "inspect", "--data-dir", str(tmp_path / "nope")],
                             capture_output=True, text=True)
    assert missing.returncode == 2 and "not a kafka-shim data directory" in missing.stderr


@pytest.fixture
def quiet_cleaner(tmp_path):
    """A broker whose background cleaner waits an hour between passes: the test runs the round."""
    from shim.broker import BrokerThread

    with BrokerThread(data_dir=tmp_path / "kafka-shim", listen="127.0.0.1:0",
                      extra={"log.cleaner.backoff.ms": "3600000"}) as broker:
        yield broker


def test_the_cleaner_progress_of_a_compacted_partition(quiet_cleaner):
    from confluent_kafka.admin import AdminClient, NewTopic

    kafka_shim = quiet_cleaner
    bs = kafka_shim.bootstrap_servers
    data_dir = kafka_shim.broker.config.data_dir
    topic = NewTopic("inspected-compact", 1, 1, config={"cleanup.policy": "compact", "segment.bytes": "600",
                                                        "min.cleanable.dirty.ratio": "0.2"})
    admin = AdminClient({"bootstrap.servers": bs})
    admin.create_topics([topic])["inspected-compact"].result(10)
    p = ck.Producer({"bootstrap.servers": bs})
    for i in range(40):
        p.produce("inspected-compact", key=b"k%d" % (i % 2), value=b"v%d" % i)
        p.flush(10)

    def cleaner():
        report = kafka_shim.call(inspect_data_dir, data_dir, 10**13)
        (part,) = [x for x in report["partitions"] if x["topic"] == "inspected-compact"]
        return part["cleaner"]

    before = cleaner()
    assert before["first_dirty_offset"] == 0 and before["clean_bytes"] == 0
    assert before["dirty_ratio"] == 1.0 and before["cleanable_now"] and before["last_cleaned_ms"] is None
    assert kafka_shim.clean_logs() == 1
    after = cleaner()
    assert after["first_dirty_offset"] == after["first_uncleanable_offset"] > 0
    assert after["dirty_ratio"] == 0.0 and not after["cleanable_now"] and after["last_cleaned_ms"] > 0
    assert after["clean_bytes"] < before["dirty_bytes"]
    p.produce("inspected-plain", value=b"x")  # auto-created, cleanup.policy=delete
    p.flush(10)
    (plain,) = [x for x in kafka_shim.call(inspect_data_dir, data_dir, 10**13)["partitions"]
                if x["topic"] == "inspected-plain"]
    assert plain["cleaner"] is None


def test_recovery_points_and_the_checkpoint_files_age(tmp_path):
    import os

    from shim.storage.log_manager import LogManager
    from shim.storage.partition_log import LogConfig
    from tests.test_storage_partition_log import fill

    logs = LogManager(tmp_path, LogConfig(segment_bytes=2000))
    try:
        logs.create_topic("rp", 2)
        assert inspect_data_dir(tmp_path, 10**13)["recovery_point_checkpoint"] is None
        fill(logs.get("rp", 0), 12, pad=200)  # rolls: the point is in a later segment
        logs.checkpoint_recovery_points()
        logs.create_topic("late", 1)  # not in the checkpoint yet
        active = logs.get("rp", 0).active
        os.utime(tmp_path / "recovery-point-checkpoint", (1_000_000, 1_000_000))
        report = inspect_data_dir(tmp_path, 1_000_000_000 + 2500)
        points = {(p["topic"], p["partition"]): p["recovery_point"] for p in report["partitions"]}
        assert points[("rp", 0)] == {"segment_base_offset": active.base_offset, "offset": 24, "position": active.size}
        assert active.base_offset > 0
        assert points[("rp", 1)] == {"segment_base_offset": 0, "offset": 0, "position": 0}
        assert points[("late", 0)] is None
        assert report["recovery_point_checkpoint"]["age_ms"] == 2500
        table = subprocess.run([sys.executable, "-m", "shim", "inspect", "--data-dir", str(tmp_path)],
                               capture_output=True, text=True, check=True).stdout
        assert "recovery-point-checkpoint, written" in table
        (row,) = [line for line in table.splitlines() if line.startswith("rp-0 ")]
        assert f"24 (seg {active.base_offset}@{active.size})" in row
    finally:
        logs.close()
