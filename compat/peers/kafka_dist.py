"""A stand-in for the Apache Kafka distribution kafka-python's fixtures drive, serving kafka-shim.

kafka-python's SASL and SSL integration tests cannot use an external broker (``KAFKA_URI`` skips the
SASL ones; the SSL fixture always starts a broker of its own): its ``KafkaFixture`` renders a
``kafka.properties`` and runs ``$KAFKA_ROOT/bin/kafka-run-class.sh kafka.Kafka kafka.properties``,
after ``kafka-configs.sh`` (or, from 4.0, ``kafka-storage.sh format --add-scram``) has added the SCRAM
user, and it lists topics with ``kafka-topics.sh --list``. ``make_root`` writes a ``KAFKA_ROOT`` whose
``bin/`` scripts run this module instead:

* ``kafka.Kafka PROPERTIES``: kafka-shim with those properties (the fixture's listener, log.dirs,
  sasl.enabled.mechanisms, ...), its PLAIN users from the ``KafkaServer`` JAAS section
  (``-Djava.security.auth.login.config`` in ``KAFKA_OPTS``), its SCRAM users from kafka-configs, and
  the JKS keystore of ``ssl.keystore.location`` converted to PEM (keytool, then ``cryptography``), as
  kafka-shim reads PEM only. When it serves it prints the log lines the fixture waits for.
* ``QuorumPeerMain``: kafka-shim needs no ZooKeeper; this prints ZooKeeper's "binding to port" and
  waits, so the fixture's ZooKeeper for Kafka < 4.0 stands up. ``zookeeper-shell.sh create`` succeeds.
* ``kafka-configs.sh --alter --entity-type users --add-config 'SCRAM-SHA-256=[password=...]'`` keeps
  the salted credential under ``$KAFKA_ROOT/zookeeper/`` for the broker of that chroot to start with.
* ``kafka-topics.sh --list``: kafka-python's admin client, with the ``--command-config`` settings.

librdkafka's test programs (compat/peers/librdkafka.py) run some of the same tools with
``KAFKA_PATH`` set to such a root: ``kafka-topics.sh --create/--alter/--delete`` (``test_kafka_topics``),
``kafka-acls.sh --add/--remove`` (0115, 0119) and, for their Java producers, ``kafka-run-class.sh``
of any other class with ``libs/`` on the class path.

The templates the fixture renders (``servers/resources/default/`` of kafka-python's repository, not in
its sdist) are ``TEMPLATES``, with the settings the fixtures bind and nothing else.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = ("kafka-run-class.sh", "kafka-storage.sh", "kafka-configs.sh", "zookeeper-shell.sh", "kafka-topics.sh",
           "kafka-acls.sh")

TEMPLATES = {
    "servers/resources/default/kafka.properties": """\
# kafka-shim's stand-in for the template of kafka-python's repository: what its fixtures bind
broker.id={broker_id}
node.id={broker_id}
listeners={transport}://{host}:{port}
log.dirs={tmp_dir}/data
num.partitions={partitions}
default.replication.factor={replicas}
auto.create.topics.enable={auto_create_topic}
group.initial.rebalance.delay.ms=0
zookeeper.connect={zk_host}:{zk_port}/{zk_chroot}
{sasl_config}
{ssl_config}
""",
    "servers/resources/default/kafka_server_jaas.conf": """\
KafkaServer {{
  {jaas_config}
}};
""",
    "servers/resources/default/sasl_command.conf": """\
security.protocol={transport}
sasl.mechanism={sasl_mechanism}
sasl.jaas.config={jaas_config}
""",
    "servers/resources/default/zookeeper.properties": """\
# kafka-shim needs no ZooKeeper: kafka_dist's QuorumPeerMain only says it binds
clientPort={port}
""",
}


def make_root(root: Path, jars=()) -> Path:
    """A ``KAFKA_ROOT`` whose ``bin/`` scripts run this module with this interpreter; ``jars`` (a
    kafka-clients jar named ``kafka-clients-VERSION.jar`` and what it loads) become its ``libs/``, the
    class path ``kafka-run-class.sh`` runs any other class with, as Kafka's does."""
    (root / "bin").mkdir(parents=True, exist_ok=True)
    path = os.pathsep.join([str(ROOT), str(ROOT / "codecs")])
    for name in SCRIPTS:
        script = root / "bin" / name
        script.write_text(f'#!/bin/sh\nPYTHONPATH={shlex.quote(path)}"${{PYTHONPATH:+:$PYTHONPATH}}" '
                          f'KAFKA_DIST_ROOT={shlex.quote(str(root))} '
                          f'exec {shlex.quote(sys.executable)} -m compat.peers.kafka_dist {name} "$@"\n')
        script.chmod(0o755)
    if jars:
        (root / "libs").mkdir(exist_ok=True)
        for jar in jars:
            link = root / "libs" / Path(jar).name
            link.unlink(missing_ok=True)
            link.symlink_to(jar)
    return root


