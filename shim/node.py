"""Everything a broker is except its sockets: logs, producer ids, coordinators, config."""

from __future__ import annotations

import logging
import socket
import time

from .client_metrics import ClientMetricsManager
from .configs.client_metrics import ClientMetricsConfigs
from .cluster import FOREVER, GROUP, OFFSETS_TOPIC, Cluster, broker_racks, internal_replication_factor
from .config import BrokerConfig
from .configs.broker import BrokerConfigs
from .fetch_sessions import SLOTS_CONFIG, BrokerFetchSessions
from .configs.properties import fields_from_properties, static_properties
from .configs.streams import streams_settings
from .configs.topic import effective, log_config
from .control.plane import Control
from .coordinators.client_quotas import ClientQuotas
from .coordinators.group import GroupCoordinator
from .coordinators.group.consumer_coordinator import consumer_group_config
from .coordinators.group.store import offsets_compression
from .coordinators.group.topic_hash import TopicHashes
from .coordinators.loader import LOADED_TOPICS, CoordinatorLoad
from .coordinators.producer_ids import ProducerIdManager
from .coordinators.quota_enforcement import ByteRateQuota
from .coordinators.share import GroupConfigs, ShareCoordinator, ShareStateStore, share_settings
from .coordinators.share.configs import cold_snapshot_interval_ms
from .coordinators.share.store import SHARE_STATE_TOPIC
from .coordinators.share.store import topic_configs as share_state_topic_configs
from .coordinators.steps import Steps
from .coordinators.txn import TransactionCoordinator
from .notify import ChangeNotifier
from .protocol.kafka_releases import ELR_VERSION, RELEASES, TRANSACTION_VERSION
from .quorum import MetadataQuorum
from .security.acls import AclStore
from .security.authorizer import StandardAuthorizer, parse_super_users
from .security.credentials import CredentialStore
from .security.kraft_roles import roles_of
from .security.oauthbearer import validator_from_config
from .security.session import enabled_mechanisms
from .storage import fs, recovery_point
from .storage.log_manager import LogManager
from .storage.partition_log import LogConfig
from .txn_steps import TxnSteps


log = logging.getLogger(__name__)
# After a coordinator's tick failed, that tick is tried again this much later (the others run as due).
TICK_RETRY_MS = 1000


def now_ms() -> int:
    return int(time.time() * 1000)


