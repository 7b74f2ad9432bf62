"""``kafka-shim serve``: run a broker until SIGINT/SIGTERM."""

from __future__ import annotations

import argparse
import asyncio
import logging
import signal
import sys
from pathlib import Path

from .config import BrokerConfig
from .protocol.kafka_releases import DEFAULT_RELEASE, RELEASES
from .security.listeners import DEFAULT_PROTOCOL_MAP


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="kafka-shim", description="A Kafka-compatible broker over a durable local log.")
    sub = p.add_subparsers(dest="command", required=True)
    s = sub.add_parser("serve", help="run the broker")
    s.add_argument("--listen", default="127.0.0.1:9092", help="host:port to bind (default 127.0.0.1:9092; port 0 = any)")
    s.add_argument("--data-dir", default="./.kafka-shim", type=Path, help="log directory (default ./.kafka-shim)")
    s.add_argument("--advertised-host", default=None, help="host name given to clients (default: the bound host)")
    s.add_argument("--num-partitions", type=int, default=1, help="partitions of auto-created topics (default 1)")
    s.add_argument("--no-auto-create-topics", action="store_true", help="do not create topics on Metadata")
    s.add_argument("--fsync", choices=("never", "always"), default="never",
                   help="'always' fsyncs before acknowledging (default 'never': written, not synced)")
    s.add_argument("--segment-bytes", type=int, default=64 * 1024 * 1024)
    s.add_argument("--max-message-bytes", type=int, default=1_048_588)
    s.add_argument("--max-request-bytes", type=int, default=100 * 1024 * 1024,
                   help="socket.request.max.bytes: largest request frame; larger closes the connection")
    s.add_argument("--max-connections", type=int, default=2**31 - 1,
                   help="max.connections: connections held at once; at the limit new ones wait to be accepted")
    s.add_argument("--max-connections-per-ip", type=int, default=2**31 - 1,
                   help="max.connections.per.ip: connections per client address; over it, closed on accept")
    s.add_argument("--max-connections-per-ip-overrides", default="", metavar="HOST:N,...",
                   help="max.connections.per.ip.overrides: per-address limits, e.g. 10.0.0.5:500,localhost:50")
    s.add_argument("--connections-max-idle-ms", type=int, default=600_000,
                   help="connections.max.idle.ms: close connections idle this long (default 600000)")
    s.add_argument("--retention-ms", type=int, default=7 * 24 * 3600 * 1000)
    s.add_argument("--retention-bytes", type=int, default=-1)
    s.add_argument("--transaction-abort-check-interval-ms", type=int, default=10_000,
                   help="how often open transactions are checked against their timeout (default 10000)")
    s.add_argument("--group-min-session-timeout-ms", type=int, default=6_000,
                   help="smallest session.timeout.ms a group member may ask for; JoinGroup below it gets "
                        "INVALID_SESSION_TIMEOUT (default 6000, Kafka's group.min.session.timeout.ms)")
    s.add_argument("--kafka-version", choices=tuple(RELEASES), default=DEFAULT_RELEASE,
                   help=f"Apache Kafka release to emulate in ApiVersions and transactions (default {DEFAULT_RELEASE})")
    _security_arguments(s)
    s.add_argument("--log-level", default="INFO")
    c = sub.add_parser("certs", help="write a throwaway CA and broker/client certificates (PEM) for TLS tests")
    c.add_argument("--out", required=True, type=Path, help="directory for ca.pem, broker.pem, client-*.pem")
    c.add_argument("--host", action="append", default=None,
                   help="a name or address of the broker for its certificate (repeatable; default localhost, "
                        "127.0.0.1, ::1)")
    c.add_argument("--client-cn", default="client", help="common name of the client certificate (default client)")
    i = sub.add_parser("inspect", help="offsets, open and aborted transactions of a data directory (read-only)")
    i.add_argument("--data-dir", default="./.kafka-shim", type=Path)
    i.add_argument("--json", action="store_true", help="print JSON instead of a table")
    i.add_argument("--internal", action="store_true", help="include __transaction_state and __consumer_offsets")
    return p


