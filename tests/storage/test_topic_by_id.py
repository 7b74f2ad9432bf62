"""LogManager.topic_by_id: a dict look-up once a topic was found (Produce v13 and Fetch ask it for
every topic of every request), never an answer for a topic that is gone."""

from __future__ import annotations

import uuid

from shim.storage.log_manager import LogManager
from shim.storage.partition_log import LogConfig


class _CountingTopics(dict):
    """The topic table, counting the scans over it."""

    scans = 0

    def values(self):
        self.scans += 1
        return super().values()


def test_found_once_then_looked_up_and_forgotten_with_its_topic(tmp_path):
    logs = LogManager(tmp_path, LogConfig())
    try:
        logs.topics = _CountingTopics(logs.topics)
        for i in range(50):
            logs.create_topic(f"t{i}", 1)
        wanted = logs.topics["t42"]
        assert logs.topic_by_id(wanted.topic_id) is wanted
        scans = logs.topics.scans
        for _ in range(100):
            assert logs.topic_by_id(wanted.topic_id) is wanted
        assert logs.topics.scans == scans  # no scan of the table once found

        logs.delete_topic("t42")
        assert logs.topic_by_id(wanted.topic_id) is None
        again = logs.create_topic("t42", 1)
        assert again.topic_id != wanted.topic_id
        assert (logs.topic_by_id(wanted.topic_id), logs.topic_by_id(again.topic_id)) == (None, again)
        assert logs.topic_by_id(uuid.uuid4()) is None
    finally:
        logs.close()


def test_a_topic_removed_from_the_table_is_not_answered(tmp_path):
    logs = LogManager(tmp_path, LogConfig())
    try:
        info = logs.create_topic("gone", 1)
        assert logs.topic_by_id(info.topic_id) is info
        logs.topics.pop("gone")  # as start-up forgets a topic whose deletion a crash cut short
        assert logs.topic_by_id(info.topic_id) is None
    finally:
        logs.close()
