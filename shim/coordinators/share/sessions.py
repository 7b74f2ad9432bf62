"""Share sessions (KIP-932): which partitions a member's ShareFetch requests cover.

Kafka: ShareSessionCache and SharePartitionManager.newContext. Every broker has a cache of its own,
so a member has one session with each broker it fetches from (the leaders of its partitions): here
the key is (group id, member id, node id), the node a simulated broker (``--brokers N``). A
ShareFetch with epoch 0 opens a session (replacing any the member had with that broker) and may not carry
acknowledgements; the next request carries the epoch the broker expects (1, 2, ... wrapping to 1),
adding partitions and forgetting others; -1 closes it and may only acknowledge. A missing session
is SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH. Sessions unused for the
eviction time are dropped; at most ``max_sessions`` exist (SHARE_SESSION_LIMIT_REACHED).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...errors import ErrorCode, KafkaError

INITIAL_EPOCH, FINAL_EPOCH = 0, -1
MAX_EPOCH = 2**31 - 1

TopicPartition = tuple[str, int]


def next_epoch(epoch: int) -> int:
    return 1 if epoch >= MAX_EPOCH else epoch + 1


@dataclass(slots=True)
class ShareSession:
    group_id: str
    member_id: str
    epoch: int
    last_used: int
    node_id: int = 0
    partitions: list[TopicPartition] = field(default_factory=list)  # in the order they were added


class ShareSessionCache:
    def __init__(self, max_sessions: int, idle_ms: int) -> None:
        self.max_sessions = max_sessions
        self.idle_ms = idle_ms
        self.sessions: dict[tuple[str, str, int], ShareSession] = {}  # (group, member, node id) -> session

    def open(self, group_id: str, member_id: str, partitions, now_ms: int, node_id: int = 0) -> ShareSession:
        """Epoch 0: a new session for the member with broker ``node_id``, replacing its old one there."""
        self.sessions.pop((group_id, member_id, node_id), None)
        if len(self.sessions) >= self.max_sessions:
            raise KafkaError(ErrorCode.share_session_limit_reached, "the share session cache is full")
        session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), now_ms, node_id=node_id)
        _add(session, partitions)
        self.sessions[(group_id, member_id, node_id)] = session
        return session

    def get(self, group_id: str, member_id: str, node_id: int = 0) -> ShareSession:
        session = self.sessions.get((group_id, member_id, node_id))
        if session is None:
            raise KafkaError(ErrorCode.share_session_not_found, "no share session for this member")
        return session

    def advance(self, group_id: str, member_id: str, epoch: int, add, forget, now_ms: int,
                node_id: int = 0) -> ShareSession:
        """A request at the session's epoch: update its partitions and expect the next epoch."""
        session = self.get(group_id, member_id, node_id)
        if epoch != session.epoch:
            raise KafkaError(ErrorCode.invalid_share_session_epoch,
                             f"expected share session epoch {session.epoch}, got {epoch}")
        forgotten = set(forget)
        session.partitions = [tp for tp in session.partitions if tp not in forgotten]
        _add(session, add)
        session.epoch, session.last_used = next_epoch(epoch), now_ms
        return session

    def close(self, group_id: str, member_id: str, node_id: int = 0) -> ShareSession | None:
        return self.sessions.pop((group_id, member_id, node_id), None)

    def forget_topic(self, topic: str) -> None:
        """A deleted topic leaves every session: sessions name partitions by topic id, so one made
        again under the same name is a new topic the members add when their assignment says so."""
        for session in self.sessions.values():
            session.partitions = [tp for tp in session.partitions if tp[0] != topic]

    def of_member(self, group_id: str, member_id: str) -> list[ShareSession]:
        """The member's sessions, one per broker it fetches from."""
        return [s for s in self.sessions.values() if s.group_id == group_id and s.member_id == member_id]

    def idle(self, now_ms: int) -> list[ShareSession]:
        return [s for s in self.sessions.values() if s.last_used + self.idle_ms <= now_ms]

    def next_deadline(self) -> int:
        return min((s.last_used + self.idle_ms for s in self.sessions.values()), default=2**63 - 1)


def _add(session: ShareSession, partitions) -> None:
    known = set(session.partitions)
    for tp in partitions:
        if tp not in known:
            session.partitions.append(tp)
            known.add(tp)
