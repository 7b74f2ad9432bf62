"""Topics and their partition logs under one data directory.

Layout (as Kafka's): ``<data_dir>/<topic>-<partition>/`` per partition; topic names, ids and
configs in ``<data_dir>/__cluster_metadata/topics.json`` (written atomically and durably, see
shim.storage.fs); a clean-shutdown marker ``.kafka_cleanshutdown`` tells the next start whether tails
need CRC recovery. Its removal at start is made durable before anything is written, so a power loss
later never passes a log written since for a cleanly closed one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import re
import uuid
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..configs.topic import validate_overrides
from ..errors import ErrorCode, KafkaError
from . import fs, recovery_point
from .partition_log import LogConfig, PartitionLog
from .group_commit import GroupCommit
from .roll_flush import Flusher

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
CLOSE_THREADS = 8  # Kafka sizes its shutdown pool by num.recovery.threads.per.data.dir; fsync waits dominate here
INTERNAL_TOPICS = frozenset({"__consumer_offsets", "__transaction_state", "__share_group_state"})

@dataclass(slots=True)
class TopicInfo:
    name: str
    topic_id: uuid.UUID
    partitions: int
    configs: dict[str, str] = field(default_factory=dict)

    @property
    def internal(self) -> bool:
        return self.name in INTERNAL_TOPICS


_LOG_FILE = re.compile(r"^(\d{20}\.(log|index|timeindex|txnindex|snapshot)(\.tmp|\.cleaned)?"
                       r"|(log-start-offset|cleaner-offset-checkpoint|cleaner-swap)(\.tmp)?)$")


def _only_log_files(directory: Path) -> bool:
    """Only what a partition directory holds: never remove anything else found in the data directory."""
    return all(_LOG_FILE.match(p.name) for p in directory.iterdir())


async def _to_the_end(change):
    """Await a lifecycle change that runs to its end even if the caller is cancelled (a client that
    goes away): it is never left half applied."""
    task = asyncio.ensure_future(change)
    task.add_done_callback(lambda t: t.cancelled() or t.exception())  # a caller gone: nobody else asks
    return await asyncio.shield(task)


def validate_topic_name(name: str) -> None:
    if name in (".", "..") or not _LEGAL_NAME.match(name or ""):
        raise KafkaError(ErrorCode.invalid_topic_exception, f"illegal topic name {name!r}")


def invalid_topic_name(name: str) -> str | None:
    """Why Kafka refuses ``name`` as a topic name, in its words (Topic.validate), or None."""
    if not name:
        reason = "the empty string is not allowed"
    elif name in (".", ".."):
        reason = f"'{name}' is not allowed"
    elif len(name) > 249:
        reason = f"the length of '{name}' is longer than the max allowed length 249"
    elif not _LEGAL_NAME.match(name):
        reason = f"'{name}' contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
    else:
        return None
    return f"Topic name is invalid: {reason}"


def log_config_for(defaults: LogConfig, configs: dict[str, str]) -> LogConfig:
    """``defaults`` with a topic's overrides applied (no broker properties in between)."""
    from ..configs.catalogue import TOPIC_CONFIGS
    from ..configs.topic import log_config

    return log_config(defaults, {n: TOPIC_CONFIGS[n].parse(v) for n, v in configs.items() if n in TOPIC_CONFIGS})