class Node:
    def __init__(self, config: BrokerConfig, load_later: bool = False) -> None:
        """``load_later``: the coordinators' state is left to :attr:`loading`'s ``run()`` (the
        server's, after its listeners open), unless the internal topics hold nothing."""
        # ``config`` is the static config; ``self.config`` is it with the dynamic broker configs applied
        config.check_static()
        self.config = config
        self.static_config = config
        self.config_listeners: list = []  # called after a dynamic broker config changed (the server's limits)
        meta_dir = config.data_dir / "__cluster_metadata"
        self._open_logs(config, meta_dir)
        self._init_listeners(config)
        self._init_cluster(config, meta_dir)
        self._init_security(config)
        self._next_retention = 0
        self._last_checkpoint = now_ms()  # of the partitions' recovery points: see _checkpoint_due
        self._checkpoint_interval = int(config.extra.get("log.flush.offset.checkpoint.interval.ms", 60_000))  # read-only
        self.release = RELEASES[config.kafka_version]
        self.quorum = MetadataQuorum(self.logs.meta_dir, self.release, config.node_id)
        if self.elr_enabled:  # a cluster formatted with ELR on (4.1's default) has the controller's records
            self._elr_safety()
        self._init_coordinators(config, meta_dir)
        self.control = Control(self)
        self.txn.probe = self.control.probe
        self.share.initialized.probe = self.control.probe
        self.loading = CoordinatorLoad(self._load_steps())
        if not load_later or not self._anything_to_load():
            self.loading.run_now()
        self._init_quotas(config)
        self.fetch_sessions = BrokerFetchSessions(int(config.extra.get(SLOTS_CONFIG, 1000)))  # read-only in Kafka
        self.fetch_max_bytes = int(config.extra.get("fetch.max.bytes", 57_671_680))  # read-only in Kafka
        self.client_metrics = self._client_metrics(config)

    def _open_logs(self, config: BrokerConfig, meta_dir) -> None:
        """The data and metadata directories, the broker configs over them, and the logs they govern."""
        fs.make_dirs(config.data_dir, sync=True)
        self.log_config = LogConfig(
            segment_bytes=config.segment_bytes,
            index_interval_bytes=config.index_interval_bytes,
            max_message_bytes=config.max_message_bytes,
            retention_bytes=config.retention_bytes,
            retention_ms=config.retention_ms,
            fsync=config.fsync == "always",
        )
        fs.make_dirs(meta_dir, sync=True)
        self.broker_configs = BrokerConfigs(meta_dir, config.node_id, static_properties(config),
                                            config.kafka_version)
        self._apply_dynamic_fields()
        # the sync policy is decided there alone
        self.logs = LogManager(config.data_dir, self.log_config, resolve=self.topic_log_config,
                               internal_configs=self._internal_topic_configs(), release=config.kafka_version)
        # Kafka leaves out the expired producers of the snapshot it loads, and checks every interval after
        self.logs.remove_expired_producers(now_ms(), self.config.producer_id_expiration_ms)
        self._next_producer_expiration = now_ms() + config.producer_id_expiration_check_interval_ms
        self.producer_ids = ProducerIdManager(self.logs.meta_dir / "producer-ids")
        self.changes = ChangeNotifier()
        self.logs.set_on_append(self.changes.changed)
        self.logs.start_group_commit()  # fsync "always": Produce answered after a shared fsync off the loop

    def _init_listeners(self, config: BrokerConfig) -> None:
        """The configured listeners; their advertised addresses are known once :meth:`bound`."""
        self.listeners, self._advertised = config.listener_endpoints()
        # the controller's listeners (shim.apis.controller); the broker's are the others
        self.controller_listeners = config.controller_listener_names()
        first = next(lst for lst in self.listeners if lst.name not in self.controller_listeners)
        self._first_broker_listener = first
        self.host, self.port = config.advertised_host or first.host, first.port
        self.endpoints: dict[str, tuple[str, int]] = {}  # listener name -> advertised (host, port)
        self.bound_ports: dict[str, int] = {}  # listener name -> the port it listens on

    def _init_cluster(self, config: BrokerConfig, meta_dir) -> None:
        """The brokers this process plays and the partition metadata over the logs already on disk."""
        self.node_ids = tuple(range(config.node_id, config.node_id + config.brokers))
        self.racks = broker_racks(config.extra.get("broker.rack"), self.node_ids)  # node id -> broker.rack
        # node id -> listener name -> advertised (host, port); the first node's is ``endpoints``
        self.node_endpoints: dict[int, dict[str, tuple[str, int]]] = {config.node_id: self.endpoints}
        self._node_ports: dict[int, dict[str, int]] = {}  # the other brokers' bound ports by listener name
        self.cluster = Cluster(
            self.node_ids, meta_dir, lambda t, p: self.logs.logs.get((t, p)), lambda: list(self.logs.logs),
            offsets_partitions=config.offsets_topic_num_partitions,
            txn_partitions=config.transaction_state_num_partitions,
            share_partitions=int(config.extra.get("share.coordinator.state.topic.num.partitions", "50")),
            replica_lag_time_max_ms=config.replica_lag_time_max_ms, on_change=self.changes.changed,
            internal_replication_factors=self._internal_replication_factors())
        for (topic, partition), plog in self.logs.logs.items():
            self.cluster.apply(topic, partition, plog)
        self.logs.on_topic_deleted = self._topic_deleted

    def _init_security(self, config: BrokerConfig) -> None:
        """SASL credentials and mechanisms, the OAUTHBEARER validator, ACLs and the authorizer."""
        self.credentials = CredentialStore(self.logs.meta_dir, config.sasl_users,
                                           plain_jaas=config.plain_sasl_jaas_config)
        self.sasl_mechanisms = enabled_mechanisms(config.sasl_enabled_mechanisms)
        self.oauth_validator = validator_from_config(config)
        self.acls = AclStore(self.logs.meta_dir)
        self.authorizer = None  # no authorizer.class.name: everything allowed, the ACL APIs SECURITY_DISABLED
        if config.authorizer_class_name:
            self.authorizer = StandardAuthorizer(self.acls, parse_super_users(config.super_users),
                                                 config.allow_everyone_if_no_acl_found)

    def _init_coordinators(self, config: BrokerConfig, meta_dir) -> None:
        """The transaction, group and share coordinators, their state not loaded yet (:meth:`_load_steps`)."""
        self.txn = TransactionCoordinator(
            self.logs, self.producer_ids, num_partitions=config.transaction_state_num_partitions,
            offsets_partitions=config.offsets_topic_num_partitions, max_timeout_ms=config.transaction_max_timeout_ms,
            abort_check_interval_ms=config.transaction_abort_check_interval_ms,
            transaction_version=self.quorum.level(TRANSACTION_VERSION),
            id_expiration_ms=config.transactional_id_expiration_ms,
            id_expiration_check_interval_ms=config.transaction_remove_expired_check_interval_ms,
        )
        self.txn.check_min_isr = self.cluster.check_min_isr
        self.txn_steps = None
        consumer = consumer_group_config(config.group_consumer_session_timeout_ms,
                                         config.group_consumer_heartbeat_interval_ms, config.extra)
        settings = share_settings(config.extra)
        # GROUP configs (KIP-848 consumer.*, KIP-932 share.*): one store for every group type
        self.group_configs = GroupConfigs(meta_dir / "group-configs.json", settings, consumer,
                                          streams_settings(config.extra), self.release.name)
        # KIP-714 subscriptions: stored and described whether or not a telemetry receiver is configured
        self.client_metrics_configs = ClientMetricsConfigs(meta_dir / "client-metrics-configs.json",
                                                           self.broker_configs.release)
        self.groups = GroupCoordinator(
            self.logs, self.txn, min_session_timeout_ms=config.group_min_session_timeout_ms,
            max_session_timeout_ms=config.group_max_session_timeout_ms,
            initial_rebalance_delay_ms=config.group_initial_rebalance_delay_ms, consumer=consumer,
            group_configs=self.group_configs,
            offsets_retention_ms=config.offsets_retention_minutes * 60_000,
            offsets_retention_check_interval_ms=config.offsets_retention_check_interval_ms,
            offsets_compression=offsets_compression(config.extra),
        )
        # the metadata hash takes partition racks in only when brokers have racks (they are set at start);
        # each topic's part is kept until the topic is deleted or its replicas placed again
        self.topic_hashes = TopicHashes(self._partition_racks if any(self.racks.values()) else None)
        self.cluster.on_replicas_placed = self.topic_hashes.invalidate
        self.groups.consumer.topic_hashes = self.topic_hashes
        self.groups.store.check_min_isr = self.cluster.check_min_isr
        if self.logs.group_commit is not None:  # fsync "always": a failed fsync takes the directory offline
            self.logs.group_commit.on_offline.append(self.groups.on_offline)
        self.cluster.on_elected = self._elected
        self._init_share(config, meta_dir, settings)

    def _elected(self, topic: str, partition: int, at_ms: int) -> None:
        """A broker took the lead of a ``__consumer_offsets`` partition: it coordinates the groups
        hashed there from now (Kafka: GroupCoordinator.onElection)."""
        if topic == OFFSETS_TOPIC and self.loading.done:  # else the load builds them, sessions started then
            self.groups.on_election(lambda g: self.cluster.coordinator_partition(GROUP, g) == (topic, partition), at_ms)

    def _init_share(self, config: BrokerConfig, meta_dir, settings) -> None:
        """KIP-932: the share coordinator over its state topic, its members loaded from the group records."""
        props = {**self.broker_configs.merged(), **config.extra}
        store = ShareStateStore(self.logs, num_partitions=self.cluster.share_partitions, records_per_snapshot=int(props.get(
            "share.coordinator.snapshot.update.records.per.snapshot", "500")), clock=now_ms, legacy_dir=meta_dir,
            cold_snapshot_interval_ms=cold_snapshot_interval_ms(props))
        self.share = ShareCoordinator(settings, self.group_configs, self._partition_count, store,
                                      topic_id=lambda t: getattr(self.logs.topics.get(t), "topic_id", None))
        self.share.on_release = self.changes.changed
        self.share.topic_hashes = self.topic_hashes
        self.share.topics_version = lambda: self.logs.topics_version
        self.share.write_group_records = self.groups.store.append_records

    def _load_steps(self) -> "Steps[None]":
        """The coordinators' state from their logs, in this order: the transaction coordinator's
        (its completion of prepared transactions writes markers the group load replays; fsynced
        on the loop, before its own steps are attached), the groups', then the share-group members
        the group records hold."""
        yield from self.txn.load_steps(now_ms)
        if self.logs.group_commit is not None:  # fsync "always": its own steps fsynced off the loop, in order
            self.txn_steps = TxnSteps(self.txn, self.logs.group_commit, now_ms)
            self.txn.stage_steps, self.txn.on_staged = self.txn_steps.attach, self.txn_steps.staged
        yield from self.groups.load_steps(now_ms)
        self.share.load_members(self.groups.share_records, lambda i: getattr(self.logs.topic_by_id(i), "name", None),
                                now_ms())
        self.groups.share_records = []

    def _anything_to_load(self) -> bool:
        """Whether ``__consumer_offsets`` or ``__transaction_state`` holds a byte."""
        return any(plog.log_end_offset > plog.log_start_offset for (topic, _), plog in self.logs.logs.items()
                   if topic in LOADED_TOPICS)

    def _client_metrics(self, config: BrokerConfig) -> ClientMetricsManager:
        """KIP-714's client instances, answered as a Kafka without a telemetry receiver answers them;
        Kafka 4.0 drops an instance with its connection, 4.1 stopped throttling the lookup that
        follows a refused push (shim.client_metrics)."""
        max_bytes = int({**self.broker_configs.merged(), **config.extra}.get("telemetry.max.bytes", 1 << 20))
        return ClientMetricsManager(max_bytes, drop_on_disconnect=config.kafka_version >= "4.0",
                                    forgiving_get=config.kafka_version >= "4.1",
                                    subscriptions=self.client_metrics_configs)

    def _init_quotas(self, config: BrokerConfig) -> None:
        """Client quotas and the byte-rate windows that enforce them on produce and fetch."""
        self.quotas = ClientQuotas(self.logs.meta_dir / "client-quotas.json")
        window = dict(samples=config.quota_window_num, window_ms=config.quota_window_size_seconds * 1000)
        self.produce_quota = ByteRateQuota(self.quotas, "producer_byte_rate", **window)
        self.fetch_quota = ByteRateQuota(self.quotas, "consumer_byte_rate", **window)

    def bound(self, listener, port: int, node_id: int | None = None) -> None:
        """The server bound ``listener`` on ``port`` (for ``node_id``, else the first node): its
        advertised address is now known."""
        if node_id is not None and node_id != self.config.node_id:
            self.node_endpoints.setdefault(node_id, {})[listener.name] = (self._advertised_host(listener), port)
            ports = self._node_ports.setdefault(node_id, {})
            ports[listener.name] = port
            self.broker_configs.node_static[node_id] = {  # what DescribeConfigs shows for that broker
                "node.id": str(node_id), "broker.id": str(node_id),
                "listeners": ",".join(f"{l.name}://{l.host}:{ports[l.name]}" for l in self.listeners if l.name in ports)}
            return
        self.bound_ports[listener.name] = port
        advertised = self._advertised.get(listener.name)
        self.endpoints[listener.name] = (self._advertised_host(listener),
                                         advertised.port if advertised and advertised.port else port)
        if listener is self._first_broker_listener:
            self.host, self.port = self.endpoints[listener.name]
        self._describe_listeners()

    def _advertised_host(self, listener) -> str:
        """The host ``listener`` is advertised as (an advertised port names the first node's only)."""
        advertised = self._advertised.get(listener.name)
        host = advertised.host if advertised else (self.config.advertised_host or listener.host)
        if host in ("", "0.0.0.0", "::"):  # Kafka advertises the canonical host name of a wildcard listener
            host = socket.getfqdn()
        return host

    def _describe_listeners(self) -> None:
        """DescribeConfigs shows the listeners as bound and advertised (port 0 replaced by the real one)."""
        static = self.broker_configs.static
        bound = [l for l in self.listeners if l.name in self.bound_ports]
        static["listeners"] = ",".join(f"{l.name}://{l.host}:{self.bound_ports[l.name]}" for l in bound)
        if self.static_config.advertised_host or self.static_config.advertised_listeners:
            static["advertised.listeners"] = ",".join(
                f"{l.name}://{self.endpoints[l.name][0]}:{self.endpoints[l.name][1]}" for l in bound)

    @property
    def quorum_listeners(self) -> list[str]:
        """The voter's listeners, the first the quorum's own: the controller listeners in
        controller.listener.names order, else the first listener (kafka-shim without one)."""
        names = self.config.controller_listener_names()
        order = roles_of(self.config.extra).controller_names
        return [n for n in order if n in names] or [self.listeners[0].name]

    def endpoint(self, listener: str | None, node_id: int | None = None) -> tuple[str, int]:
        """The advertised address of the listener a request came in on (Kafka: its listener name),
        of the first node or of ``node_id``."""
        if node_id is None or node_id == self.config.node_id:
            return self.endpoints.get(listener, (self.host, self.port))
        endpoints = self.node_endpoints.get(node_id, {})
        return endpoints.get(listener) or next((e for name, e in endpoints.items()
                                                if name not in self.controller_listeners), ("", -1))

    def _internal_topic_configs(self) -> dict[str, dict[str, str]]:
        """Kafka: offsetsTopicConfigs and transactionTopicConfigs -- compacted, with their own segment size."""
        props = self.broker_configs.merged()
        return {
            "__consumer_offsets": {"cleanup.policy": "compact", "compression.type": "producer",
                                   "segment.bytes": props.get("offsets.topic.segment.bytes", "104857600")},
            # Kafka: TransactionStateManager.transactionTopicConfigs
            "__transaction_state": {"cleanup.policy": "compact", "compression.type": "uncompressed",
                                    "unclean.leader.election.enable": "false",
                                    "min.insync.replicas": self._transaction_log_min_isr(props),
                                    "segment.bytes": props.get("transaction.state.log.segment.bytes", "104857600")},
            SHARE_STATE_TOPIC: share_state_topic_configs(int(props.get("share.coordinator.state.topic.segment.bytes",
                                                                       "104857600"))),
        }

    def _internal_replication_factors(self) -> dict[str, int]:
        props = self.broker_configs.merged()
        return {topic: internal_replication_factor(props.get(name), self.config.brokers)
                for topic, name in (("__consumer_offsets", "offsets.topic.replication.factor"),
                                    ("__transaction_state", "transaction.state.log.replication.factor"))}

    def _transaction_log_min_isr(self, props: dict[str, str]) -> str:
        """``transaction.state.log.min.isr`` as set; unset, Kafka's default (2) lowered to the
        replicas the topic has, as its replication factor is (shim.cluster.internal_replication_factor)."""
        if "transaction.state.log.min.isr" in props:
            return props["transaction.state.log.min.isr"]
        return str(min(2, self._internal_replication_factors()["__transaction_state"]))

    def topic_log_config(self, overrides: dict[str, str]) -> LogConfig:
        """The LogConfig of a topic with these overrides, over the broker's current values."""
        base = self.log_config.__class__(fsync=self.config.fsync == "always")
        return log_config(base, self.topic_effective(overrides))

    def topic_effective(self, overrides: dict[str, str]) -> dict:
        return effective(overrides, self.broker_configs.merged(), self.broker_configs.release)

    def config_with(self, per_broker: dict[str, str], cluster_default: dict[str, str]) -> BrokerConfig:
        """The broker's config with these dynamic layers; ValueError if the result is invalid."""
        return self.static_config.replace(**fields_from_properties({**cluster_default, **per_broker}))

    def _apply_dynamic_fields(self) -> None:
        self.config = self.config_with(self.broker_configs.per_broker, self.broker_configs.cluster_default)

    def broker_configs_changed(self) -> None:
        """A dynamic broker config changed: apply it live (Kafka: DynamicBrokerConfig.updateCurrentConfig)."""
        self._apply_dynamic_fields()
        self.logs.reconfigure()
        for listener in self.config_listeners:
            listener()

    def finalize_features(self, levels: dict[str, int]) -> None:
        """UpdateFeatures: finalize ``levels`` (checked by quorum.check_update); a new
        transaction.version governs the coordinator's own aborts and state records from now on."""
        if levels.get(ELR_VERSION, 0) > 0:  # Kafka: ConfigurationControlManager.updateFeatures, before the feature
            self._elr_safety()
        self.quorum.apply(levels)
        self.txn.finalized_transaction_version(self.quorum.level(TRANSACTION_VERSION))

    @property
    def elr_enabled(self) -> bool:
        """KIP-966's eligible leader replicas are on (eligible.leader.replicas.version >= 1)."""
        return self.quorum.level(ELR_VERSION) > 0

    def _elr_safety(self) -> None:
        if self.broker_configs.elr_safety():
            self._apply_dynamic_fields()
            self.logs.reconfigure()

    def _cleaner_enabled(self) -> bool:
        """log.cleaner.enable, read-only: the value the broker started with."""
        return self.broker_configs.merged().get("log.cleaner.enable", "true").strip().lower() != "false"

    def tick(self, now: int) -> int:
        """Run what is due at ``now``; return the next deadline in ms."""
        if now >= self._next_retention:
            # Kafka: LogManager.cleanupLogs -- without a log cleaner no compacted log is ever trimmed,
            # compact,delete ones included (the cleaner thread is what runs their retention)
            self.logs.enforce_retention(now, compacted_too=self._cleaner_enabled())
            self._next_retention = now + self.config.retention_check_interval_ms
        if now >= self._checkpoint_due():
            self.logs.checkpoint_recovery_points()
            self._last_checkpoint = now
        if now >= self._next_producer_expiration:  # producer.id.expiration.ms is dynamic: read it each time
            self.logs.remove_expired_producers(now, self.config.producer_id_expiration_ms)
            self.cluster.remove_expired_producers(now, self.config.producer_id_expiration_ms)
            self._next_producer_expiration = now + self.config.producer_id_expiration_check_interval_ms
        ticks = (self.txn.tick, self.groups.tick, self.share.tick) if self.loading.done else ()
        return min(self._next_retention, self._next_producer_expiration, self._checkpoint_due(),
                   *(self._contained(tick, now) for tick in (*ticks, self.cluster.tick)))

    @staticmethod
    def _contained(tick, now: int) -> int:
        """One coordinator's tick: a failure is logged and that tick alone tried again
        TICK_RETRY_MS later, so the others still run (Kafka runs each coordinator's timers on
        schedulers of their own, none held by another's failure)."""
        try:
            return tick(now)
        except Exception:
            log.exception("%s failed; retrying in %d ms", getattr(tick, "__qualname__", tick), TICK_RETRY_MS)
            return now + TICK_RETRY_MS

    def _checkpoint_due(self) -> int:
        """When the partitions' recovery points are next written (shim.storage.recovery_point): as
        Kafka, every log.flush.offset.checkpoint.interval.ms, but only once something was written
        since, and at once when enough was that a crash would re-check many bytes."""
        unchecked = self.logs.unchecked.bytes
        if not unchecked:
            return FOREVER
        if unchecked >= recovery_point.CHECKPOINT_AFTER_BYTES:
            return 0
        return self._last_checkpoint + self._checkpoint_interval

    def next_deadline(self) -> int:
        """No deadline is earlier than this (ms); cheap enough to ask after every request."""
        coordinators = ((self.txn.next_deadline(), self.groups.next_deadline(), self.share.next_deadline())
                        if self.loading.done else ())
        return min(self._next_retention, self._next_producer_expiration, self._checkpoint_due(),
                   self.cluster.next_deadline(), *coordinators)

    def watch_deadlines(self, callback) -> None:
        """``callback(deadline_ms)`` whenever handling a request sets a deadline earlier than
        :meth:`next_deadline` said (the coordinators, the cluster, and appends, which make the
        recovery points due: deadlines set outside :meth:`tick`)."""
        self.groups.on_earlier_deadline = callback
        self.cluster.on_earlier_deadline = callback
        self.share.on_earlier_deadline = callback
        # appends make the recovery-point checkpoint due (the first byte, then many)
        self.logs.unchecked.on_alarm = None if callback is None else lambda: callback(self._checkpoint_due())

    def _topic_deleted(self, name: str) -> None:
        self.cluster.delete_topic(name)
        # every group's offsets of it go (Kafka: GroupCoordinator.onPartitionsDeleted; its groups
        # still loading keep them, as a Kafka partition's write fails while it loads)
        if name != OFFSETS_TOPIC and self.loading.done:
            self.groups.expiration.on_topic_deleted(name, now_ms())
        self.share.forget_deleted_topics(now_ms())  # its share state goes with it
        self.share.sessions.forget_topic(name)  # and no share session fetches from its successor

    def _partition_racks(self, topic: str, partition: int) -> list[str]:
        """The ``broker.rack`` of each replica's broker (Kafka: KRaftCoordinatorMetadataImage.partitionRacks)."""
        return [rack for node in self.cluster.state(topic, partition).replicas if (rack := self.racks.get(node))]

    def _partition_count(self, topic: str) -> int:
        info = self.logs.topics.get(topic)
        return info.partitions if info is not None else 0

    def close(self) -> None:
        self.loading.close()
        if self.txn_steps is not None:
            self.txn_steps.close()
        self.logs.close()
