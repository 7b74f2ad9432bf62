"""A classic member's session ends at its deadline -- its last Heartbeat, JoinGroup, SyncGroup or
OffsetCommit plus its session timeout (Kafka: rescheduleClassicGroupMemberHeartbeat) -- on a broker
over loopback: a static member whose consumer stops without LeaveGroup (librdkafka's close of a
static consumer) leaves its group Empty then, and a request that arrives after that finds it gone,
even when the broker's loop comes to both late, as Kafka's coordinator queues the expiry when its
timer fires and the request when it arrives.

Synchronised on the group's state (DescribeGroups) and on the broker's own deadline, never on sleeps;
the one sleep stands for a loop held up past a deadline."""

from __future__ import annotations

import asyncio
import struct
import time

from shim import Broker
from shim.errors import ErrorCode as E
from shim.node import now_ms
from shim.protocol.messages import RequestHeader, decode_response, encode_request, make, request_class, request_module

SESSION_MS = 1_500
GROUP, TOPIC, INSTANCE = "g", "t", "static-0"
SUBSCRIPTION = struct.pack(">hih", 0, 1, len(TOPIC)) + TOPIC.encode() + struct.pack(">i", -1)


class Client:
    """One connection; requests built with kio, answered in order."""

    def __init__(self, reader, writer) -> None:
        self.reader, self.writer, self.correlation = reader, writer, 0

    def frame(self, api_key: int, version: int, **fields) -> bytes:
        self.correlation += 1
        payload = encode_request(RequestHeader(api_key, version, self.correlation, "expiry"),
                                 make(request_class(api_key, version), **fields))
        return struct.pack(">i", len(payload)) + payload

    async def answer(self, api_key: int, version: int):
        size = struct.unpack(">i", await self.reader.readexactly(4))[0]
        return decode_response(await self.reader.readexactly(size), api_key, version)[1]

    async def call(self, api_key: int, version: int, **fields):
        self.writer.write(self.frame(api_key, version, **fields))
        return await self.answer(api_key, version)


def broker(tmp_path) -> Broker:
    return Broker(data_dir=tmp_path / "data", listen="127.0.0.1:0", group_min_session_timeout_ms=1_000,
                  group_initial_rebalance_delay_ms=0)


async def connect(b: Broker) -> Client:
    return Client(*await asyncio.open_connection(*b.node.endpoint(None, 0)))


async def static_member(client: Client) -> tuple[str, int]:
    """JoinGroup and SyncGroup of a static member (session SESSION_MS); (member id, generation)."""
    protocols = (make(request_module(11, 5).JoinGroupRequestProtocol, name="range", metadata=SUBSCRIPTION),)
    joined = await client.call(11, 5, group_id=GROUP, session_timeout=SESSION_MS, rebalance_timeout=30_000,
                               member_id="", group_instance_id=INSTANCE, protocol_type="consumer",
                               protocols=protocols)
    assert joined.error_code == E.none, joined
    synced = await client.call(14, 3, group_id=GROUP, generation_id=joined.generation_id, member_id=joined.member_id,
                               group_instance_id=INSTANCE, assignments=())
    assert synced.error_code == E.none, synced
    return joined.member_id, joined.generation_id


async def commit(client: Client, member_id: str, generation: int) -> None:
    m = request_module(8, 8)
    topic = m.OffsetCommitRequestTopic(name=TOPIC, partitions=(m.OffsetCommitRequestPartition(
        partition_index=0, committed_offset=1, committed_leader_epoch=-1, committed_metadata=""),))
    answer = await client.call(8, 8, group_id=GROUP, generation_id_or_member_epoch=generation, member_id=member_id,
                               group_instance_id=INSTANCE, topics=(topic,))
    assert answer.topics[0].partitions[0].error_code == E.none, answer


async def state(client: Client) -> str:
    (group,) = (await client.call(15, 5, groups=(GROUP,), include_authorized_operations=False)).groups
    return group.group_state


async def test_a_static_member_that_stops_without_leaving_expires_at_its_last_request_plus_its_session(tmp_path):
    """The closing OffsetCommit is the member's last word: its group is Empty from that commit plus
    the session timeout, not before and not a second later (librdkafka's 0081 deletes the group
    right after)."""
    async with broker(tmp_path) as b:
        b.node.logs.create_topic(TOPIC, 1)
        client = await connect(b)
        member_id, generation = await static_member(client)
        sent = now_ms()
        await commit(client, member_id, generation)
        answered = now_ms()
        while (observed := await state(client)) == "Stable":
            await asyncio.sleep(0.005)  # a poll of the state, not a wait for it
        empty_at = now_ms()
        assert observed == "Empty"
        assert empty_at >= sent + SESSION_MS, "expired before its session timeout"
        assert empty_at <= answered + SESSION_MS + 300, f"expired {empty_at - answered - SESSION_MS} ms late"
        client.writer.close()


async def test_a_request_arriving_after_a_session_ended_finds_the_member_gone_though_the_loop_was_late(tmp_path):
    """The loop is held up across the member's deadline, and a DeleteGroups arrives in that time,
    after the deadline: the broker comes to both in the same iteration, and the expiry goes first,
    as the deadline came first (NON_EMPTY_GROUP otherwise)."""
    async with broker(tmp_path) as b:
        b.node.logs.create_topic(TOPIC, 1)
        client = await connect(b)
        member_id, generation = await static_member(client)
        await commit(client, member_id, generation)
        deadline = b.node.groups.groups[GROUP].members[member_id].heartbeat_deadline
        assert deadline is not None
        admin = await connect(b)
        assert await state(admin) == "Stable"  # the admin connection is accepted and answered once
        delete = admin.frame(42, 2, groups_names=(GROUP,))
        loop = asyncio.get_running_loop()

        def held_up() -> None:
            """The broker's loop, busy past the deadline; the DeleteGroups arrives meanwhile."""
            while now_ms() < deadline + 20:
                time.sleep(0.002)
            admin.writer.write(delete)  # an idle transport sends at once
            time.sleep(0.02)  # the bytes are in the broker's socket before the loop looks again

        loop.call_later(max(0.0, (deadline - 50 - now_ms()) / 1000), held_up)
        answer = await admin.answer(42, 2)
        assert [(r.group_id, r.error_code) for r in answer.results] == [(GROUP, E.none)]
        admin.writer.close()
        client.writer.close()
