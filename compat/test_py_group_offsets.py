"""consumer.group_commit and eos.send_offsets (compat/scenarios/) with the Python clients,
kafka-python, aiokafka and confluent-kafka: each library's subscribe()d group member
(compat/groups_support.py) and producers (compat/txn_clients.py), and its admin client.

* consumer.group_commit: a member reads 3 records and commits synchronously; the consumer's
  committed() and the library's admin client show offset 3; once it has closed, a new member of the
  group reads only the 2 records written since.
* eos.send_offsets: a read_committed member of a group feeds a transactional producer, which writes
  ``out-<value>`` for each record and sends the consumed offsets to the transaction with the
  consumer's group metadata (generation and member id; aiokafka's send_offsets_to_transaction takes
  the group id alone). A committed round of 3 records moves the group's offset to 3 and publishes
  out-in-0..2; an aborted round of 2 leaves the offset at 3 and adds nothing read_committed sees.

They run against ``compat_target``: nothing here looks inside the broker, so every expectation
holds on Apache Kafka too. Where Kafka completes a transaction asynchronously (the markers, those
of the offsets topic included) the tests wait for the state they check. The broker is not
restarted.
"""

from __future__ import annotations

import pytest

from compat.groups_support import admin_group_offsets, describe_group
from compat.support import wait_for
from compat.txn_clients import CLIENT_NAMES, settle

TIMEOUT = 60
RC, RU = "read_committed", "read_uncommitted"

# One test per client library; compat/scenarios/ maps each node id to its matrix cell.
each_client = pytest.mark.parametrize("client_name", CLIENT_NAMES)


@pytest.fixture
def name(compat_target, client_name):
    """``name("eos-in")``: a topic, group or transactional id unique to this run and client."""
    return lambda what: f"{compat_target.prefix}-{what}-{client_name}"


def consume(member, n: int) -> list[tuple[int, int, bytes]]:
    """Poll ``member`` until ``n`` records arrived: [(partition, offset, value)]."""
    got: list[tuple[int, int, bytes]] = []

    def enough():
        got.extend(member.poll())
        return len(got) >= n
    wait_for(enough, TIMEOUT, 0, f"{n} records (got {got})")
    return got


@each_client
def test_group_commit_and_resume(client_name, clients, wire, name, compat_target):
    bootstrap = compat_target.bootstrap_servers
    topic, group = name("group-commit"), name("group-commit-g")
    wire.create_topic(topic)
    producer = clients.plain_producer()
    assert [producer.send(topic, b"g-%d" % i) for i in range(3)] == [0, 1, 2]

    first = clients.group_member(topic, group)
    assert consume(first, 3) == [(0, 0, b"g-0"), (0, 1, b"g-1"), (0, 2, b"g-2")]
    first.commit()
    assert first.committed(0) == 3
    assert admin_group_offsets(client_name, bootstrap, group) == {(topic, 0): 3}
    clients.close(first)

    assert [producer.send(topic, b"g-%d" % i) for i in (3, 4)] == [3, 4]
    second = clients.group_member(topic, group)
    assert consume(second, 2) == [(0, 3, b"g-3"), (0, 4, b"g-4")]  # resumed at the committed offset
    assert admin_group_offsets(client_name, bootstrap, group) == {(topic, 0): 3}


@each_client
def test_send_offsets_to_transaction(client_name, clients, wire, name, compat_target):
    bootstrap = compat_target.bootstrap_servers
    source, sink, group, txn_id = name("eos-in"), name("eos-out"), name("eos-g"), name("eos-t")
    wire.create_topic(source)
    wire.create_topic(sink)
    plain = clients.plain_producer()
    assert [plain.send(source, b"in-%d" % i) for i in range(3)] == [0, 1, 2]
    tx = clients.txn_producer(txn_id)
    consumer = clients.group_member(source, group, read_committed=True)

    def process_round(n: int, commit: bool) -> tuple[list[bytes], int]:
        """consume → transform → produce, the offsets sent to the same transaction."""
        tx.begin()
        consumed = consume(consumer, n)
        for _, _, value in consumed:
            tx.send(sink, b"out-" + value)
        next_offset = consumed[-1][1] + 1
        tx.send_offsets({(source, 0): next_offset}, consumer.group_metadata())
        tx.commit() if commit else tx.abort()
        return [value for _, _, value in consumed], next_offset

    def group_offsets():
        return admin_group_offsets(client_name, bootstrap, group)

    assert process_round(3, commit=True) == ([b"in-0", b"in-1", b"in-2"], 3)
    described = describe_group(bootstrap, group)
    assert described is not None and (described[0], len(described[1])) == ("Stable", 1), described
    # Kafka applies the transaction's offsets when its COMMIT marker reaches the offsets topic.
    wait_for(lambda: group_offsets() == {(source, 0): 3}, TIMEOUT, 0.2, "the group offset 3")

    assert [plain.send(source, b"in-%d" % i) for i in (3, 4)] == [3, 4]
    assert process_round(2, commit=False) == ([b"in-3", b"in-4"], 5)
    wait_for(lambda: wire.describe_transaction(txn_id).transaction_state == "CompleteAbort", TIMEOUT, 0.05,
             "the aborted transaction to complete")
    assert group_offsets() == {(source, 0): 3}

    # out: committed 0-2, COMMIT 3, aborted 4-5, ABORT 6
    rc, ru = clients.consumer(RC, sink), clients.consumer(RU, sink)
    assert settle(rc, 7) == [(0, b"out-in-0"), (1, b"out-in-1"), (2, b"out-in-2")]
    assert settle(ru, 7) == [(0, b"out-in-0"), (1, b"out-in-1"), (2, b"out-in-2"),
                             (4, b"out-in-3"), (5, b"out-in-4")]
