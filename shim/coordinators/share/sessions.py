"""Share sessions (KIP-932): which partitions a member's ShareFetch requests cover.

Kafka: ShareSessionCache and SharePartitionManager.newContext. Every broker has a cache of its own,
so a member has one session with each broker it fetches from (the leaders of its partitions): here
the key is (group id, member id, node id), the node a simulated broker (``--brokers N``). A
ShareFetch with epoch 0 opens a session (replacing any the member had with that broker) and may not carry
acknowledgements; the next request carries the epoch the broker expects (1, 2, ... wrapping to 1),
adding partitions and forgetting others; -1 closes it and may only acknowledge. A missing session
is SHARE_SESSION_NOT_FOUND, a wrong epoch INVALID_SHARE_SESSION_EPOCH.

A session is never dropped for being unused (Kafka 4.1, KAFKA-19159: the member holds acquisition
locks through it, and dropping it would send its records again): it lives until the member closes
it (-1), replaces it (0) or its connection closes. What bounds the cache is its size: at most
``max_sessions`` (``group.share.max.share.sessions``) exist on each broker, and an epoch 0 that
would open one more is SHARE_SESSION_LIMIT_REACHED (the member's own old session, which the
request replaces, is dropped first and does not count).

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
    node_id: int = 0
    partitions: list[TopicPartition] = field(default_factory=list)  # in the order they were added
    connection: object = None  # the client connection that opened it (None: not known)


class ShareSessionCache:
    def __init__(self, max_sessions: int) -> None:
        self.max_sessions = max_sessions
        self.sessions: dict[tuple[str, str, int], ShareSession] = {}  # (group, member, node id) -> session
        self._by_connection: dict[object, set[tuple[str, str, int]]] = {}  # connection -> its sessions' keys
        self._per_node: dict[int, int] = {}  # node id -> how many sessions are open with it

    def open(self, group_id: str, member_id: str, partitions, node_id: int = 0,
             connection: object = None) -> ShareSession:
        """Epoch 0: a new session for the member with broker ``node_id``, replacing its old one there
        (without releasing what the old one acquired: Kafka's newContext removes it, no more)."""
        self.close(group_id, member_id, node_id)
        if self.count(node_id) >= self.max_sessions:
            raise KafkaError(ErrorCode.share_session_limit_reached, "the share session cache is full")
        session = ShareSession(group_id, member_id, next_epoch(INITIAL_EPOCH), node_id=node_id,
                               connection=connection)
        _add(session, partitions)
        self.sessions[(group_id, member_id, node_id)] = session
        self._per_node[node_id] = self._per_node.get(node_id, 0) + 1
        if connection is not None:
            self._by_connection.setdefault(connection, set()).add((group_id, member_id, node_id))
        return session

    def get(self, group_id: str, member_id: str, node_id: int = 0) -> ShareSession:
        session = self.sessions.get((group_id, member_id, node_id))
        if session is None:
            raise KafkaError(ErrorCode.share_session_not_found, "no share session for this member")
        return session

    def advance(self, group_id: str, member_id: str, epoch: int, add, forget, node_id: int = 0) -> ShareSession:
        """A request at the session's epoch: update its partitions and expect the next epoch."""
        session = self.get(group_id, member_id, node_id)
        if epoch != session.epoch:
            raise KafkaError(ErrorCode.invalid_share_session_epoch,
                             f"expected share session epoch {session.epoch}, got {epoch}")
        forgotten = set(forget)
        session.partitions = [tp for tp in session.partitions if tp not in forgotten]
        _add(session, add)
        session.epoch = next_epoch(epoch)
        return session

    def close(self, group_id: str, member_id: str, node_id: int = 0) -> ShareSession | None:
        key = (group_id, member_id, node_id)
        session = self.sessions.pop(key, None)
        if session is not None:
            self._per_node[node_id] -= 1
            if not self._per_node[node_id]:
                del self._per_node[node_id]
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

    def count(self, node_id: int = 0) -> int:
        """The sessions open with broker ``node_id`` (each Kafka broker has a cache of its own)."""
        return self._per_node.get(node_id, 0)


def _add(session: ShareSession, partitions) -> None:
    known = set(session.partitions)
    for tp in partitions:
        if tp not in known:
            session.partitions.append(tp)
            known.add(tp)
