"""Under --fsync always a share-state write (WriteShareGroupState) is fsynced by the group commit
off the loop and answered after it (shim.apis._coordinator_sync), and a read of it waits for it too."""

from __future__ import annotations

from share.test_share_apis import TOPIC, _set
from share.test_share_state_apis import AVAILABLE, initialize, read, write
from shim.config import BrokerConfig
from shim.errors import ErrorCode
from shim.node import Node
from shim.storage import fs
from tests.test_coordinator_group_commit import _synced_before
from tests.test_produce_group_commit import RecordingDisk

STATE_LOG = "__share_group_state-"


async def test_a_share_state_write_is_answered_after_its_fsync_off_the_loop(tmp_path):
    disk = RecordingDisk()
    previous = fs.use(disk)
    node = Node(BrokerConfig(data_dir=tmp_path / "data", kafka_version="4.1", fsync="always"))
    try:
        node.logs.create_topic(TOPIC, 1)
        node.finalize_features({"share.version": 1})
        node.share.configs.alter("g", [_set("share.auto.offset.reset", "earliest")], False)
        assert await initialize(node, 0, 0) == (ErrorCode.none, None)  # Kafka 4.1: Write needs it (KAFKA-19338)
        written = len(disk.events)
        assert await write(node, 0, 10, [(10, 19, AVAILABLE, 1)], state_epoch=1) == ErrorCode.none
        answered = disk.record("answer")
        assert any(e[0] == "write" and STATE_LOG in str(e[1]) for e in disk.events[written:])
        assert _synced_before(disk.events, STATE_LOG, written, answered)
        assert disk.on_loop == []  # the fsync ran on the flusher's thread
        assert await read(node, 0) == (ErrorCode.none, 1, 10, [(10, 19, AVAILABLE, 1)])
    finally:
        node.close()
        fs.use(previous)
