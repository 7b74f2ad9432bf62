"""Metadata auto-creation of an internal topic (Kafka: AutoTopicCreationManager.creatableTopic):
__consumer_offsets gets offsets.topic.num.partitions, so the partition a group hashes to exists and
its commits are replayed after a restart."""

from __future__ import annotations

from confluent_kafka import ConsumerGroupTopicPartitions, TopicPartition
from confluent_kafka.admin import AdminClient, NewTopic

from shim.broker import BrokerThread


def test_offsets_committed_after_a_metadata_request_for_the_offsets_topic_survive_a_restart(tmp_path):
    data = tmp_path / "kafka-shim"
    with BrokerThread(data_dir=data, listen="127.0.0.1:0") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        offsets_topic = admin.list_topics("__consumer_offsets", timeout=30).topics["__consumer_offsets"]
        for f in admin.create_topics([NewTopic("t", 1, 1)]).values():
            f.result(30)
        request = ConsumerGroupTopicPartitions("orders-consumer", [TopicPartition("t", 0, 7)])
        admin.alter_consumer_group_offsets([request])["orders-consumer"].result(30)
        configs = broker.call(lambda: broker.node.logs.topic("__consumer_offsets").configs)
        assert configs["cleanup.policy"] == "compact"
    with BrokerThread(data_dir=data, listen="127.0.0.1:0") as broker:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap_servers})
        listed = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions("orders-consumer")])
        got = listed["orders-consumer"].result(30)
        assert [(tp.topic, tp.partition, tp.offset) for tp in got.topic_partitions] == [("t", 0, 7)]
    assert len(offsets_topic.partitions) == 50  # Kafka creates it with offsets.topic.num.partitions
