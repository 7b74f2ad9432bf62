"""The internal topics are compacted (Kafka creates them with cleanup.policy=compact): after the
cleaner has run, a restart rebuilds the same committed offsets, groups and transactions from far
fewer records."""

from __future__ import annotations

from shim.coordinators.txn import OFFSETS_TOPIC, TXN_TOPIC
from shim.storage import cleaner_manager as cm

from group_helpers import T0, TOPIC, fetched, offsets

SMALL_SEGMENTS = {"offsets.topic.segment.bytes": "2000", "transaction.state.log.segment.bytes": "2000"}


def compact_all(node, now=T0) -> int:
    cleaned = 0
    for plog in node.logs.logs.values():
        ltc = cm.plan(plog, now)
        if cm.should_clean(plog, ltc):
            for _ in cm.clean(plog, ltc, now, cm.CleanerConfig()):
                pass
            cleaned += 1
    return cleaned


def records_in(node, topic) -> int:
    return sum(sum(1 for _ in plog.iter_batches()) for (t, _), plog in node.logs.logs.items() if t == topic)


def test_internal_topics_are_created_compacted_and_old_data_dirs_are_upgraded(nodes):
    node = nodes(extra=SMALL_SEGMENTS)
    node.logs.create_topic(TOPIC, 1)
    node.groups.commit_offsets("g", "", None, -1, offsets((0, 1)), T0)
    node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    for name in (OFFSETS_TOPIC, TXN_TOPIC):
        assert node.logs.topic(name).configs["cleanup.policy"] == "compact"
        assert node.logs.get(name, 0).config.compact and not node.logs.get(name, 0).config.delete
    assert node.logs.get(OFFSETS_TOPIC, 0).config.segment_bytes == 2000
    # a data directory written before compaction existed: its internal topics become compacted
    for name in (OFFSETS_TOPIC, TXN_TOPIC):
        node.logs.topic(name).configs = {}
    node.logs._save_topics()
    nodes.crash(node)
    again = nodes(extra=SMALL_SEGMENTS)
    assert again.logs.topic(OFFSETS_TOPIC).configs["cleanup.policy"] == "compact"
    assert again.logs.get(TXN_TOPIC, 0).config.compact


def test_a_restart_after_compaction_rebuilds_the_same_offsets_groups_and_transactions(nodes):
    node = nodes(extra=SMALL_SEGMENTS, offsets_topic_num_partitions=1, transaction_state_num_partitions=1)
    node.logs.create_topic(TOPIC, 6)
    gc = node.groups
    for i in range(300):
        gc.commit_offsets(f"g{i % 3}", "", None, -1, offsets((i % 6, i)), T0 + i)
    gc.delete_groups(["g2"], T0 + 400)  # tombstones
    # transactional offsets: one committed, one aborted
    for n, commit in ((0, True), (1, False)):
        pid, epoch = node.txn.init_producer_id(f"tx{n}", 60_000, -1, -1, T0)
        node.txn.add_offsets(f"tx{n}", pid, epoch, "g0", T0)
        gc.commit_txn_offsets("g0", f"tx{n}", pid, epoch, "", None, -1, offsets((n, 10_000 + n)), T0 + 500)
        node.txn.end_txn(f"tx{n}", pid, epoch, commit, T0 + 501)
    for i in range(200):  # the transactional ids' state records, updated again and again
        node.txn.init_producer_id(f"tx{i % 2}", 60_000, -1, -1, T0 + 600 + i)
    gc.commit_offsets("g1", "", None, -1, offsets((5, 1)), T0 + 700)  # roll past what is to be cleaned
    before = {g: fetched(gc, g) for g in ("g0", "g1", "g2")}
    assert before["g0"][(TOPIC, 0)] == 10_000 and (TOPIC, 1) not in before["g0"] and before["g2"] == {}
    txns = {t: (m.producer_id, m.producer_epoch, m.state) for t, m in node.txn.txns.items()}
    offsets_before, txn_before = records_in(node, OFFSETS_TOPIC), records_in(node, TXN_TOPIC)
    assert compact_all(node, T0 + 1000) == 2
    assert records_in(node, OFFSETS_TOPIC) < offsets_before / 4
    assert records_in(node, TXN_TOPIC) < txn_before / 4
    nodes.crash(node)
    again = nodes(extra=SMALL_SEGMENTS, offsets_topic_num_partitions=1, transaction_state_num_partitions=1)
    assert {g: fetched(again.groups, g) for g in ("g0", "g1", "g2")} == before
    assert {t: (m.producer_id, m.producer_epoch, m.state) for t, m in again.txn.txns.items()} == txns


def test_transactional_offsets_keep_their_commit_marker_while_cleaned_in_another_group(nodes):
    # one batch per segment, so the offsets and their COMMIT marker are cleaned in different groups:
    # a round carries its transaction state across groups (Kafka's doClean), so the marker stays as
    # long as the offsets it commits, past delete.retention.ms, and a replay finds them committed
    tiny = {"offsets.topic.segment.bytes": "100"}
    node = nodes(extra=tiny, offsets_topic_num_partitions=1)
    node.logs.create_topic(TOPIC, 2)
    pid, epoch = node.txn.init_producer_id("tx", 60_000, -1, -1, T0)
    node.txn.add_offsets("tx", pid, epoch, "g", T0)
    node.groups.commit_txn_offsets("g", "tx", pid, epoch, "", None, -1, offsets((0, 42)), T0)
    node.txn.end_txn("tx", pid, epoch, True, T0)
    for i in range(3):
        node.groups.commit_offsets("other", "", None, -1, offsets((1, i)), T0)
    plog = node.logs.get(OFFSETS_TOPIC, 0)
    markers = lambda: sum(1 for seg in plog.segments for _, h in seg.iter_headers() if h.is_control)  # noqa: E731
    assert markers() == 1
    assert compact_all(node, T0) == 1
    for i in range(30):  # dirty enough again (min.cleanable.dirty.ratio 0.5)
        node.groups.commit_offsets("other", "", None, -1, offsets((1, 10 + i)), T0)
    assert compact_all(node, T0 + 86_400_000) == 1
    assert markers() == 1
    nodes.crash(node)
    again = nodes(extra=tiny, offsets_topic_num_partitions=1)
    assert fetched(again.groups, "g", [(TOPIC, 0)], stable=True) == {(TOPIC, 0): 42}