def run_class(main_class: str, args: list[str]) -> int:
    """Any other class: ``java`` with ``$CLASSPATH`` and ``libs/*`` (Kafka's kafka-run-class.sh),
    e.g. the Java producers of librdkafka's test programs (``tests/java/run-class.sh``)."""
    libs = Path(os.environ.get("KAFKA_DIST_ROOT", ".")) / "libs"
    classpath = os.pathsep.join(p for p in (os.environ.get("CLASSPATH", ""), str(libs / "*")) if p)
    os.execvp("java", ["java", "-cp", classpath, main_class, *args])
    return 1  # not reached: execvp replaces this process


def _kafka_root() -> Path:
    return Path(os.environ["KAFKA_ROOT"])  # the fixtures run the scripts with their environment


def _option(args: list[str], name: str) -> str | None:
    return args[args.index(name) + 1] if name in args and args.index(name) + 1 < len(args) else None


# -- SCRAM users ------------------------------------------------------------------------------

_ADD_CONFIG = re.compile(r"(SCRAM-SHA-(?:256|512))=\[(?:name=(?P<name>[^,\]]+),)?(?:iterations=(?P<it>\d+),)?"
                         r"password=(?P<password>[^\]]*)\]")


def _credentials(spec: str, user: str | None) -> dict[str, dict]:
    from shim.security.scram import make_credential

    out = {}
    for m in _ADD_CONFIG.finditer(spec):
        name = m["name"] or user
        cred = make_credential(m[1], m["password"], int(m["it"] or 4096))
        out[f"{m[1]} {name}"] = cred.to_json()
    if not out:
        raise SystemExit(f"kafka_dist: cannot read the SCRAM credential {spec!r}")
    return out


def _zk_store(chroot: str) -> Path:
    return _kafka_root() / "zookeeper" / (chroot.strip("/").replace("/", "_") + ".json")


def kafka_configs(args: list[str]) -> int:
    connect, user, spec = _option(args, "--zookeeper"), _option(args, "--entity-name"), _option(args, "--add-config")
    if connect is None or spec is None or _option(args, "--entity-type") != "users":
        raise SystemExit(f"kafka_dist: kafka-configs.sh {' '.join(args)} is not the SCRAM user a fixture adds")
    store = _zk_store(connect.partition("/")[2])
    store.parent.mkdir(parents=True, exist_ok=True)
    known = json.loads(store.read_text()) if store.exists() else {}
    store.write_text(json.dumps({**known, **_credentials(spec, user)}))
    print(f"Completed updating config for user {user}.")
    return 0


def kafka_storage(args: list[str]) -> int:
    from shim.configs.properties import read_properties_file

    props = read_properties_file(Path(_option(args, "-c") or _option(args, "--config")))
    creds = {}
    for i, arg in enumerate(args):
        if arg == "--add-scram":
            creds.update(_credentials(args[i + 1], None))
    _install_credentials(Path(props["log.dirs"]), creds)
    print(f"Formatting metadata directory {props['log.dirs']}")
    return 0


def _install_credentials(data_dir: Path, creds: dict[str, dict]) -> list[str]:
    from shim.apis._pace import Pacer
    from shim.security.credentials import CredentialStore
    from shim.security.scram import ScramCredential

    if not creds:
        return []
    meta = data_dir / "__cluster_metadata"
    meta.mkdir(parents=True, exist_ok=True)
    store = CredentialStore(meta)
    upserts = {tuple(key.split(" ", 1)): ScramCredential.from_json(c) for key, c in creds.items()}
    asyncio.run(store.apply(upserts, [], Pacer()))  # the store paces its writes (shim.apis._pace)
    return sorted({user for _, user in upserts})


def _formatted_users(data_dir: Path) -> list[str]:
    """The SCRAM users ``kafka-storage.sh format --add-scram`` left in ``data_dir`` (KRaft fixtures)."""
    from shim.security.credentials import CredentialStore

    meta = data_dir / "__cluster_metadata"
    return sorted(CredentialStore(meta).users()) if meta.is_dir() else []


# -- the broker -------------------------------------------------------------------------------


def _jaas_server_section() -> str:
    m = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", os.environ.get("KAFKA_OPTS", ""))
    if m is None:
        return ""
    text = Path(m[1]).read_text()
    section = re.search(r"KafkaServer\s*\{(.*?)\};", text, re.S)
    return section[1].strip() if section else ""


