"""The crash soak's consumer group: two members of one classic group subscribed to the idempotent
topic, each committing its position synchronously as it consumes, so that the kill lands inside
JoinGroup, SyncGroup, a rebalance's revocation or an OffsetCommit.

After the restart each member must be given partitions again (the group recovers from
__consumer_offsets and rebalances) within ``RECOVER_S``; and each partition's committed offset must
be the highest acknowledged commit or one sent but cut short, never lower: offsets do not go back.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field

import confluent_kafka as ck

from compat.soak_logs import client_logger

GROUP = "soak-members"
RECOVER_S = 30.0


class Moment:
    """An event and when it was set (the restart's ready line)."""

    def __init__(self) -> None:
        self.event, self.at = threading.Event(), 0.0

    def set(self) -> None:
        self.at = time.monotonic()
        self.event.set()

    def is_set(self) -> bool:
        return self.event.is_set()


@dataclass
class GroupMembers:
    """What the members were told, across every cycle."""

    group: str = GROUP
    client_logs: bool = False  # librdkafka's cgrp debug into compat/soak_logs.py's ring
    acked: dict = field(default_factory=dict)  # partition -> highest acknowledged committed offset
    tried: dict = field(default_factory=dict)  # partition -> every offset a commit was sent with
    commits: int = 0
    recover_s: list = field(default_factory=list)  # each member's time from the restart to a commit
    problems: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, bootstrap: str, topic: str, client: dict, halt: threading.Event, restarted: Moment,
            cycle: int) -> None:
        """Consume and commit until ``halt``, but not before the restarted broker has acknowledged a
        commit of the member's positions (a commit needs the member's generation)."""
        logs = {"debug": "cgrp", "log_level": 7, "logger": client_logger(f"rdkafka.{self.group}.c{cycle}")}
        consumer = ck.Consumer({"bootstrap.servers": bootstrap, "group.id": self.group, "enable.auto.commit": False,
                                "auto.offset.reset": "earliest", "session.timeout.ms": 10_000,
                                "heartbeat.interval.ms": 500, **client, **(logs if self.client_logs else {})})  # fmt: skip
        consumer.subscribe([topic])
        recovered = False
        try:
            while not (halt.is_set() and recovered):
                if halt.is_set() and time.monotonic() - restarted.at > RECOVER_S:
                    self.problems.append(f"cycle {cycle}: a member of {self.group} had no commit acknowledged "
                                         f"{RECOVER_S:.0f} s after the restart")  # fmt: skip
                    return
                after_restart = restarted.is_set()
                if self._commit_position(consumer) and after_restart and not recovered:
                    recovered = True
                    self.note_recovered(restarted)
        finally:
            consumer.close()

    def _commit_position(self, consumer) -> bool:
        """Consume a little, then commit the positions of the partitions the member has."""
        consumer.consume(200, 0.2)
        assignment = consumer.assignment()
        offsets = [tp for tp in consumer.position(assignment) if tp.offset >= 0] if assignment else []
        if not offsets:
            return False
        self.note_tried({tp.partition: tp.offset for tp in offsets})
        try:
            consumer.commit(offsets=offsets, asynchronous=False)
        except ck.KafkaException:
            return False  # the kill, or a rebalance (ILLEGAL_GENERATION, REBALANCE_IN_PROGRESS)
        self.note_acked({tp.partition: tp.offset for tp in offsets})
        return True

    def note_tried(self, offsets: dict[int, int]) -> None:
        """A commit of ``offsets`` (partition -> offset) is sent."""
        with self.lock:
            for p, offset in offsets.items():
                self.tried.setdefault(p, set()).add(offset)

    def note_acked(self, offsets: dict[int, int]) -> None:
        with self.lock:
            self.commits += 1
            for p, offset in offsets.items():
                self.acked[p] = max(self.acked.get(p, -1), offset)

    def note_recovered(self, restarted: Moment) -> None:
        """A member's first commit acknowledged by the restarted broker."""
        with self.lock:
            self.recover_s.append(round(time.monotonic() - restarted.at, 2))

    def verify(self, committed: dict[int, int]) -> list[str]:
        """``committed``: each partition's offset the group has now."""
        found, self.problems = self.problems, []
        for p, acked in self.acked.items():
            offset = committed.get(p, -1)
            if offset < acked or (offset > acked and offset not in self.tried.get(p, ())):
                found.append(f"{self.group}-{p}: committed {offset}, highest acknowledged {acked}")
        return found
