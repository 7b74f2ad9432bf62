"""kill -9 while a topic of many partitions is being created (CreateTopics' path): the next start
never fails, and finds the topic either whole or absent, with nothing of it left on disk."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig

PARTITIONS = 800

CHILD = textwrap.dedent('''
    import asyncio, os, pathlib, signal, sys
    from shim.storage import log_manager as lm
    from shim.storage.partition_log import LogConfig, PartitionLog

    directory, kill_at = pathlib.Path(sys.argv[1]), sys.argv[2]
    logs = lm.LogManager(directory, LogConfig(fsync=True))
    if sys.argv[4] == "keep":
        logs.create_topic("keep", 2)
    made = 0
    real_init, real_save = PartitionLog.__init__, lm.LogManager._save_topics

    def counting_init(self, *args, **kwargs):  # runs on the lifecycle thread
        global made
        if str(made) == kill_at:
            os.kill(os.getpid(), signal.SIGKILL)
        made += 1
        real_init(self, *args, **kwargs)

    def saving(self):
        real_save(self)
        if kill_at == "saved" and "big" in self.topics:
            os.kill(os.getpid(), signal.SIGKILL)

    PartitionLog.__init__, lm.LogManager._save_topics = counting_init, saving
    asyncio.run(logs.create_topic_async("big", int(sys.argv[3])))
    print("DONE", flush=True)
''')


@pytest.mark.parametrize("first", ["keep", "none"])  # another topic before it, or none (no topics.json yet)
@pytest.mark.parametrize("kill_at", ["0", "1", "400", str(PARTITIONS - 1), "saved"])
def test_kill9_mid_creation_leaves_the_topic_whole_or_absent(tmp_path, kill_at, first):
    out = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path), kill_at, str(PARTITIONS), first],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == -9, out.stderr
    logs = LogManager(tmp_path, LogConfig(fsync=True))
    try:
        assert first != "keep" or logs.topics["keep"].partitions == 2
        if kill_at == "saved":
            assert logs.topics["big"].partitions == PARTITIONS
            assert all(logs.get("big", p).log_end_offset == 0 for p in range(PARTITIONS))
        else:
            assert "big" not in logs.topics
            assert not list(tmp_path.glob("big-*"))  # the next start removed what the creation had made
            logs.create_topic("big", 3)  # and the name can be created again
            assert logs.get("big", 2).log_end_offset == 0
    finally:
        logs.close()