def _pem_keystore(props: dict[str, str], out_dir: Path) -> Path:
    """ssl.keystore.location (JKS, as the fixture's keytool makes it) as one PEM file: key and chain."""
    from cryptography.hazmat.primitives.serialization import Encoding, NoEncryption, PrivateFormat, pkcs12

    password = props.get("ssl.keystore.password", "")
    p12 = out_dir / "keystore.p12"
    subprocess.run(["keytool", "-importkeystore", "-noprompt", "-srckeystore", props["ssl.keystore.location"],
                    "-srcstorepass", password, "-srcalias", "localhost", "-srckeypass",
                    props.get("ssl.key.password", password), "-destkeystore", str(p12), "-deststoretype", "PKCS12",
                    "-deststorepass", password], check=True, capture_output=True, timeout=120)
    key, cert, chain = pkcs12.load_key_and_certificates(p12.read_bytes(), password.encode())
    pem = out_dir / "keystore.pem"
    pem.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption())
                    + b"".join(c.public_bytes(Encoding.PEM) for c in [cert, *chain]))
    return pem


def _config(props: dict[str, str], keystore: Path | None):
    from shim.cli import DEFAULTS
    from shim.configs.properties import config_from_properties
    from shim.protocol.kafka_releases import RELEASES

    props = {k: v for k, v in props.items() if not k.startswith(("ssl.keystore.", "ssl.truststore.", "ssl.key."))
             and k not in ("zookeeper.connect", "sasl.mechanism.inter.broker.protocol")}
    if keystore is not None:
        props.update({"ssl.keystore.type": "PEM", "ssl.keystore.location": str(keystore)})
    config = config_from_properties(props, DEFAULTS)
    # the release the suite's KAFKA_VERSION names, as the runner's own kafka-shim emulates it
    release = ".".join(os.environ.get("KAFKA_VERSION", "").split(".")[:2])
    if release in RELEASES:
        config = config.replace(kafka_version=release)
    jaas = _jaas_server_section()
    return config.replace(plain_sasl_jaas_config=jaas) if "PlainLoginModule" in jaas else config


def kafka_server(properties: Path) -> int:
    from shim.broker import Broker
    from shim.configs.properties import read_properties_file

    props = read_properties_file(properties)
    broker_id = props.get("broker.id", "0")
    creds = {}
    chroot = props.get("zookeeper.connect", "").partition("/")[2]
    if chroot and _zk_store(chroot).exists():
        creds = json.loads(_zk_store(chroot).read_text())
    users = _install_credentials(Path(props["log.dirs"]), creds) or _formatted_users(Path(props["log.dirs"]))
    with tempfile.TemporaryDirectory(prefix="kafka-dist-") as d:
        keystore = _pem_keystore(props, Path(d)) if "ssl.keystore.location" in props else None
        config = _config(props, keystore)

        async def run() -> None:
            broker = Broker(config)
            await broker.start()
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                asyncio.get_running_loop().add_signal_handler(sig, stop.set)
            # the lines KafkaFixture waits for (Kafka 3.x's, with ZooKeeper; 4.x's, KRaft)
            print(f"[KafkaServer id={broker_id}] started", flush=True)
            print(f"[KafkaRaftServer nodeId={broker_id}] Kafka Server started", flush=True)
            for user in users:
                print(f"Removing Produce quota for user {user}", flush=True)
                print(f"Replayed UserScramCredentialRecord creating new entry for {user}", flush=True)
            await stop.wait()
            await broker.stop()

        asyncio.run(run())
    return 0


def zookeeper(properties: Path) -> int:
    port = re.search(r"clientPort=(\d+)", properties.read_text())
    print(f"binding to port 0.0.0.0/0.0.0.0:{port[1] if port else 0} (kafka-shim needs no ZooKeeper)", flush=True)
    signal.sigwait({signal.SIGTERM, signal.SIGINT})
    return 0


def _admin_params(bootstrap: str | None, command_config: str | None) -> dict:
    from shim.configs.properties import read_properties_file

    params = {"bootstrap_servers": bootstrap}
    if command_config:
        props = read_properties_file(Path(command_config))
        params["security_protocol"] = props.get("security.protocol", "PLAINTEXT")
        if "sasl.mechanism" in props:
            jaas = dict(re.findall(r'(\w+)="([^"]*)"', props.get("sasl.jaas.config", "")))
            params.update(sasl_mechanism=props["sasl.mechanism"], sasl_plain_username=jaas.get("username"),
                          sasl_plain_password=jaas.get("password"))
    return params


def _tool_args(prog: str, args: list[str], *options: str, flags: tuple[str, ...] = ()):
    import argparse

    parser = argparse.ArgumentParser(prog=prog)
    parser.add_argument("--bootstrap-server", required=True)
    parser.add_argument("--command-config")
    for name in options:
        parser.add_argument(name, action="append")
    for name in flags:
        parser.add_argument(name, action="store_true")
    parsed, rest = parser.parse_known_args(args)
    if rest:
        raise SystemExit(f"kafka_dist: {prog} {' '.join(args)}: {' '.join(rest)} is not served")
    return parsed


