"""``kafka-shim serve``: run a broker until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from . import heap
from .config import BrokerConfig
from .event_loops import CHOICES, ENV, default_choice, loop_factory, loop_name
from .configs.properties import config_from_properties, parse_override, read_properties_file
from .protocol.kafka_releases import DEFAULT_RELEASE, RELEASES
from .security.listeners import DEFAULT_PROTOCOL_MAP


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kafka-shim", description="A Kafka-compatible broker over a durable local log.")
    sub = p.add_subparsers(dest="command", required=True)
    _serve_arguments(sub.add_parser("serve", help="run the broker"))
    _certs_arguments(sub.add_parser(
        "certs", help="write a throwaway CA and broker/client certificates (PEM) for TLS tests"))
    # kafka-shim ctl has a parser of its own, built from the operations table (shim.control.ctl)
    sub.add_parser("ctl", help="drive a running broker's control plane (fault injection) over HTTP", add_help=False)
    _inspect_arguments(sub.add_parser(
        "inspect", help="offsets, open and aborted transactions of a data directory (read-only)"))
    return p


def _serve_arguments(s: argparse.ArgumentParser) -> None:
    s.add_argument("--config", type=Path, default=None, metavar="server.properties",
                   help="Kafka broker properties file (listeners, log.dirs, num.partitions, ...)")
    s.add_argument("--override", action="append", default=[], metavar="name=value",
                   help="a Kafka broker property, over the file (repeatable), e.g. group.initial.rebalance.delay.ms=0")
    _property_flags(s)
    s.add_argument("--kafka-version", choices=tuple(RELEASES), default=DEFAULT_RELEASE,
                   help=f"Apache Kafka release to emulate in ApiVersions and transactions (default {DEFAULT_RELEASE})")
    _security_arguments(s)
    s.add_argument("--control-listen", default=None, metavar="HOST:PORT",
                   help="serve the control plane (fault injection, README.md) over HTTP/JSON on HOST:PORT; "
                        "port 0 picks a free one")
    s.add_argument("--brokers", type=int, default=1, metavar="N",
                   help="simulate N brokers in this process over one store (node ids from node.id, ports port+i; "
                        "README.md, A simulated cluster)")
    s.add_argument("--event-loop", choices=CHOICES, default=None,
                   help="the event loop to run on: auto (uvloop when installed, else asyncio's), uvloop or asyncio "
                        f"(default ${ENV}, else auto)")
    s.add_argument("--log-level", default="INFO")


def _property_flags(s: argparse.ArgumentParser) -> None:
    """Flags that are aliases of Kafka properties (ALIASES) and win over --config and --override."""
    s.add_argument("--listen", default=None, help="host:port to bind (listeners; default 127.0.0.1:9092; port 0 = any)")
    s.add_argument("--data-dir", default=None, type=Path, help="log directory (log.dirs; default ./.kafka-shim)")
    s.add_argument("--advertised-host", default=None, help="host name given to clients (advertised.listeners)")
    s.add_argument("--num-partitions", type=int, default=None, help="partitions of auto-created topics (num.partitions)")
    s.add_argument("--no-auto-create-topics", action="store_true", help="auto.create.topics.enable=false")
    s.add_argument("--fsync", choices=("never", "always"), default=None,
                   help="'always' fsyncs before acknowledging (log.flush.interval.messages=1; default 'never')")
    s.add_argument("--segment-bytes", type=int, default=None, help="log.segment.bytes: segment roll size (default Kafka's, 1 GiB; "
                        "at least 1 MiB under --kafka-version 4.x)")
    s.add_argument("--max-message-bytes", type=int, default=None, help="message.max.bytes: largest record batch (default 1048588)")
    s.add_argument("--max-request-bytes", type=int, default=None, help="socket.request.max.bytes: largest request frame; larger closes the connection")
    s.add_argument("--retention-ms", type=int, default=None, help="log.retention.ms: delete segments older than this (default 7 days)")
    s.add_argument("--retention-bytes", type=int, default=None, help="log.retention.bytes: per-partition size limit (default -1, none)")
    s.add_argument("--transaction-abort-check-interval-ms", type=int, default=None,
                   help="how often open transactions are checked against their timeout "
                        "(transaction.abort.timed.out.transaction.cleanup.interval.ms; default 10000)")
    s.add_argument("--max-connections", type=int, default=None,
                   help="max.connections: connections held at once; at the limit new ones wait to be accepted")
    s.add_argument("--max-connections-per-ip", type=int, default=None,
                   help="max.connections.per.ip: connections per client address; over it, closed on accept")
    s.add_argument("--max-connections-per-ip-overrides", default=None, metavar="HOST:N,...",
                   help="max.connections.per.ip.overrides: per-address limits, e.g. 10.0.0.5:500,localhost:50")
    s.add_argument("--connections-max-idle-ms", type=int, default=None,
                   help="connections.max.idle.ms: close connections idle this long (default 600000)")
    s.add_argument("--group-min-session-timeout-ms", type=int, default=None,
                   help="group.min.session.timeout.ms: smallest session.timeout.ms a group member may ask for; "
                        "JoinGroup below it gets INVALID_SESSION_TIMEOUT (default 6000)")


def _certs_arguments(c: argparse.ArgumentParser) -> None:
    c.add_argument("--out", required=True, type=Path, help="directory for ca.pem, broker.pem, client-*.pem")
    c.add_argument("--host", action="append", default=None,
                   help="a name or address of the broker for its certificate (repeatable; default localhost, "
                        "127.0.0.1, ::1)")
    c.add_argument("--client-cn", default="client", help="common name of the client certificate (default client)")


def _inspect_arguments(i: argparse.ArgumentParser) -> None:
    i.add_argument("--data-dir", default="./.kafka-shim", type=Path)
    i.add_argument("--json", action="store_true", help="print JSON instead of a table")
    i.add_argument("--internal", action="store_true", help="include __transaction_state and __consumer_offsets")


def _security_arguments(s: argparse.ArgumentParser) -> None:
    g = s.add_argument_group("listeners, TLS and SASL (Kafka's names; README.md, Security)")
    g.add_argument("--listeners", default=None, metavar="NAME://HOST:PORT,...",
                   help="listeners to bind, e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093 "
                        "(default: PLAINTEXT on --listen)")
    g.add_argument("--advertised-listeners", default=None, metavar="NAME://HOST:PORT,...",
                   help="addresses given to clients per listener (default: the bound ones)")
    g.add_argument("--listener-security-protocol-map", default=None, metavar="NAME:PROTOCOL,...",
                   help=f"security protocol of each listener name (default {DEFAULT_PROTOCOL_MAP})")
    g.add_argument("--ssl-keystore-location", default=None,
                   help="PEM file with the broker's key and certificate chain, or a PKCS12, JKS or JCEKS store")
    g.add_argument("--ssl-keystore-type", default=None,
                   help="PEM, PKCS12, JKS or JCEKS; default: PEM for PEM text, else JKS")
    g.add_argument("--ssl-keystore-password", default=None, help="password of a PKCS12, JKS or JCEKS key store")
    g.add_argument("--ssl-key-password", default=None,
                   help="password of an encrypted key in the keystore (a JKS key's own password)")
    g.add_argument("--ssl-truststore-location", default=None,
                   help="PEM file or PKCS12, JKS or JCEKS store of CA certificates for client certificates")
    g.add_argument("--ssl-truststore-type", default=None,
                   help="PEM, PKCS12, JKS or JCEKS; default: PEM for PEM text, else JKS")
    g.add_argument("--ssl-truststore-password", default=None,
                   help="password of a PKCS12, JKS or JCEKS trust store (optional)")
    g.add_argument("--ssl-principal-mapping-rules", default=None, metavar="RULES",
                   help="Kafka's RULE:pattern/replacement/[LU],...,DEFAULT for SSL client certificates")
    g.add_argument("--ssl-client-auth", choices=("none", "requested", "required"), default=None)
    g.add_argument("--sasl-enabled-mechanisms", default=None,
                   help="default PLAIN,SCRAM-SHA-256,SCRAM-SHA-512; OAUTHBEARER too when named")
    g.add_argument("--sasl-user", action="append", default=[], metavar="NAME:PASSWORD",
                   help="a user for PLAIN and SCRAM (repeatable)")
    g.add_argument("--plain-sasl-jaas-config", default=None, metavar="JAAS",
                   help='PLAIN users as Kafka\'s listener.name.<l>.plain.sasl.jaas.config gives them: '
                        '\'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="pw";\'')
    g.add_argument("--oauthbearer-sasl-jaas-config", default=None, metavar="JAAS",
                   help="OAUTHBEARER's unsecured-token validation options as Kafka's "
                        "listener.name.<l>.oauthbearer.sasl.jaas.config gives them (unsecuredValidatorRequiredScope=...)")
    g.add_argument("--sasl-oauthbearer-jwks-endpoint-url", default=None, metavar="file:///PATH",
                   help="sasl.oauthbearer.jwks.endpoint.url: OAUTHBEARER tokens must be JWTs signed by a key of this JWKS file")
    g.add_argument("--connections-max-reauth-ms", type=int, default=None,
                   help="KIP-368 session lifetime of SASL connections; 0: no re-authentication (default)")


# flag -> (Kafka property, how the flag's value reads as that property's value)
ALIASES = {
    "listen": ("listeners", lambda v: f"PLAINTEXT://{v}"),
    "data_dir": ("log.dirs", str),
    "advertised_host": ("advertised.listeners", None),
    "num_partitions": ("num.partitions", str),
    "no_auto_create_topics": ("auto.create.topics.enable", lambda v: "false" if v else None),
    "fsync": ("log.flush.interval.messages", lambda v: "1" if v == "always" else str((1 << 63) - 1)),
    "segment_bytes": ("log.segment.bytes", str),
    "max_message_bytes": ("message.max.bytes", str),
    "max_request_bytes": ("socket.request.max.bytes", str),
    "retention_ms": ("log.retention.ms", str),
    "retention_bytes": ("log.retention.bytes", str),
    "transaction_abort_check_interval_ms": ("transaction.abort.timed.out.transaction.cleanup.interval.ms", str),
    "max_connections": ("max.connections", str),
    "max_connections_per_ip": ("max.connections.per.ip", str),
    "max_connections_per_ip_overrides": ("max.connections.per.ip.overrides", str),
    "connections_max_idle_ms": ("connections.max.idle.ms", str),
    "group_min_session_timeout_ms": ("group.min.session.timeout.ms", str),
    # listeners, TLS and SASL (after --listen: --listeners wins)
    "listeners": ("listeners", str),
    "advertised_listeners": ("advertised.listeners", str),
    "listener_security_protocol_map": ("listener.security.protocol.map", str),
    "ssl_keystore_location": ("ssl.keystore.location", str),
    "ssl_keystore_type": ("ssl.keystore.type", str),
    "ssl_keystore_password": ("ssl.keystore.password", str),
    "ssl_truststore_password": ("ssl.truststore.password", str),
    "ssl_principal_mapping_rules": ("ssl.principal.mapping.rules", str),
    "ssl_key_password": ("ssl.key.password", str),
    "ssl_truststore_location": ("ssl.truststore.location", str),
    "ssl_truststore_type": ("ssl.truststore.type", str),
    "ssl_client_auth": ("ssl.client.auth", str),
    "sasl_enabled_mechanisms": ("sasl.enabled.mechanisms", str),
    "connections_max_reauth_ms": ("connections.max.reauth.ms", str),
    "sasl_oauthbearer_jwks_endpoint_url": ("sasl.oauthbearer.jwks.endpoint.url", str),
}
# event_loop="auto" here: $KAFKA_SHIM_EVENT_LOOP is read in config_from_args, where a bad value is a usage error
DEFAULTS = BrokerConfig(listen="127.0.0.1:9092", data_dir=Path("./.kafka-shim"), event_loop="auto")


def properties_from_args(args: argparse.Namespace) -> dict[str, str]:
    props = read_properties_file(args.config) if args.config else {}
    props.update(parse_override(o) for o in args.override)
    for flag, (prop, render) in ALIASES.items():
        value = getattr(args, flag)
        if value is None or value is False:
            continue
        if flag == "advertised_host":  # the port is the bound one, filled in when the broker listens
            continue
        props[prop] = render(value)
    return props


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    config = config_from_properties(properties_from_args(args), DEFAULTS, args.kafka_version).replace(
        kafka_version=args.kafka_version)
    if args.sasl_user:  # users and JAAS text are not broker properties of their own (Kafka keeps them per listener)
        config = config.replace(sasl_users=tuple(args.sasl_user))
    if args.plain_sasl_jaas_config:
        config = config.replace(plain_sasl_jaas_config=args.plain_sasl_jaas_config)
    if args.control_listen:
        config = config.replace(control_listen=args.control_listen)
    if args.oauthbearer_sasl_jaas_config:
        config = config.replace(oauthbearer_sasl_jaas_config=args.oauthbearer_sasl_jaas_config)
    config = config.replace(event_loop=getattr(args, "event_loop", None) or default_choice())  # not a Kafka property
    if getattr(args, "brokers", 1) != 1:  # not a Kafka property: a cluster is a process per broker there
        config = config.replace(brokers=args.brokers)
    return config.replace(advertised_host=args.advertised_host) if args.advertised_host else config


async def serve(config: BrokerConfig) -> None:
    from .broker import Broker

    broker = Broker(config)
    await broker.start()
    # What start-up built (modules, kio's schema classes, the partitions' logs, the ACLs) lives as
    # long as the process: its garbage freed, then frozen out of the collector's reach, a collection
    # of the oldest generation walks only what requests allocated since, not some 200,000 start-up
    # objects (a 30-90 ms stall of the loop); state bulk-loaded later is frozen by shim.heap's policy.
    heap.install()
    heap.settle()
    control = f" control={broker.control_url}" if broker.control_url else ""
    print(f"kafka-shim ready: bootstrap.servers={broker.bootstrap_servers} data-dir={config.data_dir}{control}",
          flush=True)
    if config.listeners:
        listeners = ",".join(f"{name}://{host}:{port}" for name, (host, port) in broker.node.endpoints.items())
        print(f"kafka-shim listeners: {listeners}", flush=True)
    for node_id in broker.node.node_ids[1:]:
        listeners = ",".join(f"{name}://{host}:{port}" for name, (host, port) in broker.node.node_endpoints[node_id].items())
        print(f"kafka-shim node {node_id}: {listeners}", flush=True)
    print(f"kafka-shim event loop: {loop_name(asyncio.get_running_loop())}", flush=True)
    from kafka_codecs import native
    from kafka_codecs.records import NATIVE_WALK

    if not NATIVE_WALK:
        print("kafka-shim: kafka_codecs._walk was not built (no C compiler at install time?) or was built from an "
              "older _walk.c (install again); produced records are validated in Python instead, correct but about "
              "3 us a record slower", file=sys.stderr, flush=True)
    elif native.produce_request is None:
        print("kafka-shim: kafka_codecs._walk was built from an older _walk.c (install again); Produce requests are "
              "read and their batch headers checked in Python instead, correct but about 5 us a request slower",
              file=sys.stderr, flush=True)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await broker.stop()
    logging.getLogger("shim").info("stopped cleanly")


def _inspect(args: argparse.Namespace) -> int:
    import time

    from .inspect import inspect_data_dir, render, to_json

    if not (args.data_dir / "__cluster_metadata" / "topics.json").exists():
        print(f"kafka-shim: {args.data_dir} is not a kafka-shim data directory", file=sys.stderr)
        return 2
    report = inspect_data_dir(args.data_dir, int(time.time() * 1000), args.internal)
    print(to_json(report) if args.json else render(report))
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["ctl"]:
        from .control.ctl import main as ctl

        return ctl(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == "inspect":
        return _inspect(args)
    if args.command == "certs":
        from .security.certs import make_certs

        paths = make_certs(args.out, tuple(args.host) if args.host else ("localhost", "127.0.0.1", "::1"),
                           args.client_cn)
        print("\n".join(str(p) for p in paths.values()))
        return 0
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = config_from_args(args)
    except ValueError as e:
        print(f"kafka-shim: {e}", file=sys.stderr)
        return 2
    try:
        with asyncio.Runner(loop_factory=loop_factory(config.event_loop)) as runner:
            runner.run(serve(config))
    except (ValueError, OSError) as e:  # TLS files missing or unreadable (ssl.SSLError is an OSError), ports in use
        print(f"kafka-shim: {e}", file=sys.stderr)
        return 2
    return 0
