"""Share sessions (KIP-932): which partitions a member's ShareFetch requests cover.

Kafka: ShareSessionCache and SharePartitionManager.newContext. Every broker has a cache of its own,
so a member has one session with each broker it fetches from (the leaders of its partitions): here
the key is (group id, member id, node id), the node a simulated broker (``--brokers N``). A
ShareFetch with epoch 0 opens a session (replacing any the member had with that broker) and may not carry
acknowledgements; the next request carries the epoch the broker expects (1, 2, ... wrapping to 1),
adding partitions and forgetting others; -1 closes it and may only acknowledge. A missing session
is SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH. Sessions unused for the
eviction time are dropped; at most ``max_sessions`` exist (SHARE_SESSION_LIMIT_REACHED).

Each session remembers the client connection that opened it (Kafka 4.1: the cache's
connectionIdToSessionMap, KAFKA-19015): when that connection closes with the session still open,
the member is gone from this broker (the cache's member-leave listener). A session replaced by a
new epoch 0 on another connection is no longer that connection's (KAFKA-19950's stale mark).
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
    connection: object = None  # the client connection that opened it (None: not known)


class ShareSessionCache:
    def __init__(self, max_sessions: int, idle_ms: int) -> None:
        self.max_sessions = max_sessions
        self.idle_ms = idle_ms
        self.sessions: dict[tuple[str, str, int], ShareSession] = {}  # (group, member, node id) -> session
        self._by_connection: dict[object, set[tuple[str, str, int]]] = {}  # connection -> its sessions' keys

    def open(self, group_id: str, member_id: str, partitions, now_ms: int, node_id: int = 0,
             connection: object = None) -> ShareSession:
        """Epoch 0: a new session for the member with broker ``node_id``, replacing its old one there
        (without releasing what the old one acquired: Kafka's newContext removes it, no more)."""
        self.close(group_id, member_id, node_id)
        if len(self.sessions) >= self.max_sessions:
            raise KafkaError(ErrorCode.share_session_limit_reached, "the share session cache is full")
        session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), now_ms, node_id=node_id,
                               connection=connection)
        _add(session, partitions)
        self.sessions[(group_id, member_id, node_id)] = session
        if connection is not None:
            self._by_connection.setdefault(connection, set()).add((group_id, member_id, node_id))
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
        key = (group_id, member_id, node_id)
        session = self.sessions.pop(key, None)
        if session is not None and session.connection is not None:
            keys = self._by_connection.get(session.connection)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_connection[session.connection]
        return session

    def is_open(self, session: ShareSession) -> bool:
        return self.sessions.get((session.group_id, session.member_id, session.node_id)) is session

    def of_connection(self, connection: object) -> list[ShareSession]:
        """The sessions still open that ``connection`` opened."""
        keys = self._by_connection.get(connection, ())
        return [self.sessions[k] for k in sorted(keys)]

    def forget_topic(self, topic: str) -> None:
        """A deleted topic leaves every session: sessions name partitions by topic id, so one made
        again under the same name is a new topic the members add when their assignment says so."""
        for session in self.sessions.values():
            session.partitions = [tp for tp in session.partitions if tp[0] != topic]

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
