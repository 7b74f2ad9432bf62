"""Broker configuration: one frozen dataclass, every field with its unit."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path

from .event_loops import default_choice, resolve as resolve_event_loop
from .limits import check_limits, parse_overrides
from .protocol.kafka_releases import DEFAULT_RELEASE, RELEASES
from .security.listeners import DEFAULT_PROTOCOL_MAP, Endpoint, Listener, resolve


@dataclass(frozen=True, slots=True, kw_only=True)
class BrokerConfig:
    data_dir: Path = Path(".kafka-shim")
    """Directory of the durable log, created if missing."""
    listen: str = "127.0.0.1:9092"
    """host:port to bind; port 0 picks a free port."""
    advertised_host: str | None = None
    """Host name given to clients in Metadata; defaults to the bound host."""
    listeners: str = ""
    """``NAME://host:port,...`` to bind (listeners), e.g. ``PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093``;
    empty: one PLAINTEXT listener on ``listen``."""
    advertised_listeners: str = ""
    """``NAME://host:port,...`` given to clients in Metadata per listener (advertised.listeners); a
    listener left out advertises its bound address."""
    listener_security_protocol_map: str = DEFAULT_PROTOCOL_MAP
    """``NAME:PROTOCOL,...``: PLAINTEXT, SSL, SASL_PLAINTEXT or SASL_SSL (listener.security.protocol.map)."""

    ssl_keystore_type: str = ""
    """PEM, PKCS12, JKS or JCEKS; JKS and PKCS12 each read both formats, as Java does (ssl.keystore.type).
    Empty: Kafka's default, JKS, for a store file; PEM for a PEM file or inline PEM text."""
    ssl_keystore_location: str = ""
    """PEM file with the broker's private key and certificate chain, or a PKCS12, JKS or JCEKS store
    (ssl.keystore.location)."""
    ssl_keystore_password: str = ""
    """Password of a PKCS12, JKS or JCEKS key store (ssl.keystore.password); none for PEM."""
    ssl_keystore_key: str = ""
    """The private key as PEM text, with ssl_keystore_certificate_chain (ssl.keystore.key)."""
    ssl_keystore_certificate_chain: str = ""
    """The certificate chain as PEM text (ssl.keystore.certificate.chain)."""
    ssl_key_password: str = ""
    """Password of an encrypted private key (ssl.key.password); a JKS key may have one of its own."""
    ssl_truststore_type: str = ""
    """PEM, PKCS12, JKS or JCEKS, as ssl_keystore_type, empty likewise (ssl.truststore.type)."""
    ssl_truststore_location: str = ""
    """PEM file or PKCS12, JKS or JCEKS store of the CA certificates client certificates are checked against
    (ssl.truststore.location)."""
    ssl_truststore_password: str = ""
    """Password of a PKCS12, JKS or JCEKS trust store, optional (ssl.truststore.password); none for PEM."""
    ssl_truststore_certificates: str = ""
    """The CA certificates as PEM text (ssl.truststore.certificates)."""
    ssl_client_auth: str = "none"
    """none, requested or required: whether TLS clients present a certificate (ssl.client.auth)."""
    ssl_principal_mapping_rules: str = "DEFAULT"
    """How an SSL client's certificate names it: Kafka's ``RULE:pattern/replacement/[LU]`` rules and
    ``DEFAULT`` (the distinguished name), comma-separated, the first that matches wins
    (ssl.principal.mapping.rules; shim.security.principal)."""

    sasl_enabled_mechanisms: str = "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512"
    """Mechanisms SASL listeners offer (sasl.enabled.mechanisms): PLAIN, SCRAM-SHA-256, SCRAM-SHA-512,
    OAUTHBEARER; GSSAPI is not served."""
    sasl_users: tuple[str, ...] = ()
    """``name:password`` users for PLAIN and both SCRAM mechanisms; SCRAM credentials can also be
    managed with AlterUserScramCredentials (durable in the data directory)."""
    plain_sasl_jaas_config: str = ""
    """A PlainLoginModule JAAS configuration whose ``user_NAME="PASSWORD"`` entries are PLAIN users
    (Kafka's ``listener.name.<listener>.plain.sasl.jaas.config``, here for every SASL listener)."""
    oauthbearer_sasl_jaas_config: str = ""
    """The OAuthBearerLoginModule JAAS configuration whose ``unsecuredValidator*`` options set Kafka's
    default (unsecured) token validation (``listener.name.<listener>.oauthbearer.sasl.jaas.config``)."""
    sasl_oauthbearer_jwks_endpoint_url: str = ""
    """``file:`` URL of a JWKS: OAUTHBEARER tokens must be JWTs signed by one of its keys instead of
    unsecured ones (sasl.oauthbearer.jwks.endpoint.url, with Kafka's OAuthBearerValidatorCallbackHandler)."""
    sasl_oauthbearer_expected_audience: str = ""
    """Comma-separated audiences a JWKS-checked token's ``aud`` must name one of (sasl.oauthbearer.expected.audience)."""
    sasl_oauthbearer_expected_issuer: str = ""
    """The ``iss`` a JWKS-checked token must carry (sasl.oauthbearer.expected.issuer)."""
    sasl_oauthbearer_sub_claim_name: str = "sub"
    sasl_oauthbearer_scope_claim_name: str = "scope"
    sasl_oauthbearer_clock_skew_seconds: int = 30
    """Seconds of clock difference allowed for ``exp`` and ``nbf`` (sasl.oauthbearer.clock.skew.seconds)."""
    connections_max_reauth_ms: int = 0
    """KIP-368: a SASL session lasts this long, then the client must re-authenticate; 0: forever
    (connections.max.reauth.ms)."""
    control_listen: str = ""
    """host:port of the control plane's HTTP/JSON listener (shim.control.http; not a Kafka property);
    empty: none. Port 0 picks a free port."""
    event_loop: str = field(default_factory=default_choice)
    """The event loop the broker runs on (not a Kafka property): ``auto`` (uvloop when installed,
    else asyncio's), ``uvloop`` or ``asyncio``. Honoured where kafka-shim makes the loop
    (``kafka-shim serve``, ``BrokerThread``); ``$KAFKA_SHIM_EVENT_LOOP`` sets the default."""
    authorizer_class_name: str = ""
    """``org.apache.kafka.metadata.authorizer.StandardAuthorizer`` turns ACLs on (authorizer.class.name);
    empty: no authorizer, every client may do everything and the ACL APIs answer SECURITY_DISABLED."""
    super_users: str = ""
    """Principals the authorizer allows everything, separated by ``;``: ``User:admin;User:CN=broker``
    (super.users)."""
    allow_everyone_if_no_acl_found: bool = False
    """With an authorizer: allow an action on a resource no ACL names (allow.everyone.if.no.acl.found)."""

    node_id: int = 0
    """The first broker's node id (node.id); with ``brokers`` > 1 the others follow it."""
    brokers: int = 1
    """Brokers simulated in this process over the one store (shim.cluster): node ids node_id ..
    node_id+brokers-1, each with its own listeners (port+i, or a free port for port 0)."""
    replica_lag_time_max_ms: int = 30_000
    """A slowed follower that has not caught up for this long leaves the ISR (replica.lag.time.max.ms)."""
    cluster_id: str = "kafka-shim-cluster"
    kafka_version: str = DEFAULT_RELEASE
    """The Apache Kafka release to emulate: "3.7", "3.8", "3.9", "4.0" or "4.1". ApiVersions advertises
    that release's API versions (limited to what kafka-shim serves) and features, requests at other
    versions are refused as that release refuses them, and from 4.0 transactions follow transaction
    version 2 (KIP-890 part 2)."""

    auto_create_topics: bool = True
    """Create unknown topics on Metadata when the client allows it (auto.create.topics.enable)."""
    num_partitions: int = 1
    """Partition count of auto-created topics and of CreateTopics with num_partitions=-1."""

    max_request_bytes: int = 100 * 1024 * 1024
    """Largest request frame accepted (socket.request.max.bytes); larger closes the connection."""
    max_connections: int = 2**31 - 1
    """Connections the broker holds at once (max.connections); at the limit it stops accepting until
    one closes, so new clients wait in the listen backlog."""
    max_connections_per_ip: int = 2**31 - 1
    """Connections one client address may hold (max.connections.per.ip); one more is closed right
    after it is accepted."""
    max_connections_per_ip_overrides: str = ""
    """Per-address exceptions, ``host:count,host:count`` (max.connections.per.ip.overrides)."""
    connections_max_idle_ms: int = 600_000
    """Close a connection that has neither completed a request nor been answered for this long
    (connections.max.idle.ms); bytes of an unfinished request do not count as activity."""
    max_message_bytes: int = 1_048_588
    """Largest record batch accepted (max.message.bytes); larger gets MESSAGE_TOO_LARGE."""
    segment_bytes: int = 1024 * 1024 * 1024
    """Roll a new segment when the active one would exceed this size (log.segment.bytes; Kafka's
    default, 1 GiB: a start after kill -9 re-reads only what follows each partition's recovery point).
    From Kafka 4.0 emulation at least 1 MiB (KIP-1030)."""
    index_interval_bytes: int = 4096
    """Bytes of log between two entries of the sparse offset index (index.interval.bytes)."""
    retention_bytes: int = -1
    """Per-partition size limit, -1 for none (retention.bytes)."""
    retention_ms: int = 7 * 24 * 3600 * 1000
    """Delete segments whose newest record is older than this, -1 for never (retention.ms)."""
    retention_check_interval_ms: int = 300_000
    """How often retention runs (log.retention.check.interval.ms)."""

    fsync: str = "never"
    """'always': every write to the log (client batches and the coordinators' records alike) and every
    file beside it is fsynced before the request is answered, so what was acknowledged survives a
    power loss; 'never': the log is left to the OS. Either way every acknowledged batch is written to
    the file before the response, so it survives kill -9 of the broker (README.md, Durability)."""

    transaction_max_timeout_ms: int = 900_000
    """Largest transaction.timeout.ms a producer may ask for (transaction.max.timeout.ms)."""
    transaction_abort_check_interval_ms: int = 10_000
    """How often open transactions are checked against their timeout
    (transaction.abort.timed.out.transaction.cleanup.interval.ms)."""
    transactional_id_expiration_ms: int = 7 * 24 * 3600 * 1000
    """A transactional id in Empty, CompleteCommit or CompleteAbort whose state has not changed for
    this long is expired: a tombstone in ``__transaction_state``, then forgotten
    (transactional.id.expiration.ms)."""
    transaction_remove_expired_check_interval_ms: int = 3_600_000
    """How often transactional ids are checked for expiration
    (transaction.remove.expired.transaction.cleanup.interval.ms)."""
    producer_id_expiration_ms: int = 24 * 3600 * 1000
    """A partition forgets a producer without an open transaction whose last batch is older than this
    (producer.id.expiration.ms; a dynamic broker config)."""
    producer_id_expiration_check_interval_ms: int = 600_000
    """How often partitions look for expired producers (producer.id.expiration.check.interval.ms,
    internal in Kafka)."""

    offsets_retention_minutes: int = 10_080
    """Committed offsets a group no longer needs are expired after this many minutes (KIP-211,
    offsets.retention.minutes; shim.coordinators.group.expiration)."""
    offsets_retention_check_interval_ms: int = 600_000
    """How often the group coordinator looks for expired offsets (offsets.retention.check.interval.ms)."""

    group_initial_rebalance_delay_ms: int = 3_000
    """Delay before the first rebalance of an empty group (group.initial.rebalance.delay.ms); Kafka's
    default, 3000. Tests that start groups often set 0."""
    group_min_session_timeout_ms: int = 6_000
    """Smallest session.timeout.ms a member may ask for; below it JoinGroup answers INVALID_SESSION_TIMEOUT
    (group.min.session.timeout.ms)."""
    group_max_session_timeout_ms: int = 1_800_000
    group_consumer_session_timeout_ms: int = 45_000
    """How long a consumer-protocol member (KIP-848) lives without a heartbeat
    (group.consumer.session.timeout.ms); Kafka's default."""
    group_consumer_heartbeat_interval_ms: int = 5_000
    """How often consumer-protocol members are told to heartbeat (group.consumer.heartbeat.interval.ms)."""
    quota_window_num: int = 11
    """Samples in which client byte rates are measured (quota.window.num)."""
    quota_window_size_seconds: int = 1
    """Length of each sample (quota.window.size.seconds)."""
    offsets_topic_num_partitions: int = 50
    transaction_state_num_partitions: int = 50

    extra: dict = field(default_factory=dict)
    """Kafka broker properties by name (server.properties, --override), validated; see shim.configs.properties."""

    def __post_init__(self) -> None:
        object.__setattr__(self, "data_dir", Path(self.data_dir))
        resolve_event_loop(self.event_loop)  # an unknown name, or uvloop asked for and not installed
        if self.fsync not in ("always", "never"):
            raise ValueError(f"fsync must be 'always' or 'never', not {self.fsync!r}")
        self.host_port()
        check_limits(self.max_connections, self.max_connections_per_ip, self.per_ip_overrides())
        if self.connections_max_idle_ms <= 0:
            raise ValueError("connections.max.idle.ms must be positive")
        if self.kafka_version not in RELEASES:
            raise ValueError(f"kafka_version must be one of {', '.join(RELEASES)}, not {self.kafka_version!r}")
        object.__setattr__(self, "sasl_users", tuple(self.sasl_users))
        from .security import kraft_roles
        kraft_roles.check(kraft_roles.roles_of(self.extra), self.extra, self.node_id, self.listener_endpoints()[0],
                          self.advertised_listeners)
        from .security.credentials import plain_jaas_users
        plain_jaas_users(self.plain_sasl_jaas_config)  # refuse a configuration that is not PLAIN's
        if self.brokers < 1:
            raise ValueError("brokers must be at least 1")
        from .cluster import broker_racks
        broker_racks(self.extra.get("broker.rack"), tuple(range(self.brokers)))  # one rack, or one per broker
        from .security.oauthbearer import validator_from_config
        validator_from_config(self)  # refuse bad validator options and an unreadable JWKS
        if self.connections_max_reauth_ms < 0:
            raise ValueError("connections.max.reauth.ms must not be negative")
        from .security.authorizer import check_authorizer_class, parse_super_users
        check_authorizer_class(self.authorizer_class_name)
        from .security.principal import check_principal_builder
        check_principal_builder(self.extra.get("principal.builder.class"))
        parse_super_users(self.super_users)
        from .coordinators.group.consumer_config import consumer_group_config
        consumer_group_config(self.group_consumer_session_timeout_ms, self.group_consumer_heartbeat_interval_ms,
                              self.extra)  # Kafka refuses bounds that do not hold together
        from .coordinators.share.configs import cold_snapshot_interval_ms, share_settings
        share_settings(self.extra)  # and the share groups' bounds too
        cold_snapshot_interval_ms(self.extra)
        from .configs.streams import streams_settings
        streams_settings(self.extra)  # and the streams groups' (KIP-1071's GROUP configs use them)
        if self.control_listen:
            host, sep, port = self.control_listen.rpartition(":")
            if not sep or not port.isdigit() or int(port) > 65535:
                raise ValueError(f"control listen must be host:port, not {self.control_listen!r}")

    def check_static(self) -> None:
        """What Kafka's KafkaConfig refuses at start-up under the emulated release, beyond what
        ``__post_init__`` checks of every layering (a dynamic value stored under an earlier release
        is applied, not refused). KIP-1030: from 4.0 log.segment.bytes is at least 1 MiB
        (a ConfigException; ConfigError is a ValueError)."""
        from .configs.catalogue import broker_configs

        configs = broker_configs(self.kafka_version)
        configs["log.segment.bytes"].parse(str(self.segment_bytes))
        slots = "max.incremental.fetch.session.cache.slots"  # at least 0
        if slots in self.extra:
            configs[slots].parse(self.extra[slots])

    def listener_endpoints(self) -> tuple[list[Listener], dict[str, Endpoint]]:
        """The listeners to bind and their advertised endpoints by listener name."""
        from .security.kraft_roles import broker_advertised, effective_protocol_map, roles_of

        listeners = self.listeners or f"PLAINTEXT://{self.listen}"
        roles = roles_of(self.extra)
        protocols = effective_protocol_map(self.listener_security_protocol_map,
                                           "listener.security.protocol.map" in self.extra
                                           or self.listener_security_protocol_map != DEFAULT_PROTOCOL_MAP, listeners,
                                           roles)
        return resolve(listeners, protocols, broker_advertised(self.advertised_listeners, listeners, roles))

    def controller_listener_names(self) -> frozenset[str]:
        """The listeners the controller serves (controller.listener.names with process.roles
        including controller; shim.security.kraft_roles)."""
        from .security.kraft_roles import controller_listeners, roles_of

        return controller_listeners(roles_of(self.extra), self.listener_endpoints()[0])

    def per_ip_overrides(self) -> dict[str, int]:
        return parse_overrides(self.max_connections_per_ip_overrides)

    def host_port(self) -> tuple[str, int]:
        host, sep, port = self.listen.rpartition(":")
        if not sep or not port.isdigit():
            raise ValueError(f"listen must be host:port, not {self.listen!r}")
        return host.strip("[]"), int(port)

    def replace(self, **changes) -> "BrokerConfig":
        return dataclasses.replace(self, **changes)
