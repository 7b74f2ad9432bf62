"""The crash soak's aiokafka workers, on one event loop of their own thread each cycle:

* a transactional producer (``soak-tx-aio`` every cycle, so each cycle's start fences what the last
  one left open) committing or aborting transactions of 1-8 records ``at-<n>-<i>`` over two
  partitions of ``soak-txn-aio``, each committing one sending the offset ``n`` of the group
  ``soak-eos-aio`` (``send_offsets_to_transaction``); an error that leaves it unable to abort makes a
  new producer, which fences the old;
* a classic member of ``soak-members-aio`` consuming ``soak-idem`` and committing its positions.

Checked after each restart as the Java workers' are (``TxnBook``, ``GroupMembers``).
"""

from __future__ import annotations

import asyncio
import logging
import threading
import sys
import time

from aiokafka import AIOKafkaConsumer, AIOKafkaProducer, TopicPartition
from aiokafka.errors import KafkaError

from compat.soak_books import TxnBook
from compat.soak_groups import RECOVER_S, GroupMembers, Moment
from compat.soak_logs import client_logger

TXN_TOPIC, TXN_GROUP, GROUP, TXN_ID = "soak-txn-aio", "soak-eos-aio", "soak-members-aio", "soak-tx-aio"
TOPICS = {TXN_TOPIC: 2}
CALL_S = 30.0  # each client call's bound: aiokafka retries without one
ERRORS = (KafkaError, asyncio.TimeoutError, OSError)


class AiokafkaWorkers:
    def __init__(self) -> None:
        self.txn = TxnBook(TXN_TOPIC, TXN_GROUP)
        self.members = GroupMembers(group=GROUP)
        self.problems: list[str] = []
        self.client_logs = False  # its group coordinator's log into compat/soak_logs.py's ring

    def run(self, bootstrap: str, halt: threading.Event, restarted: Moment, cycle: int, rng, idem_topic: str) -> None:
        logging.getLogger("aiokafka").setLevel(logging.CRITICAL)  # its reconnect noise after each kill
        if self.client_logs:
            client_logger("aiokafka.consumer.group_coordinator")

        async def main() -> list:
            return await asyncio.gather(self._transactions(bootstrap, halt, cycle, rng),
                                        self._member(bootstrap, halt, restarted, cycle, idem_topic),
                                        return_exceptions=True)  # fmt: skip

        txn, member = asyncio.run(main())
        if isinstance(txn, BaseException):  # a client error, as the other workers' (crash_soak's _guard)
            print(f"cycle {cycle} aiokafka transactions: {txn!r}", file=sys.stderr)
        if isinstance(member, BaseException):  # else its recovery would go unchecked
            self.problems.append(f"cycle {cycle}: the aiokafka member of {GROUP} failed: {member!r}")

    async def _transactions(self, bootstrap: str, halt: threading.Event, cycle: int, rng) -> None:
        n = 1_000_000 * cycle
        while not halt.is_set():
            producer = AIOKafkaProducer(bootstrap_servers=bootstrap, transactional_id=TXN_ID, linger_ms=2,
                                        transaction_timeout_ms=20_000, request_timeout_ms=5000, retry_backoff_ms=50)
            try:
                await asyncio.wait_for(producer.start(), CALL_S)
                while not halt.is_set():
                    await self._one(producer, n, rng.random() < 0.7, rng.randint(1, 8))
                    n += 1
            except (*ERRORS, AssertionError) as exc:  # unusable: the next producer fences it
                # aiokafka 0.14 turns a connection closed under its TxnOffsetCommit into a fatal error,
                # then fails an assertion (FATAL_ERROR -> ABORTING_TRANSACTION) in abort_transaction
                print(f"cycle {cycle} aiokafka txn: {exc!r}", file=sys.stderr)
                n += 1
                await asyncio.sleep(0.1)
            finally:
                await _quietly(producer.stop())

    async def _one(self, producer: AIOKafkaProducer, n: int, commit: bool, k: int) -> None:
        """One transaction; an error before its outcome aborts it, an error aborting it is raised."""
        await producer.begin_transaction()
        self.txn.begin(n, [(i % 2, b"at-%d-%d" % (n, i)) for i in range(k)])
        try:
            for i in range(k):
                await asyncio.wait_for(producer.send(TXN_TOPIC, value=b"at-%d-%d" % (n, i), partition=i % 2), CALL_S)
            self.txn.asking(n)
            if commit:
                await asyncio.wait_for(producer.send_offsets_to_transaction({TopicPartition("soak-idem", 0): n},
                                                                            TXN_GROUP), CALL_S)  # fmt: skip
                await asyncio.wait_for(producer.commit_transaction(), CALL_S)
                self.txn.settled(n, committed=True)
                return
        except ERRORS:
            self.txn.asking(n)
        await asyncio.wait_for(producer.abort_transaction(), CALL_S)
        self.txn.settled(n, committed=False)

    async def _member(self, bootstrap: str, halt: threading.Event, restarted: Moment, cycle: int, topic: str) -> None:
        """Consume and commit until ``halt``, but not before the restarted broker acknowledged a commit."""
        consumer = AIOKafkaConsumer(topic, bootstrap_servers=bootstrap, group_id=GROUP, enable_auto_commit=False,
                                    auto_offset_reset="earliest", session_timeout_ms=10_000,
                                    heartbeat_interval_ms=500, retry_backoff_ms=50)  # fmt: skip
        recovered = False
        try:
            await asyncio.wait_for(consumer.start(), CALL_S)
            while not (halt.is_set() and recovered):
                if halt.is_set() and time.monotonic() - restarted.at > RECOVER_S:
                    self.problems.append(f"cycle {cycle}: the aiokafka member of {GROUP} had no commit "
                                         f"acknowledged {RECOVER_S:.0f} s after the restart")  # fmt: skip
                    return
                after_restart = restarted.is_set()
                if await self._commit_position(consumer) and after_restart and not recovered:
                    recovered = True
                    self.members.note_recovered(restarted)
        except ERRORS as exc:
            self.problems.append(f"cycle {cycle}: the aiokafka member could not start: {exc!r}")
        finally:
            await _quietly(consumer.stop())

    async def _commit_position(self, consumer: AIOKafkaConsumer) -> bool:
        try:
            await consumer.getmany(timeout_ms=200, max_records=200)
            offsets = {tp: await asyncio.wait_for(consumer.position(tp), 5) for tp in consumer.assignment()}
            if not offsets:
                return False
            self.members.note_tried({tp.partition: o for tp, o in offsets.items()})
            await asyncio.wait_for(consumer.commit(offsets), CALL_S)
        except ERRORS:
            await asyncio.sleep(0.05)
            return False  # the kill, or a rebalance
        self.members.note_acked({tp.partition: o for tp, o in offsets.items()})
        return True

    def verify(self, bootstrap: str, read, committed) -> list[str]:
        found, self.problems = self.problems, []
        found += self.txn.verify(read(bootstrap, TXN_TOPIC, 2, "read_committed"),
                                 committed(bootstrap, TXN_GROUP, 1).get(0, -1))  # fmt: skip
        found += self.members.verify(committed(bootstrap, GROUP, 3))
        return found


async def _quietly(stopping) -> None:
    try:
        await asyncio.wait_for(stopping, 15)
    except ERRORS:
        pass