class LogManager:
    def __init__(self, data_dir: Path, defaults: LogConfig, read_only: bool = False,
                 resolve: Callable[[dict[str, str]], LogConfig] | None = None,
                 internal_configs: dict[str, dict[str, str]] | None = None, release: str = "3.9") -> None:
        self.data_dir = data_dir
        self.release = release  # the emulated Kafka release: which topic configs exist, their validators
        # the configs an internal topic is created with (Kafka: GroupCoordinator.offsetsTopicConfigs,
        # TransactionStateManager.transactionTopicConfigs)
        self.internal_configs = internal_configs if internal_configs is not None else {
            name: {"cleanup.policy": "compact"} for name in INTERNAL_TOPICS}
        self.defaults = defaults
        # a topic's overrides -> the LogConfig its partitions run with (the broker's values in between)
        self.resolve = resolve or (lambda configs: log_config_for(defaults, configs))
        self.read_only = read_only
        self.meta_dir = data_dir / "__cluster_metadata"
        self._saves_deferred = self._save_pending = False  # see one_save
        if not read_only:
            fs.make_dirs(self.meta_dir, sync=True)  # topic metadata is durable whatever the sync policy
        marker = data_dir / CLEAN_SHUTDOWN
        self.clean_start = marker.exists()
        # after an unclean stop each partition's segments are CRC-checked from its recovery point on
        self._recovery_points = {} if read_only else recovery_point.read(data_dir)
        self._points_written = dict(self._recovery_points)  # what the recovery-point file holds
        self.unchecked = recovery_point.Unchecked()  # bytes appended since, in every partition
        self.topics: dict[str, TopicInfo] = {}
        self.topics_version = 0  # moves on with every change of the topics (_save_topics)
        self._by_id: dict[uuid.UUID, TopicInfo] = {}  # topic_by_id's answers so far
        self.logs: dict[tuple[str, int], PartitionLog] = {}
        self.on_topic_deleted: Callable[[str], None] | None = None
        # CreateTopics, DeleteTopics and CreatePartitions do their file work on one thread (in order),
        # one change at a time; _busy: names whose directories are being made or removed
        self._worker = ThreadPoolExecutor(1, thread_name_prefix="topic-lifecycle")
        self._lifecycle = asyncio.Lock()
        self._busy: set[str] = set()
        self._closed = False
        # under fsync "always", rolls write their index files and snapshot on a thread of their own
        self.flusher = Flusher() if defaults.fsync and not read_only else None
        self.group_commit: GroupCommit | None = None  # start_group_commit
        self._load_topics()
        # bytes CRC-checked after the partitions' recovery points (inspect and the start-up log show it)
        self.recovery_scanned = sum(plog.recovery_scanned for plog in self.logs.values())
        self.recovery_segments = sum(plog.recovery_segments for plog in self.logs.values())
        if not self.clean_start and self.logs and not read_only:
            log.info("recovered %d partitions after an unclean stop: %d bytes checked after their recovery points, "
                     "in %d segments", len(self.logs), self.recovery_scanned, self.recovery_segments)
            self._write_recovery_points()  # what was just checked need not be checked again after the next crash
        if not read_only and self.clean_start:
            fs.remove(marker, sync=True)

    # -- topics -----------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, configs: dict[str, str] | None = None,
                     validate_only: bool = False) -> TopicInfo:
        """Create a topic at once, on the calling thread (internal topics, auto-creation: a few
        partitions). CreateTopics uses :meth:`create_topic_async`."""
        info, config = self._new_topic(name, partitions, configs)
        if name in self._busy:  # its directories are being made or removed: Kafka's "creation in progress"
            raise KafkaError(ErrorCode.leader_not_available, f"topic {name!r} is being created or deleted")
        if validate_only:
            return info
        self.topics[name] = info
        for p in range(partitions):
            self._open(info, p, config, clean=True)
        self._save_topics()
        log.info("created topic %s with %d partitions", name, partitions)
        return info

    async def create_topic_async(self, name: str, partitions: int, configs: dict[str, str] | None = None,
                                 validate_only: bool = False) -> TopicInfo:
        return await _to_the_end(self._create(name, partitions, configs, validate_only))

    async def _create(self, name: str, partitions: int, configs: dict[str, str] | None,
                      validate_only: bool) -> TopicInfo:
        """Create a topic without holding up the event loop: its partition directories and files are
        made by the lifecycle thread, then the topic is registered and made durable (topics.json) on
        the loop, and only then is it visible. A kill -9 before that leaves directories of an unknown
        topic, which the next start removes. Lifecycle changes run one at a time, as Kafka's
        controller applies them, so each is validated against the state the previous one left."""
        async with self._lifecycle:
            info, config = self._new_topic(name, partitions, configs)
            if validate_only:
                return info
            self._busy.add(name)
            try:
                plogs = await self._in_worker(self._new_logs, info, range(partitions), config)
            finally:
                self._busy.discard(name)
            self.topics[name] = info
            self._register(plogs)
            self._save_topics()
            log.info("created topic %s with %d partitions", name, partitions)
            return info

    async def create_topics_async(self, wanted: list[tuple[str, int, dict[str, str] | None]],
                                  validate_only: bool = False, pace=None) -> list[TopicInfo | KafkaError]:
        """Create many topics (name, partitions, configs) as one change, in order: per topic its
        TopicInfo or why it was refused. Kafka's controller writes one CreateTopics request's
        topics as one atomic batch; here every partition of every topic is made in one go on the
        lifecycle thread, then the topics become visible, and durable, together (one topics.json
        write: rewriting it for each topic made 10,000 topics take minutes). ``pace``, awaited once per
        topic checked, gives the loop up (shim.apis._pace.Pacer)."""
        return await _to_the_end(self._create_many(wanted, validate_only, pace))

    async def _create_many(self, wanted, validate_only: bool, pace) -> list[TopicInfo | KafkaError]:
        async with self._lifecycle:
            results: list[TopicInfo | KafkaError] = []
            made: list[tuple[TopicInfo, LogConfig]] = []
            resolved: dict = {}  # most topics of one request share their overrides (often none)
            for name, partitions, configs in wanted:
                if pace is not None:
                    await pace()
                try:
                    if name in self._busy:  # named twice
                        raise KafkaError(ErrorCode.invalid_request, f"topic {name!r} appears twice in the request")
                    info, config = self._new_topic(name, partitions, configs, resolved)
                except KafkaError as e:
                    results.append(e)
                    continue
                results.append(info)
                made.append((info, config))
                self._busy.add(name)
            try:
                if made and not validate_only:
                    await self._make_topics(made)
            finally:
                self._busy.difference_update(info.name for info, _ in made)
            return results

    async def _make_topics(self, made: list[tuple[TopicInfo, LogConfig]]) -> None:
        plogs = await self._in_worker(lambda: [plog for info, config in made
                                               for plog in self._new_logs(info, range(info.partitions), config)])
        for info, _ in made:
            self.topics[info.name] = info
        self._register(plogs)
        self._save_topics()
        log.info("created %d topics with %d partitions", len(made), len(plogs))

    def check_new_topic(self, name: str, configs: dict[str, str] | None) -> dict[str, str]:
        """A new topic's name, that it does not exist yet, then its configs, in the order Kafka's
        controller checks them (ReplicationControlManager.createTopics) before its partitions and
        replicas; returns the validated configs."""
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.topic_already_exists, f"Topic '{name}' already exists.")
        return validate_overrides(configs or {}, self.release)

    def _new_topic(self, name: str, partitions: int, configs: dict[str, str] | None,
                   resolved: dict | None = None) -> tuple[TopicInfo, LogConfig]:
        """``resolved``: the LogConfigs (immutable) of the overrides met so far in one change."""
        configs = self.check_new_topic(name, configs)
        if partitions <= 0:
            raise KafkaError(ErrorCode.invalid_partitions, f"number of partitions must be positive, not {partitions}")
        if resolved is None:
            return TopicInfo(name, uuid.uuid4(), partitions, configs), self.resolve(configs)
        key = tuple(sorted(configs.items()))
        if key not in resolved:
            resolved[key] = self.resolve(configs)
        return TopicInfo(name, uuid.uuid4(), partitions, configs), resolved[key]

    def add_partitions(self, name: str, count: int, validate_only: bool = False) -> None:
        """Grow topic ``name`` to ``count`` partitions at once, on the calling thread."""
        info, config = self._growth(name, count)
        if validate_only:
            return
        first, info.partitions = info.partitions, count
        for p in range(first, count):
            self._open(info, p, config, clean=True)
        self._save_topics()
        log.info("topic %s grown from %d to %d partitions", name, first, count)

    async def add_partitions_async(self, name: str, count: int, validate_only: bool = False) -> None:
        await _to_the_end(self._grow(name, count, validate_only))

    async def _grow(self, name: str, count: int, validate_only: bool) -> None:
        """:meth:`add_partitions` with the new partitions' files made by the lifecycle thread; the
        topic's new count is visible, and durable, once they all exist."""
        async with self._lifecycle:
            info, config = self._growth(name, count)
            if validate_only:
                return
            plogs = await self._in_worker(self._new_logs, info, range(info.partitions, count), config)
            first, info.partitions = info.partitions, count
            self._register(plogs)
            self._save_topics()
            log.info("topic %s grown from %d to %d partitions", name, first, count)

    def _growth(self, name: str, count: int) -> tuple[TopicInfo, LogConfig]:
        """Kafka: ReplicationControlManager.createPartitions' checks."""
        info = self.topic(name)
        if count == info.partitions:
            raise KafkaError(ErrorCode.invalid_partitions, f"Topic already has {count} partition(s).")
        if count < info.partitions:
            raise KafkaError(ErrorCode.invalid_partitions, f"The topic {name} currently has {info.partitions} "
                             f"partition(s); {count} would not be an increase.")
        return info, log_config_for(self.defaults, info.configs)

    def ensure_topic(self, name: str, partitions: int) -> TopicInfo:
        """The topic, created first if missing (internal topics are created on first use)."""
        info = self.topics.get(name)
        if info is not None:
            return info
        if name in self._busy and name in INTERNAL_TOPICS:  # FindCoordinator is creating it
            raise KafkaError(ErrorCode.coordinator_not_available, f"{name} is being created")
        return self.create_topic(name, partitions, self.internal_configs.get(name))

    async def create_internal_topic(self, name: str, partitions: int) -> None:
        """Create an internal topic, with its own configs, unless it exists (Kafka: FindCoordinator's
        AutoTopicCreationManager.createTopics); its files are made by the lifecycle thread."""
        if name in self.topics:
            return
        try:
            await self.create_topic_async(name, partitions, self.internal_configs.get(name))
        except KafkaError as e:
            if e.code != ErrorCode.topic_already_exists:  # another request created it meanwhile
                raise

    def delete_topic(self, name: str) -> None:
        self._remove_logs(self._forget(name))

    async def delete_topic_async(self, name: str) -> None:
        await _to_the_end(self._delete(name))

    async def _delete(self, name: str) -> None:
        """Delete a topic: gone from every answer at once, its files removed by the lifecycle thread
        before this returns (so the name can be created again without meeting its old files)."""
        async with self._lifecycle:
            plogs = self._forget(name)
            self._busy.add(name)
            try:
                await self._in_worker(self._remove_logs, plogs)
            finally:
                self._busy.discard(name)

    def _forget(self, name: str) -> list[PartitionLog]:
        info = self.topic(name)
        del self.topics[name]
        self._by_id.pop(info.topic_id, None)
        self._save_topics()  # first: a crash now leaves directories that the next start removes
        if self.on_topic_deleted is not None:
            self.on_topic_deleted(name)
        log.info("deleted topic %s", name)
        return [self.logs.pop((name, p)) for p in range(info.partitions)]

    def _remove_logs(self, plogs: list[PartitionLog]) -> None:
        for plog in plogs:
            plog.delete()
        if self.defaults.fsync:
            fs.disk.fsync_dir(self.data_dir)

    async def _in_worker(self, fn, *args):
        """``fn(*args)`` on the lifecycle thread (here, with a substitute Disk that models the order of
        changes). The log manager closed meanwhile (the broker stopped): the change goes no further."""
        if not fs.disk.parallel:
            return fn(*args)
        result = await asyncio.get_running_loop().run_in_executor(self._worker, fn, *args)
        if self._closed:
            raise KafkaError(ErrorCode.unknown_server_error, "the broker is shutting down")
        return result

    def topic(self, name: str) -> TopicInfo:
        info = self.topics.get(name)
        if info is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"unknown topic {name!r}")
        return info

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        """Found in a dict after the first look (Produce v13 and Fetch name topics by id in every
        request); an entry whose topic is gone, deleted or renamed away, is not trusted."""
        info = self._by_id.get(topic_id)
        if info is not None and self.topics.get(info.name) is info:
            return info
        info = next((t for t in self.topics.values() if t.topic_id == topic_id), None)
        if info is None:
            self._by_id.pop(topic_id, None)
        else:
            self._by_id[topic_id] = info
        return info

    def get(self, topic: str, partition: int) -> PartitionLog:
        plog = self.logs.get((topic, partition))
        if plog is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"unknown partition {topic}-{partition}")
        return plog

    def set_topic_configs(self, name: str, configs: dict[str, str], validate_only: bool = False) -> None:
        """Replace a topic's overrides: validated, persisted, then applied to its partition logs."""
        info = self.topic(name)
        configs = validate_overrides(configs, self.release)
        config = self.resolve(configs)
        if validate_only:
            return
        previous, info.configs = info.configs, configs
        try:
            self._save_topics()
        except OSError:
            info.configs = previous
            raise
        for p in range(info.partitions):
            self.logs[(name, p)].config = config

    def reconfigure(self) -> None:
        """Recompute every partition's LogConfig (the broker's defaults changed)."""
        for info in self.topics.values():
            config = self.resolve(info.configs)
            for p in range(info.partitions):
                self.logs[(info.name, p)].config = config

    def set_on_append(self, callback) -> None:
        self._on_append = callback
        for plog in self.logs.values():
            plog.on_append = callback

    # -- persistence ------------------------------------------------------------------------

    def _open(self, info: TopicInfo, partition: int, config: LogConfig, clean: bool) -> PartitionLog:
        plog = PartitionLog(self.data_dir / f"{info.name}-{partition}", info.name, partition, config, clean=clean,
                            read_only=self.read_only, checkpoint=self._recovery_points.get((info.name, partition)))
        self._register([plog])
        return plog

    def _new_logs(self, info: TopicInfo, partitions: range, config: LogConfig) -> list[PartitionLog]:
        """New, empty partition logs, not yet registered (runs on the lifecycle thread)."""
        return [PartitionLog(self.data_dir / f"{info.name}-{p}", info.name, p, config, clean=True) for p in partitions]

    def _register(self, plogs: list[PartitionLog]) -> None:
        on_append = getattr(self, "_on_append", None)
        for plog in plogs:
            plog.on_append = on_append
            plog.unchecked = self.unchecked
            plog.flusher = self.flusher
            self._join_group_commit(plog)
            self.logs[(plog.topic, plog.partition)] = plog

    def start_group_commit(self) -> None:
        """Under fsync "always", client appends are answered after a shared fsync on the flusher's
        thread rather than fsynced on the loop (shim.storage.group_commit; the broker's choice)."""
        if self.flusher is not None and self.group_commit is None:
            self.group_commit = GroupCommit(self.flusher)
            for plog in self.logs.values():
                self._join_group_commit(plog)

    @property
    def offline(self) -> bool:
        """The data directory failed (a group-commit fsync did): Kafka's LogDirFailureChannel has it
        offline, and ReplicaManager.handleLogDirFailure marks its partitions HostedPartition.Offline."""
        commit = self.group_commit
        return commit is not None and commit.failed is not None

    def check_online(self, topic: str, partition: int) -> None:
        """KAFKA_STORAGE_ERROR for a partition of the offline data directory (Kafka:
        ReplicaManager.getPartitionOrException, checked before the leader and its epoch)."""
        commit = self.group_commit  # self.offline, read in place: every append asks
        if commit is not None and commit.failed is not None:
            raise KafkaError(ErrorCode.kafka_storage_error, f"Partition {topic}-{partition} is in an offline log directory")

    def _join_group_commit(self, plog: PartitionLog) -> None:
        if self.group_commit is not None:
            plog.synced_end = plog.log_end_offset
            plog.group_commit = self.group_commit

    def _load_topics(self) -> None:
        path = self.meta_dir / "topics.json"
        upgraded = False
        # no topics.json yet: no topic, but perhaps directories of one whose creation was cut short
        for t in json.loads(path.read_text())["topics"] if path.exists() else ():
            info = TopicInfo(t["name"], uuid.UUID(t["id"]), t["partitions"], t.get("configs", {}))
            if info.internal and "cleanup.policy" not in info.configs:
                # created by a kafka-shim without compaction: compacted from now on, as Kafka creates it
                info.configs = {**self.internal_configs.get(info.name, {}), **info.configs}
                upgraded = True
            self.topics[info.name] = info
            config = self.resolve(info.configs)
            for p in range(info.partitions):
                self._open(info, p, config, clean=self.clean_start)
        for d in [] if self.read_only else self.data_dir.iterdir():  # partitions of topics deleted before a crash
            topic, _, part = d.name.rpartition("-")
            if d.is_dir() and part.isdigit() and topic and (topic, int(part)) not in self.logs and _only_log_files(d):
                log.info("removing %s: its topic was deleted", d)
                fs.remove_tree(d, sync=self.defaults.fsync)
        if upgraded and not self.read_only:
            self._save_topics()

    @contextlib.contextmanager
    def one_save(self):
        """Topics created inside are written to topics.json once, on the way out (one Metadata
        request auto-creating thousands of topics rewrote the whole file, and synced it, for each).
        A kill -9 before the write leaves directories of unknown topics, which the next start removes."""
        self._saves_deferred = True
        try:
            yield
        finally:
            self._saves_deferred = False
            if self._save_pending:
                self._save_topics()

    def _save_topics(self) -> None:
        self.topics_version += 1  # every change of the topics passes here: caches keyed by it go stale
        self._save_pending = self._saves_deferred
        if self._saves_deferred:
            return
        data = {"topics": [
            {"name": t.name, "id": str(t.topic_id), "partitions": t.partitions, "configs": t.configs}
            for t in self.topics.values()
        ]}
        fs.atomic_write(self.meta_dir / "topics.json", json.dumps(data).encode())

    def enforce_retention(self, now_ms: int, compacted_too: bool = True) -> None:
        """Retention of every log; of the compacted ones only when ``compacted_too`` (a log cleaner runs)."""
        for plog in self.logs.values():
            if compacted_too or not plog.config.compact:
                plog.enforce_retention(now_ms)

    def remove_expired_producers(self, now_ms: int, expiration_ms: int) -> None:
        """Kafka: LogManager's PeriodicProducerExpirationCheck, UnifiedLog.removeExpiredProducers."""
        for plog in self.logs.values():
            plog.producer_state.remove_expired_producers(now_ms, expiration_ms)

    def checkpoint_recovery_points(self) -> None:
        """Write every partition's recovery point (Kafka: LogManager.checkpointLogRecoveryOffsets)."""
        if not self.read_only and not self._closed:
            self._write_recovery_points()

    def _write_recovery_points(self, closing: bool = False) -> None:
        self.unchecked.reset()
        points = {key: plog.recovery_point() for key, plog in self.logs.items()}
        if points != self._points_written:
            # closing: everything is fsynced, and the marker's write syncs the directory
            recovery_point.write(self.data_dir, points, sync=closing or self.defaults.fsync, sync_dir=not closing)
            self._points_written = points

    def close(self) -> None:
        """Clean shutdown (Kafka: LogManager.shutdown): every log flushed and closed by a pool of
        threads (fsync releases the GIL, and the disk takes syncs of many files at once), then the
        marker written once. A log with nothing unflushed costs no sync (PartitionLog.close)."""
        self._closed = True
        self._worker.shutdown(wait=True)  # a creation under way finishes; its topic, unregistered, is removed at start
        logs = list(self.logs.values())
        if self.offline:  # Kafka: handleLogDirFailure closed the failed directory's logs unflushed; no marker
            for plog in logs:
                plog.abandon()
            if self.flusher is not None:
                self.flusher.close()
            return
        workers = min(CLOSE_THREADS, len(logs)) if fs.disk.parallel else 1
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="log-close") as pool:
                for _ in pool.map(PartitionLog.close, logs):  # the first failure is raised here
                    pass
        else:
            for plog in logs:
                plog.close()
        if self.flusher is not None:
            self.flusher.close()  # every log waited for its rolls as it closed
        if not self.read_only:
            self._write_recovery_points(closing=True)  # as Kafka's shutdown does
        fs.atomic_write(self.data_dir / CLEAN_SHUTDOWN, b"")  # every log fsynced: only now may it say so
