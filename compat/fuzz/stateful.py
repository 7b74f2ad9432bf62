"""Stateful fuzzing: seeded sequences of well-formed, hostile requests through the group, share and
transaction state machines of an in-process node, checked after every step.

Each step builds one request with kio's schema classes for an API and version the emulated release
serves (every release from 3.7 to 4.1 in turn, share.version finalized), choosing each field from
pools that the answers keep feeding (member ids, member epochs, producer ids and epochs, topic ids)
mixed with hostile values (boundary numbers, empty and 32767-byte strings, unknown topic ids,
duplicated and emptied arrays, null where nullable). Requests run as concurrent tasks, as many
clients would send them. A run fails when a handler raises anything but FrameError (the connection
closed as Kafka closes it), an answer carries UNKNOWN_SERVER_ERROR, a shim logger records an error,
one step holds the loop longer than ``STEP_LIMIT``, or an invariant breaks: a share record's delivery
count past its limit or an acquired record without its member (or a member on one that is not), a
consumer group partition owned or targeted by two members. builder.py draws each request's fields,
vocabulary.py adds classic consumers' embedded protocol, config resources of every type and churned
topics; ``--offline`` runs under fsync "always" on a disk that dies halfway (``DyingDisk``), so the
rest meets an offline directory.
"""

from __future__ import annotations

import asyncio
import dataclasses
import errno
import logging
import os
import random
import tempfile
import time
import traceback
from dataclasses import dataclass, field
from pathlib import Path

from .builder import Builder, Pools
from .vocabulary import CLIENT_IDS, SHARE_GROUPS, TOPICS
from shim.apis.registry import served
from shim.config import BrokerConfig
from shim.event_loops import default_choice, loop_factory
from shim.node import Node
from shim.protocol.framing import FrameError
from shim.protocol.kafka_releases import RELEASES
from shim.storage import fs
from shim.protocol.messages import RequestHeader, decode_response, encode_request

MIN_SEQUENCE_STEPS = 200  # sequence steps run after the sweep even when the time is up
STEP_LIMIT = 2.0  # CPU seconds one loop turn (the new request and whatever else was ready) may take
# The state machines get most of the steps; every other served API some.
STATEFUL = {8: 3, 9: 2, 10: 1, 11: 4, 12: 3, 13: 2, 14: 4, 15: 1, 16: 1, 19: 1, 20: 1, 22: 3, 24: 3, 25: 2,
            26: 3, 28: 3, 35: 1, 37: 1, 42: 1, 44: 2, 47: 1, 65: 2, 66: 2, 68: 8, 69: 2, 76: 6, 77: 1, 78: 6, 79: 5,
            90: 1, 91: 1, 92: 1, 0: 3, 1: 5, 71: 2, 72: 2, 61: 1, 75: 2}
# Where Kafka answers UNKNOWN_SERVER_ERROR itself: CreatePartitions past the controller's records per
# request (k37), quota requests past their entity bound (shim/coordinators/client_quotas.py), a
# JoinGroup of a pending member with an instance id (Kafka's IllegalStateException), an assignor
# that cannot compute a target assignment (GroupMetadataManager.updateTargetAssignment).
KAFKA_UNKNOWN_SERVER_ERROR = {
    37: lambda request, response: True,
    48: lambda request, response: True,
    49: lambda request, response: True,
    11: lambda request, response: request.group_instance_id is not None and request.member_id != "",
    68: lambda request, response: (response.error_message or "").startswith("Failed to compute a new target"),
    33: lambda request, response: _client_metrics_interval(response),
    44: lambda request, response: _client_metrics_interval(response),
}


def _client_metrics_interval(response) -> bool:
    """Kafka before 4.0 parsed a CLIENT_METRICS interval.ms with Integer.parseInt, and the controller
    answered its NumberFormatException UNKNOWN_SERVER_ERROR with no message (shim/configs/client_metrics.py)."""
    return all(r.resource_type == 16 and r.error_message is None for r in response.responses if r.error_code == -1)