def _security_arguments(s: argparse.ArgumentParser) -> None:
    g = s.add_argument_group("listeners, TLS and SASL (Kafka's names; README.md, Security)")
    g.add_argument("--listeners", default="", metavar="NAME://HOST:PORT,...",
                   help="listeners to bind, e.g. PLAINTEXT://127.0.0.1:9092,SASL_SSL://127.0.0.1:9093 "
                        "(default: PLAINTEXT on --listen)")
    g.add_argument("--advertised-listeners", default="", metavar="NAME://HOST:PORT,...",
                   help="addresses given to clients per listener (default: the bound ones)")
    g.add_argument("--listener-security-protocol-map", default=DEFAULT_PROTOCOL_MAP, metavar="NAME:PROTOCOL,...",
                   help="security protocol of each listener name (default: each protocol's own name)")
    g.add_argument("--ssl-keystore-location", default="", help="PEM file with the broker's key and certificate chain")
    g.add_argument("--ssl-keystore-type", default="PEM", help="only PEM")
    g.add_argument("--ssl-key-password", default="", help="password of an encrypted key in the keystore")
    g.add_argument("--ssl-truststore-location", default="", help="PEM file of CA certificates for client certificates")
    g.add_argument("--ssl-truststore-type", default="PEM", help="only PEM")
    g.add_argument("--ssl-client-auth", choices=("none", "requested", "required"), default="none")
    g.add_argument("--sasl-enabled-mechanisms", default="PLAIN,SCRAM-SHA-256,SCRAM-SHA-512")
    g.add_argument("--sasl-user", action="append", default=[], metavar="NAME:PASSWORD",
                   help="a user for PLAIN and SCRAM (repeatable)")
    g.add_argument("--plain-sasl-jaas-config", default="", metavar="JAAS",
                   help='PLAIN users as Kafka\'s listener.name.<l>.plain.sasl.jaas.config gives them: '
                        '\'org.apache.kafka.common.security.plain.PlainLoginModule required user_bob="pw";\'')
    g.add_argument("--connections-max-reauth-ms", type=int, default=0,
                   help="KIP-368 session lifetime of SASL connections; 0: no re-authentication (default)")


def _security_config(args: argparse.Namespace) -> dict:
    return dict(
        listeners=args.listeners, advertised_listeners=args.advertised_listeners,
        listener_security_protocol_map=args.listener_security_protocol_map,
        ssl_keystore_location=args.ssl_keystore_location, ssl_keystore_type=args.ssl_keystore_type,
        ssl_key_password=args.ssl_key_password, ssl_truststore_location=args.ssl_truststore_location,
        ssl_truststore_type=args.ssl_truststore_type, ssl_client_auth=args.ssl_client_auth,
        sasl_enabled_mechanisms=args.sasl_enabled_mechanisms, sasl_users=tuple(args.sasl_user),
        plain_sasl_jaas_config=args.plain_sasl_jaas_config,
        connections_max_reauth_ms=args.connections_max_reauth_ms,
    )


def config_from_args(args: argparse.Namespace) -> BrokerConfig:
    return BrokerConfig(
        listen=args.listen, data_dir=args.data_dir, advertised_host=args.advertised_host,
        num_partitions=args.num_partitions, auto_create_topics=not args.no_auto_create_topics, fsync=args.fsync,
        segment_bytes=args.segment_bytes, max_message_bytes=args.max_message_bytes,
        max_request_bytes=args.max_request_bytes, retention_ms=args.retention_ms, retention_bytes=args.retention_bytes,
        transaction_abort_check_interval_ms=args.transaction_abort_check_interval_ms,
        group_min_session_timeout_ms=args.group_min_session_timeout_ms,
        max_connections=args.max_connections, max_connections_per_ip=args.max_connections_per_ip,
        max_connections_per_ip_overrides=args.max_connections_per_ip_overrides,
        connections_max_idle_ms=args.connections_max_idle_ms,
        kafka_version=args.kafka_version, **_security_config(args),
    )


async def serve(config: BrokerConfig) -> None:
    from .broker import Broker

    broker = Broker(config)
    await broker.start()
    print(f"kafka-shim ready: bootstrap.servers={broker.bootstrap_servers} data-dir={config.data_dir}", flush=True)
    if config.listeners:
        listeners = ",".join(f"{name}://{host}:{port}" for name, (host, port) in broker.node.endpoints.items())
        print(f"kafka-shim listeners: {listeners}", flush=True)
    from kafka_codecs.records import NATIVE_WALK

    if not NATIVE_WALK:
        print("kafka-shim: kafka_codecs._walk was not built (no C compiler at install time?); produced records "
              "are validated in Python instead, correct but about 3 us a record slower", file=sys.stderr, flush=True)
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
    args = _parser().parse_args(argv)
    if args.command == "inspect":
        return _inspect(args)
    if args.command == "certs":
        from .security.certs import make_certs

        paths = make_certs(args.out, tuple(args.host) if args.host else ("localhost", "127.0.0.1", "::1"),
                           args.client_cn)
        print("\n".join(str(p) for p in paths.values()))
        return 0
    # kio registers hypothesis strategies for its types at import time when hypothesis is installed
    # (a test dependency): a quarter of a second of start-up the broker process never needs.
    if "hypothesis" not in sys.modules:
        sys.modules["hypothesis"] = None
    logging.basicConfig(level=args.log_level.upper(), stream=sys.stderr,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        config = config_from_args(args)
    except ValueError as e:
        print(f"kafka-shim: {e}", file=sys.stderr)
        return 2
    try:
        asyncio.run(serve(config))
    except (ValueError, OSError) as e:  # TLS files missing or unreadable (ssl.SSLError is an OSError), ports in use
        print(f"kafka-shim: {e}", file=sys.stderr)
        return 2
    return 0
