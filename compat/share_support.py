"""Helpers of the share-group compat tests: share.version on, group configs, describe, consumers."""

from __future__ import annotations

import contextlib
import datetime
import importlib
import time

from compat import support
from compat.groups_support import create_topic

SHARE_TIMEOUT = 60
# Heartbeats every 500 ms (Kafka: 5 s) so members learn a new assignment quickly: a member that
# joins first is assigned the partitions by its next heartbeat, once they are initialized.
FAST_HEARTBEATS = {"group.share.heartbeat.interval.ms": "500", "group.share.min.heartbeat.interval.ms": "500"}


@contextlib.contextmanager
def share_broker(data_dir):
    """An in-process broker emulating Kafka 4.1 with share groups on and FAST_HEARTBEATS."""
    from shim import BrokerThread

    with BrokerThread(data_dir=data_dir, listen="127.0.0.1:0", kafka_version="4.1", extra=FAST_HEARTBEATS) as b:
        enable_share_groups(b.bootstrap_servers)
        yield b


def enable_share_groups(bootstrap: str) -> None:
    """UpdateFeatures share.version=1, as ``kafka-features upgrade --feature share.version=1``."""
    from shim.protocol.messages import request_class

    m = importlib.import_module(request_class(57, 1).__module__)
    r = support._ask(support.first_address(bootstrap), 57, 1, m.UpdateFeaturesRequest(
        timeout=datetime.timedelta(seconds=5), validate_only=False,
        feature_updates=(m.FeatureUpdateKey(feature="share.version", max_version_level=1, upgrade_type=1),)))
    assert r.error_code == 0 and all(x.error_code == 0 for x in r.results), r


def set_group_configs(bootstrap: str, group: str, **configs) -> None:
    """IncrementalAlterConfigs on the GROUP resource, through confluent-kafka's AdminClient."""
    from confluent_kafka.admin import AdminClient, AlterConfigOpType, ConfigEntry, ConfigResource, ResourceType

    entries = [ConfigEntry(k.replace("_", "."), v, incremental_operation=AlterConfigOpType.SET)
               for k, v in configs.items()]
    resource = ConfigResource(ResourceType.GROUP, group, incremental_configs=entries)
    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the result is in
    assert admin.incremental_alter_configs([resource])[resource].result(timeout=30) is None


def share_topic(bootstrap: str, topic: str, partitions: int, group: str) -> None:
    """Share groups on, ``topic`` created, and ``group`` reading it from its earliest offset."""
    enable_share_groups(bootstrap)
    create_topic(bootstrap, topic, partitions)
    set_group_configs(bootstrap, group, share_auto_offset_reset="earliest")


def describe_share_group(bootstrap: str, group: str):
    from shim.protocol.messages import make, request_class

    r = support._ask(support.first_address(bootstrap), 77, 1,
                     make(request_class(77, 1), group_ids=(group,), include_authorized_operations=False))
    return r.groups[0]


def share_consumer(bootstrap: str, group: str, explicit: bool = False):
    import confluent_kafka as ck

    conf = {"bootstrap.servers": bootstrap, "group.id": group}
    if explicit:
        conf["share.acknowledgement.mode"] = "explicit"
    return ck.ShareConsumer(conf)


def poll(consumer, timeout: float = 0.2) -> list:
    return [m for m in consumer.poll(timeout) if m.error() is None]


def poll_until(consumers, done, on_message=None, timeout: float = SHARE_TIMEOUT) -> None:
    """Poll every consumer in turn until ``done()``; ``on_message(index, consumer, message)``."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, "timed out polling the share consumers"
        for i, c in enumerate(consumers):
            for m in poll(c):
                if on_message is not None:
                    on_message(i, c, m)


def produce(bootstrap: str, topic: str, records) -> None:
    """``records``: (partition, value) pairs, in order."""
    import confluent_kafka as ck

    producer = ck.Producer({"bootstrap.servers": bootstrap, "acks": "all"})
    for partition, value in records:
        producer.produce(topic, value=value, partition=partition)
    assert producer.flush(30) == 0


def share_start_offset(bootstrap: str, group: str, topic: str, partition: int = 0) -> int:
    """The share-partition start offset the share coordinator keeps (ReadShareGroupStateSummary, 87;
    -1 while it has none)."""
    from shim.protocol.messages import make, request_class, request_module

    address = support.first_address(bootstrap)
    m3 = request_module(3, 12)
    md = support._ask(address, 3, 12, make(request_class(3, 12), topics=(m3.MetadataRequestTopic(topic_id=None, name=topic),),
                                           allow_auto_topic_creation=False, include_topic_authorized_operations=False))
    m = request_module(87, 0)
    r = support._ask(address, 87, 0, make(request_class(87, 0), group_id=group, topics=(m.ReadStateSummaryData(
        topic_id=md.topics[0].topic_id, partitions=(m.PartitionData(partition=partition, leader_epoch=-1),)),)))
    return r.results[0].partitions[0].start_offset


def outlast_share_session_timeout(bootstrap: str, group: str, topic: str, timeout: float = SHARE_TIMEOUT) -> None:
    """Returns once the broker's ``group.share.session.timeout.ms`` has run out since this call: a
    witness member heartbeats once (ShareGroupHeartbeat 76) and never again, and the broker timing
    it out of the group is the state waited on."""
    import base64
    import uuid

    from shim.protocol.messages import make, request_class

    member = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
    r = support._ask(support.first_address(bootstrap), 76, 1, make(
        request_class(76, 1), group_id=group, member_id=member, member_epoch=0, rack_id=None,
        subscribed_topic_names=(topic,)))
    assert r.error_code == 0, r
    deadline = time.monotonic() + timeout
    while member in {m.member_id for m in describe_share_group(bootstrap, group).members}:
        assert time.monotonic() < deadline, "the witness member never timed out"
        time.sleep(0.2)