@dataclass
class Result:
    seed: int
    steps: int = 0
    answered: int = 0
    closed: int = 0  # FrameError: the connection closed as Kafka closes it
    by_api: dict = field(default_factory=dict)  # "KEYvVERSION" -> requests sent
    served: list = field(default_factory=list)  # every "KEYvVERSION" the release serves
    failures: list = field(default_factory=list)

    def fail(self, message: str) -> None:
        kind = message.split("\n")[0][:200]
        if not any(f.split("\n")[0][:200] == kind for f in self.failures):
            self.failures.append(message)


def check_invariants(node: Node, state_written: set[str]) -> list[str]:
    """``state_written``: share groups whose state a WriteShareGroupState set; it may carry any
    delivery count, and Kafka's SharePartition adopts it and acquires such a record once more."""
    problems = []
    for key, sp in node.share.partitions.items():
        for offset, record in sp.records.items():
            if record.delivery_count > sp.delivery_count_limit and key[0] not in state_written:
                problems.append(f"share {key} offset {offset} delivered {record.delivery_count} times, "
                                f"limit {sp.delivery_count_limit}")  # fmt: skip
            acquired = record.state.name == "ACQUIRED"
            if acquired != (record.member_id is not None):
                problems.append(f"share {key} offset {offset} is {record.state.name} held by {record.member_id!r}")
    for cache in node.fetch_sessions.caches.values():  # each simulated broker's own
        problems += _fetch_session_problems(cache)
    for gid, group in node.groups.consumer.groups.items():
        for what, maps in (("owned", [m.assigned for m in group.members.values()]
                            + [m.pending_revocation for m in group.members.values()]),
                           ("targeted", list(group.target.values()))):
            seen: set = set()
            for assignment in maps:
                for tid, parts in assignment.items():
                    for p in parts:
                        if (tid, p) in seen:
                            problems.append(f"consumer group {gid!r}: partition {tid}-{p} {what} twice")
                        seen.add((tid, p))
    return problems


def _fetch_session_problems(cache) -> list[str]:
    """The session cache's counts agree with its sessions, and its bounds hold."""
    problems = []
    total = 0
    for shard in cache.shards:
        counted = sum(max(s.cached_size, 0) for s in shard.sessions.values())
        if counted != shard.partitions_cached:
            problems.append(f"fetch session shard {shard.number} counts {shard.partitions_cached} "
                            f"partitions cached, its sessions hold {counted}")  # fmt: skip
        if len(shard.sessions) > shard.max_entries:
            problems.append(f"fetch session shard {shard.number} holds {len(shard.sessions)} sessions")
        for session in shard.sessions.values():
            if session.cached_size != len(session.partitions) or len(session.partitions) > cache.max_session_partitions:
                problems.append(f"fetch session {session.id} holds {len(session.partitions)} partitions, "
                                f"counted {session.cached_size}")  # fmt: skip
        total += counted
    if total > cache.max_cached_partitions:
        problems.append(f"the fetch sessions cache {total} partitions")
    return problems


OFFLINE_LOG = "fsync failed: the data directory is offline"  # what a dying disk must log, and only once


class DyingDisk(fs.Disk):
    """The real disk, until ``dying``: then every fsync of a segment file fails (EIO) as a dying
    disk's does, and the data directory goes offline (shim.storage.group_commit)."""

    dying = False

    def __init__(self) -> None:
        self.names: dict[int, str] = {}

    def open(self, path, flags, mode=0o644):
        fd = super().open(path, flags, mode)
        self.names[fd] = str(path)
        return fd

    def close(self, fd):
        self.names.pop(fd, None)
        os.close(fd)

    def fsync(self, fd):
        if self.dying and self.names.get(fd, "").endswith(".log"):
            raise OSError(errno.EIO, "Input/output error")
        os.fsync(fd)


class _ErrorLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self.records: list[str] = []

    def emit(self, record) -> None:
        self.records.append(self.format(record))


