"""The crash soak's Java workers: Apache Kafka's own client (kafka-clients 3.9.1, compat/javarun.py)
as an idempotent producer, a transactional producer and a classic consumer-group member, three
threads of one JVM per cycle (compat/java/SoakWorker.java says what each does and prints).

The JVM prints one line per event; a reader thread turns them into the books checked after each
restart: the idempotent topic as librdkafka's (every acknowledged record at its offset, once, in
send order), the transactions and their group offset as ``TxnBook`` does, the member's commits as
``GroupMembers`` does (offsets never go back; a commit acknowledged by the restarted broker within
``RECOVER_S``). The JVM stops when its stdin closes, once the member has recovered or that time is up.
"""

from __future__ import annotations

import collections
import subprocess
import threading
import time
from pathlib import Path

from compat.javarun import JVM_OPTIONS, JavaDrivers
from compat.soak_books import IdemBook, TxnBook, verify_idempotent
from compat.soak_groups import RECOVER_S, GroupMembers, Moment

IDEM_TOPIC, TXN_TOPIC, TXN_GROUP, GROUP = "soak-idem-java", "soak-txn-java", "soak-eos-java", "soak-members-java"
TOPICS = {IDEM_TOPIC: 2, TXN_TOPIC: 2}
BUILD_ROOT = Path(__file__).resolve().parent.parent / ".pytest_cache" / "d" / "kafka-shim-java"  # pytest's


class JavaWorkers:
    def __init__(self, drivers: JavaDrivers) -> None:
        self.drivers = drivers
        self.idem = IdemBook()
        self.txn = TxnBook(TXN_TOPIC, TXN_GROUP)
        self.members = GroupMembers(group=GROUP)
        self.problems: list[str] = []

    @classmethod
    def prepare(cls, build_root: Path = BUILD_ROOT) -> "JavaWorkers":
        return cls(JavaDrivers.prepare(build_root))

    def run(self, bootstrap: str, halt: threading.Event, restarted: Moment, cycle: int, seed: int) -> None:
        d = self.drivers
        cmd = [d.java, *JVM_OPTIONS, *d.share_options, "-cp", d.shared_classpath or d.classpath, "SoakWorker",
               bootstrap, str(cycle), str(seed), str(1_000_000 * cycle)]  # fmt: skip
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        stderr: collections.deque = collections.deque(maxlen=40)
        recovered = threading.Event()
        threads = [threading.Thread(target=lambda: stderr.extend(proc.stderr), daemon=True),
                   threading.Thread(target=self._read, args=(proc, cycle, restarted, recovered), daemon=True)]
        for t in threads:
            t.start()
        halt.wait()
        if not recovered.wait(max(0.0, RECOVER_S - (time.monotonic() - restarted.at))):
            self.problems.append(f"cycle {cycle}: the Java member of {GROUP} had no commit acknowledged "
                                 f"{RECOVER_S:.0f} s after the restart")  # fmt: skip
        proc.stdin.close()
        try:
            status = proc.wait(45)
        except subprocess.TimeoutExpired:
            proc.kill()
            status = proc.wait(10)
            self.problems.append(f"cycle {cycle}: the Java workers did not stop")
        for t in threads:
            t.join(10)
        if status != 0:
            self.problems.append(f"cycle {cycle}: the Java workers exited {status}:\n" + "".join(stderr))

    def _read(self, proc, cycle: int, restarted: Moment, recovered: threading.Event) -> None:
        for line in proc.stdout:
            if len(line.split()) < 2:
                continue  # "done"
            role, kind, *a = line.split()
            n = [int(x) for x in a]
            if role == "idem":
                value = b"j%d-%d" % (cycle, n[-1] if kind == "s" else n[1])
                if kind == "s":
                    self.idem.note_sent(n[0] % 2, value)
                else:
                    self.idem.note_acked(n[0], value, n[2])
            elif role == "txn":
                self._txn(kind, n)
            elif role == "member":
                self._member(kind, n, restarted, recovered)

    def _txn(self, kind: str, n: list[int]) -> None:
        if kind == "b":
            self.txn.begin(n[0], [(i % 2, b"jt-%d-%d" % (n[0], i)) for i in range(n[1])])
        elif kind == "u":
            self.txn.asking(n[0])
        else:
            self.txn.settled(n[0], committed=kind == "c")

    def _member(self, kind: str, n: list[int], restarted: Moment, recovered: threading.Event) -> None:
        if kind == "t":
            self.members.note_tried({n[0]: n[1]})
            return
        self.members.note_acked({n[0]: n[1]})
        if restarted.is_set() and not recovered.is_set():
            recovered.set()
            self.members.note_recovered(restarted)

    def verify(self, bootstrap: str, read, committed) -> list[str]:
        """``read`` and ``committed``: compat/crash_soak.py's readers of a topic and of a group's offsets."""
        found, self.problems = self.problems, []
        verify_idempotent(IDEM_TOPIC, read(bootstrap, IDEM_TOPIC, 2, "read_uncommitted"), self.idem.acked,
                          self.idem.sent, found)  # fmt: skip
        found += self.txn.verify(read(bootstrap, TXN_TOPIC, 2, "read_committed"),
                                 committed(bootstrap, TXN_GROUP, 1).get(0, -1))  # fmt: skip
        found += self.members.verify(committed(bootstrap, GROUP, 3))
        return found
