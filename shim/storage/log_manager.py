"""Topics and their partition logs under one data directory.

Layout (as Kafka's): ``<data_dir>/<topic>-<partition>/`` per partition; topic names, ids and
configs in ``<data_dir>/__cluster_metadata/topics.json`` (written atomically and durably, see
shim.storage.fs); a clean-shutdown marker ``.kafka_cleanshutdown`` tells the next start whether tails
need CRC recovery. Its removal at start is made durable before anything is written, so a power loss
later never passes a log written since for a cleanly closed one.
"""

from __future__ import annotations

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
from . import fs
from .partition_log import LogConfig, PartitionLog

log = logging.getLogger(__name__)

CLEAN_SHUTDOWN = ".kafka_cleanshutdown"
_LEGAL_NAME = re.compile(r"^[a-zA-Z0-9._-]{1,249}$")
CLOSE_THREADS = 8  # Kafka: num.recovery.threads.per.data.dir, for its shutdown as for its start
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


def validate_topic_name(name: str) -> None:
    if name in (".", "..") or not _LEGAL_NAME.match(name or ""):
        raise KafkaError(ErrorCode.invalid_topic_exception, f"illegal topic name {name!r}")


def log_config_for(defaults: LogConfig, configs: dict[str, str]) -> LogConfig:
    """``defaults`` with a topic's overrides applied (no broker properties in between)."""
    from ..configs.catalogue import TOPIC_CONFIGS
    from ..configs.topic import log_config

    return log_config(defaults, {n: TOPIC_CONFIGS[n].parse(v) for n, v in configs.items() if n in TOPIC_CONFIGS})