def _stack(task: asyncio.Task) -> str:
    """Where a task waits: its chain of awaited coroutines, innermost last."""
    out, coro = [], task.get_coro()
    while coro is not None and len(out) < 20:
        frame = getattr(coro, "cr_frame", None) or getattr(coro, "gi_frame", None)
        if frame is not None:
            out.append(f"{frame.f_code.co_filename}:{frame.f_lineno} {frame.f_code.co_name}")
        coro = getattr(coro, "cr_await", None) or getattr(coro, "gi_yieldfrom", None)
    return " -> ".join(out) + f" awaiting {coro!r}"[:300]


def _unknown_server_error(entity, path="") -> str | None:
    for f in dataclasses.fields(entity):
        value = getattr(entity, f.name)
        if f.name == "error_code" and int(value) == -1:
            return path + f.name
        items = value if isinstance(value, tuple) else (value,)
        for v in items:
            if dataclasses.is_dataclass(v):
                found = _unknown_server_error(v, f"{path}{f.name}.")
                if found:
                    return found
    return None


class StatefulRun:
    def __init__(self, seed: int, data_dir: Path, release: str, disk: DyingDisk | None = None) -> None:
        self.rng = random.Random(seed)
        self.result = Result(seed)
        self.release = release
        self.disk = disk  # fsync "always" on a disk that dies halfway: the data directory goes offline
        self.node = Node(BrokerConfig(data_dir=data_dir, kafka_version=release, group_initial_rebalance_delay_ms=0,
                                      fsync="always" if disk else "never"))
        self.pools = Pools()
        self.builder = Builder(self.rng, self.pools)
        self.apis = [(spec.key, low, high) for spec, low, high in served(RELEASES[release])]
        self.weights = [STATEFUL.get(key, 0.2) for key, _, _ in self.apis]
        self.corr = 0
        self.state_written: set[str] = set()  # share groups a WriteShareGroupState (85) wrote

    def setup(self) -> None:
        for t in TOPICS:
            self.node.logs.create_topic(t, 3)
            self.pools.topic_ids.append(self.node.logs.topics[t].topic_id)
            self.pools.real_topic_ids.append(self.node.logs.topics[t].topic_id)
        if self.release >= "4.1":  # the share APIs are served once share.version is finalized
            self.node.finalize_features({"share.version": 1})
            from shim.configs.admin import Op

            for group in SHARE_GROUPS:  # records produced before a member joins get delivered too
                self.node.share.configs.alter(group, [Op("share.auto.offset.reset", 0, "earliest")], False)

    async def run(self, duration: float) -> Result:
        handler = _ErrorLog()
        logging.getLogger("shim").addHandler(handler)
        pending: set[asyncio.Task] = set()
        deadline = time.monotonic() + duration
        try:
            self.setup()
            self.result.served = [f"{key}v{v}" for key, low, high in self.apis for v in range(low, high + 1)]
            sweep = [(key, v) for key, low, high in self.apis for v in range(low, high + 1)]
            after_sweep = 0  # the sweep always finishes and MIN_SEQUENCE_STEPS follow it, however slow the machine
            while ((sweep or after_sweep < MIN_SEQUENCE_STEPS or time.monotonic() < deadline)
                   and len(self.result.failures) < 10):
                after_sweep += not sweep
                if sweep:  # every served API and version first, then the state machines most
                    key, version = sweep.pop(0)
                else:
                    key, low, high = self.rng.choices(self.apis, self.weights)[0]
                    version = self.rng.randint(low, high)
                pending.add(asyncio.ensure_future(self.step(key, version)))
                started = time.process_time()  # CPU time: a loaded machine does not count, a busy loop does
                await asyncio.sleep(0)
                if time.process_time() - started > STEP_LIMIT:
                    self.result.fail(f"{key} v{version} held the loop {time.process_time() - started:.1f} CPU s")
                pending = {t for t in pending if not t.done()}
                if len(pending) > 50:
                    await asyncio.wait(pending, timeout=0.05)
                for problem in check_invariants(self.node, self.state_written):
                    self.result.fail(f"invariant: {problem}")
                if self.disk is not None and not self.disk.dying and time.monotonic() > deadline - duration / 2:
                    self.disk.dying = True
                for line in handler.records:
                    if self.disk is None or not line.startswith(OFFLINE_LOG):
                        self.result.fail(f"the broker logged an error: {line}")
                handler.records.clear()
        finally:
            for t in pending:
                t.cancel()
            if pending:
                _, stuck = await asyncio.wait(pending, timeout=5)
                for t in list(stuck)[:3]:  # a request a closed connection cannot end
                    self.result.fail(f"a request ignored its cancellation: {_stack(t)}")
            logging.getLogger("shim").removeHandler(handler)
            self.node.close()
        return self.result

    async def step(self, key: int, version: int) -> None:
        from shim.apis.dispatch import dispatch

        self.result.steps += 1
        self.result.by_api[f"{key}v{version}"] = self.result.by_api.get(f"{key}v{version}", 0) + 1
        try:
            request = self.builder.request(key, version)
            self.corr += 1
            frame = encode_request(RequestHeader(key, version, self.corr, self.rng.choice(CLIENT_IDS)), request)
            if key == 85:
                self.state_written.add(request.group_id)
        except Exception:  # noqa: BLE001 - kio refuses a value this version cannot carry: no request
            return
        try:
            raw = await dispatch(self.node, frame)
        except FrameError:
            self.result.closed += 1
            return
        except asyncio.CancelledError:
            raise
        except Exception:  # noqa: BLE001 - the finding
            self.result.fail(f"{key} v{version} raised under {self.release}: "
                             f"{traceback.format_exc(limit=-4)}\nrequest: {request!r}"[:6000])  # fmt: skip
            return
        self.result.answered += 1
        if raw is None:
            return
        try:
            _, response = decode_response(raw, key, version)
        except Exception:  # noqa: BLE001 - kio's reader refuses a -1 timestamp Kafka sends as well
            return
        self.pools.learn(response, request)
        where = _unknown_server_error(response)
        if where and not KAFKA_UNKNOWN_SERVER_ERROR.get(key, lambda q, r: False)(request, response):
            self.result.fail(f"{key} v{version} answered UNKNOWN_SERVER_ERROR at {where} under {self.release}\n"
                             f"request: {request!r}"[:6000])  # fmt: skip


