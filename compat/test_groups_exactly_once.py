"""Exactly-once read-process-write under SIGKILL, for each Python client library.

A processor subprocess (compat/groups_eos_processor.py) reads an input topic as a read_committed
group member, writes a transformed copy of each record to an output topic and sends the input
offsets to the same transaction. The test SIGKILLs the processor at random points (it restarts it
whenever it is gone) and SIGKILLs the broker subprocess, restarting it on the same port and data
directory. When every input offset is committed, the output read with read_committed holds each
input record exactly once. The kill schedule comes from a random seed printed with any failure.
confluent-kafka runs it twice: with the classic protocol and with the consumer group protocol
(KIP-848, ``group.protocol=consumer``, Kafka 4.1 emulation); so does Java kafka-clients 4.x
(compat/java/EosProcessor.java) with the consumer group protocol.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from compat.groups_support import create_topic, group_types, offset_fetch, produce, read_all, wait_for
from compat.javarun import JVM_OPTIONS

REPO = Path(__file__).resolve().parent.parent
PARTITIONS = 3
PER_PARTITION = 50  # 15 transactions of ten at least, the five kills among them
N = PARTITIONS * PER_PARTITION
KILLS = ["processor", "broker", "processor", "broker", "processor"]
# A processor whose group commits nothing new for this long is replaced, as a supervisor with a
# health check would: a client stack can wedge without its loop stopping (seen once: a kafka-python
# 3.0.12 member: nothing more reached its coordinator after SyncGroup, its session expired after the 6 s
# timeout, and its poll() returned nothing for the next 114 s).
STALL_RESTART_S = 30.0

pytestmark = [pytest.mark.compat(scenario="eos.kill_restart"), pytest.mark.shim_only("kills and restarts the broker")]


class Supervisor:
    """Keeps one processor running: starts another whenever the last one is gone."""

    def __init__(self, client: str, bootstrap: str, log: Path, command: list[str] | None = None) -> None:
        self.args = (command or [sys.executable, "-m", "compat.groups_eos_processor", client]) + [
            bootstrap, "in", "out", f"eos-{client}", f"eos-{client}"]
        self.log = log
        self.proc: subprocess.Popen | None = None
        self.starts = 0
        self.stall_restarts = 0
        self._committed, self._since = -1, time.monotonic()

    def ensure_running(self) -> bool:
        if self.proc is None or self.proc.poll() is not None:
            with open(self.log, "a") as f:
                self.proc = subprocess.Popen(self.args, cwd=REPO, stdout=f, stderr=subprocess.STDOUT)
            self.starts += 1
        return True

    def committed(self, bootstrap: str, group: str) -> int:
        """The group's committed input records; replaces the processor when they stop moving."""
        self.ensure_running()
        done = committed_total(bootstrap, group)
        now = time.monotonic()
        if done != self._committed:
            self._committed, self._since = done, now
        elif done < N and now - self._since > STALL_RESTART_S:
            self.kill()
            self.stall_restarts += 1
            self._since = now
        return done

    def kill(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)


def committed_total(bootstrap: str, group: str) -> int:
    offsets = offset_fetch(bootstrap, group, "in", range(PARTITIONS)) or {}
    return sum(max(o, 0) for o in offsets.values())


# The consumer group protocol (KIP-848) needs Kafka 4 emulation; its sessions are the broker's. Its
# members are dynamic (see compat/groups_eos_processor.py), so a SIGKILLed member's partitions move
# to its successor only when its session expires: each processor kill costs a session timeout, and so
# does each broker kill after which librdkafka's member wedges and is replaced. Five heartbeats a session.
CONSUMER_PROTOCOL_ARGS = ("--kafka-version", "4.1", "--override", "group.consumer.session.timeout.ms=2000",
                          "--override", "group.consumer.heartbeat.interval.ms=400",
                          "--override", "group.consumer.min.session.timeout.ms=2000",
                          "--override", "group.consumer.min.heartbeat.interval.ms=400")


def processor_command(request, client: str) -> list[str] | None:
    """The Java processor (compat/java/EosProcessor.java, kafka-clients 4.x); None: the Python one."""
    if not client.startswith("java"):
        return None
    drivers = request.getfixturevalue("java4")
    # the drivers' JVM options and class-data-sharing archive (compat/javarun.py): each restart starts sooner
    return [drivers.java, *JVM_OPTIONS, *drivers.share_options, "-cp", drivers.shared_classpath or drivers.classpath,
            "EosProcessor", "consumer"]


@pytest.mark.parametrize("client", [pytest.param(c, marks=pytest.mark.compat(client=c.split("-consumer")[0]))
                                    for c in ("kafka-python", "aiokafka", "confluent-kafka",
                                              "confluent-kafka-consumer-protocol", "java-consumer-protocol")])
def test_each_input_record_is_output_exactly_once_despite_sigkills(shim_process, free_port, tmp_path, client,
                                                                    request):
    seed = random.randrange(1 << 30)
    rng = random.Random(seed)
    port, data_dir = free_port(), tmp_path / "broker"
    args = CONSUMER_PROTOCOL_ARGS if client.endswith("consumer-protocol") else ()
    command = processor_command(request, client)
    broker = shim_process(data_dir, port=port, args=args)
    bootstrap = broker.wait_ready()
    create_topic(bootstrap, "in", PARTITIONS)
    create_topic(bootstrap, "out", PARTITIONS)
    inputs = {p: [b"in-%d-%03d" % (p, i) for i in range(PER_PARTITION)] for p in range(PARTITIONS)}
    produce(bootstrap, "in", inputs)

    processor = Supervisor(client, bootstrap, tmp_path / "processor.log", command)
    group = f"eos-{client}"
    thresholds = sorted(rng.sample(range(N // 10, N * 9 // 10), len(KILLS)))
    try:
        for kind, threshold in zip(KILLS, thresholds):
            wait_for(lambda: processor.committed(bootstrap, group) >= threshold, 120,
                     f"{threshold} committed input records (seed {seed})")
            if kind == "processor":
                processor.kill()
            else:
                broker.kill9()
                broker = shim_process(data_dir, port=port, args=args)
                broker.wait_ready()
        wait_for(lambda: processor.committed(bootstrap, group) >= N, 120,
                 f"all {N} input records committed (seed {seed})")
    finally:
        processor.kill()

    expected = sorted(b"out-" + v for values in inputs.values() for v in values)
    aborted = len(read_all(bootstrap, "out", PARTITIONS, read_committed=False)) - N
    print(f"seed {seed}: {processor.starts} processor starts ({processor.stall_restarts} after a stall), "
          f"{aborted} output records in aborted transactions")
    assert sorted(read_all(bootstrap, "out", PARTITIONS)) == expected, f"seed {seed}"
    assert offset_fetch(bootstrap, group, "in", range(PARTITIONS)) == {p: PER_PARTITION for p in range(PARTITIONS)}
    assert processor.starts >= 1 + KILLS.count("processor")
    assert group_types(bootstrap)[group] == ("consumer" if args else "classic")