class LogManager:
    def __init__(self, data_dir: Path, defaults: LogConfig, read_only: bool = False,
                 resolve: Callable[[dict[str, str]], LogConfig] | None = None,
                 internal_configs: dict[str, dict[str, str]] | None = None) -> None:
        self.data_dir = data_dir
        # the configs an internal topic is created with (Kafka: GroupCoordinator.offsetsTopicConfigs,
        # TransactionStateManager.transactionTopicConfigs)
        self.internal_configs = internal_configs if internal_configs is not None else {
            name: {"cleanup.policy": "compact"} for name in INTERNAL_TOPICS}
        self.defaults = defaults
        # a topic's overrides -> the LogConfig its partitions run with (the broker's values in between)
        self.resolve = resolve or (lambda configs: log_config_for(defaults, configs))
        self.read_only = read_only
        self.meta_dir = data_dir / "__cluster_metadata"
        if not read_only:
            fs.make_dirs(self.meta_dir, sync=True)  # topic metadata is durable whatever the sync policy
        marker = data_dir / CLEAN_SHUTDOWN
        self.clean_start = marker.exists()
        self.topics: dict[str, TopicInfo] = {}
        self.logs: dict[tuple[str, int], PartitionLog] = {}
        self.on_topic_deleted: Callable[[str], None] | None = None
        self._load_topics()
        if not read_only and self.clean_start:
            fs.remove(marker, sync=True)

    # -- topics -----------------------------------------------------------------------------

    def create_topic(self, name: str, partitions: int, configs: dict[str, str] | None = None,
                     validate_only: bool = False) -> TopicInfo:
        validate_topic_name(name)
        if name in self.topics:
            raise KafkaError(ErrorCode.topic_already_exists, f"topic {name!r} already exists")
        if partitions <= 0:
            raise KafkaError(ErrorCode.invalid_partitions, f"number of partitions must be positive, not {partitions}")
        configs = validate_overrides(configs or {})
        config = self.resolve(configs)
        info = TopicInfo(name, uuid.uuid4(), partitions, configs)
        if validate_only:
            return info
        self.topics[name] = info
        for p in range(partitions):
            self._open(info, p, config, clean=True)
        self._save_topics()
        log.info("created topic %s with %d partitions", name, partitions)
        return info

    def add_partitions(self, name: str, count: int, validate_only: bool = False) -> None:
        """Grow topic ``name`` to ``count`` partitions (Kafka: ReplicationControlManager.createPartitions)."""
        info = self.topic(name)
        if count == info.partitions:
            raise KafkaError(ErrorCode.invalid_partitions, f"Topic already has {count} partition(s).")
        if count < info.partitions:
            raise KafkaError(ErrorCode.invalid_partitions, f"The topic {name} currently has {info.partitions} "
                             f"partition(s); {count} would not be an increase.")
        if validate_only:
            return
        config = log_config_for(self.defaults, info.configs)
        first, info.partitions = info.partitions, count
        for p in range(first, count):
            self._open(info, p, config, clean=True)
        self._save_topics()
        log.info("topic %s grown from %d to %d partitions", name, first, count)

    def ensure_topic(self, name: str, partitions: int) -> TopicInfo:
        """The topic, created first if missing (internal topics are created on first use)."""
        return self.topics.get(name) or self.create_topic(name, partitions, self.internal_configs.get(name))

    def delete_topic(self, name: str) -> None:
        info = self.topic(name)
        del self.topics[name]
        self._save_topics()  # first: a crash now leaves directories that the next start removes
        if self.on_topic_deleted is not None:
            self.on_topic_deleted(name)
        for p in range(info.partitions):
            self.logs.pop((name, p)).delete()
        if self.defaults.fsync:
            fs.disk.fsync_dir(self.data_dir)
        log.info("deleted topic %s", name)

    def topic(self, name: str) -> TopicInfo:
        info = self.topics.get(name)
        if info is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"unknown topic {name!r}")
        return info

    def topic_by_id(self, topic_id: uuid.UUID) -> TopicInfo | None:
        return next((t for t in self.topics.values() if t.topic_id == topic_id), None)

    def get(self, topic: str, partition: int) -> PartitionLog:
        plog = self.logs.get((topic, partition))
        if plog is None:
            raise KafkaError(ErrorCode.unknown_topic_or_partition, f"unknown partition {topic}-{partition}")
        return plog

    def set_topic_configs(self, name: str, configs: dict[str, str], validate_only: bool = False) -> None:
        """Replace a topic's overrides: validated, persisted, then applied to its partition logs."""
        info = self.topic(name)
        configs = validate_overrides(configs)
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
                            read_only=self.read_only)
        plog.on_append = getattr(self, "_on_append", None)
        self.logs[(info.name, partition)] = plog
        return plog

    def _load_topics(self) -> None:
        path = self.meta_dir / "topics.json"
        if not path.exists():
            return
        upgraded = False
        for t in json.loads(path.read_text())["topics"]:
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

    def _save_topics(self) -> None:
        data = {"topics": [
            {"name": t.name, "id": str(t.topic_id), "partitions": t.partitions, "configs": t.configs}
            for t in self.topics.values()
        ]}
        fs.atomic_write(self.meta_dir / "topics.json", json.dumps(data).encode())

    def enforce_retention(self, now_ms: int) -> None:
        for plog in self.logs.values():
            plog.enforce_retention(now_ms)

    def close(self) -> None:
        """Clean shutdown (Kafka: LogManager.shutdown): every log flushed and closed by a pool of
        threads (fsync releases the GIL, and the disk takes syncs of many files at once), then the
        marker written once. A log with nothing unflushed costs no sync (PartitionLog.close)."""
        logs = list(self.logs.values())
        workers = min(CLOSE_THREADS, len(logs)) if fs.disk.parallel else 1
        if workers > 1:
            with ThreadPoolExecutor(workers, thread_name_prefix="log-close") as pool:
                for _ in pool.map(PartitionLog.close, logs):  # the first failure is raised here
                    pass
        else:
            for plog in logs:
                plog.close()
        fs.atomic_write(self.data_dir / CLEAN_SHUTDOWN, b"")  # every log fsynced: only now may it say so