def stateful_fuzz(duration: float, seed: int, releases=("3.7", "3.8", "3.9", "4.0", "4.1"),
                  offline: bool = False) -> list[Result]:
    """``duration`` seconds split over ``releases``, each on a fresh node and its own seed;
    ``offline``: under fsync "always", the data directory fails halfway through each."""
    results = []
    for i, release in enumerate(releases):
        disk = DyingDisk() if offline else None
        previous = fs.use(disk) if disk else None
        try:
            with tempfile.TemporaryDirectory(prefix="kafka-shim-stateful-") as tmp:
                run = StatefulRun(seed * 31 + i, Path(tmp) / "data", release, disk)
                # on the loop a broker gets (uvloop unless KAFKA_SHIM_EVENT_LOOP says otherwise)
                with asyncio.Runner(loop_factory=loop_factory(default_choice())) as runner:
                    results.append(runner.run(run.run(duration / len(releases))))
        finally:
            if previous is not None:
                fs.use(previous)
    return results


if __name__ == "__main__":
    import argparse
    import json

    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=60)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--release", action="append")
    parser.add_argument("--offline", action="store_true", help="the data directory fails halfway (fsync always)")
    args = parser.parse_args()
    out = stateful_fuzz(args.duration, args.seed, tuple(args.release or ("3.7", "3.8", "3.9", "4.0", "4.1")),
                        args.offline)
    print(json.dumps([{k: v for k, v in vars(r).items() if k not in ("by_api", "served")} | {"apis": len(r.by_api)} for r in out],
                     indent=1))
