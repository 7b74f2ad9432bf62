"""Everything a broker is except its sockets: logs, producer ids, coordinators, config."""

from __future__ import annotations

import time

from .config import BrokerConfig
from .coordinators.group import GroupCoordinator
from .coordinators.producer_ids import ProducerIdManager
from .coordinators.txn import TransactionCoordinator
from .notify import ChangeNotifier
from .protocol.kafka_releases import RELEASES
from .storage.log_manager import LogManager
from .storage.partition_log import LogConfig


def now_ms() -> int:
    return int(time.time() * 1000)


class Node:
    def __init__(self, config: BrokerConfig) -> None:
        self.config = config
        config.data_dir.mkdir(parents=True, exist_ok=True)
        self.log_config = LogConfig(
            segment_bytes=config.segment_bytes,
            index_interval_bytes=config.index_interval_bytes,
            max_message_bytes=config.max_message_bytes,
            retention_bytes=config.retention_bytes,
            retention_ms=config.retention_ms,
            fsync=config.fsync == "always",
        )
        self.logs = LogManager(config.data_dir, self.log_config)
        self.producer_ids = ProducerIdManager(self.logs.meta_dir / "producer-ids")
        self.changes = ChangeNotifier()
        self.logs.set_on_append(self.changes.changed)
        self.host = config.advertised_host or config.host_port()[0]
        self.port = config.host_port()[1]
        self._next_retention = 0
        self.release = RELEASES[config.kafka_version]
        self.txn = TransactionCoordinator(
            self.logs, self.producer_ids, num_partitions=config.transaction_state_num_partitions,
            offsets_partitions=config.offsets_topic_num_partitions, max_timeout_ms=config.transaction_max_timeout_ms,
            abort_check_interval_ms=config.transaction_abort_check_interval_ms,
            transaction_version=self.release.transaction_version,
        )
        self.txn.load(now_ms())
        self.groups = GroupCoordinator(
            self.logs, self.txn, min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms, fsync=config.fsync == "always",
        )
        self.groups.load(now_ms())

    def tick(self, now: int) -> int:
        """Run what is due at ``now``; return the next deadline in ms."""
        if now >= self._next_retention:
            self.logs.enforce_retention(now)
            self._next_retention = now + self.config.retention_check_interval_ms
        return min(self._next_retention, self.txn.tick(now), self.groups.tick(now))

    def close(self) -> None:
        self.logs.close()