def kafka_topics(args: list[str]) -> int:
    """``--list``, ``--create`` (``--partitions``, ``--replication-factor``, ``--config k=v``...),
    ``--alter --partitions`` and ``--delete`` of ``--topic``: what kafka-python's fixtures and
    librdkafka's test programs (``test_kafka_topics``) run, through kafka-python's admin client."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewPartitions, NewTopic

    a = _tool_args("kafka-topics.sh", args, "--topic", "--partitions", "--replication-factor", "--config",
                   flags=("--list", "--create", "--alter", "--delete"))
    topic = (a.topic or [None])[-1]
    if not a.list and not topic:
        raise SystemExit(f"kafka_dist: kafka-topics.sh {' '.join(args)}: --topic is required")
    with KafkaAdminClient(**_admin_params(a.bootstrap_server, a.command_config)) as admin:
        if a.list:
            print("\n".join(sorted(admin.list_topics())))
        elif a.create:
            configs = dict(c.split("=", 1) for c in a.config or ())
            admin.create_topics([NewTopic(topic, int((a.partitions or ["-1"])[-1]),
                                          int((a.replication_factor or ["-1"])[-1]), topic_configs=configs)])
            print(f"Created topic {topic}.")
        elif a.alter and a.partitions:
            admin.create_partitions({topic: NewPartitions(int(a.partitions[-1]))})
        elif a.delete:
            admin.delete_topics([topic])
        else:
            raise SystemExit(f"kafka_dist: kafka-topics.sh {' '.join(args)} is not served")
    return 0


def kafka_acls(args: list[str]) -> int:
    """``--add``/``--remove [--force]`` of the ACLs one ``--allow-principal``/``--deny-principal``,
    ``--operation`` and ``--allow-host``/``--deny-host`` on one ``--topic`` or ``--group`` make,
    as librdkafka's test programs run it (0115, 0119), through kafka-python's admin client."""
    from kafka import KafkaAdminClient
    from kafka.admin import (ACL, ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                             ResourcePattern, ResourcePatternFilter, ResourceType)

    a = _tool_args("kafka-acls.sh", args, "--allow-principal", "--deny-principal", "--operation", "--allow-host",
                   "--deny-host", "--topic", "--group", flags=("--add", "--remove", "--force"))
    kind, name = (ResourceType.TOPIC, a.topic[-1]) if a.topic else (ResourceType.GROUP, (a.group or [None])[-1])
    if name is None or a.add == a.remove:
        raise SystemExit(f"kafka_dist: kafka-acls.sh {' '.join(args)} is not served")
    acls = [(p, h, ACLPermissionType.ALLOW) for p, h in zip(a.allow_principal or (), a.allow_host or ["*"] * 9)]
    acls += [(p, h, ACLPermissionType.DENY) for p, h in zip(a.deny_principal or (), a.deny_host or ["*"] * 9)]
    operations = [ACLOperation[o.upper()] for o in a.operation or ["All"]]
    with KafkaAdminClient(**_admin_params(a.bootstrap_server, a.command_config)) as admin:
        for principal, host, permission in acls:
            for op in operations:
                if a.add:
                    pattern = ResourcePattern(kind, name, ACLResourcePatternType.LITERAL)
                    result = admin.create_acls([ACL(principal, host, op, permission, pattern)])
                    failed = result["failed"]
                else:
                    pattern = ResourcePatternFilter(kind, name, ACLResourcePatternType.LITERAL)
                    failed = [r for r in admin.delete_acls([ACLFilter(principal, host, op, permission, pattern)])
                              if r[2] is not None and r[2].errno]
                if failed:
                    raise SystemExit(f"kafka_dist: kafka-acls.sh {' '.join(args)}: {failed}")
    return 0


def main(argv: list[str]) -> int:
    script, args = argv[0], argv[1:]
    if script == "kafka-run-class.sh":
        main_class, rest = args[0], args[1:]
        if main_class == "kafka.Kafka":
            return kafka_server(Path(rest[0]))
        if main_class.endswith("QuorumPeerMain"):
            return zookeeper(Path(rest[0]))
        return run_class(main_class, rest)
    if script == "zookeeper-shell.sh":
        return 0  # `create /chroot`: the chroot is only a name here
    handlers = {"kafka-configs.sh": kafka_configs, "kafka-storage.sh": kafka_storage, "kafka-topics.sh": kafka_topics,
                "kafka-acls.sh": kafka_acls}
    if script not in handlers:
        raise SystemExit(f"kafka_dist: {script} is not served")
    return handlers[script](args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
