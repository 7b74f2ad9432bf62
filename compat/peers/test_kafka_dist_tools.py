"""kafka_dist's stand-ins for the Kafka distribution's command-line tools, as librdkafka's test
programs run them (``test_kafka_topics``, ``test_kafka_cmd("kafka-acls.sh ...")``, and
``tests/java/run-class.sh`` through ``kafka-run-class.sh``): each changes the broker as Kafka's tool
would, read back from the broker's own state."""

from __future__ import annotations

import subprocess

import pytest

import shim
from compat import javarun
from compat.peers import kafka_dist
from shim.security.acls import AclOperation, AclPermissionType, ResourceType

STANDARD = "org.apache.kafka.metadata.authorizer.StandardAuthorizer"


@pytest.fixture(scope="module")
def broker(tmp_path_factory):
    b = shim.BrokerThread(data_dir=tmp_path_factory.mktemp("data"), listen="127.0.0.1:0",
                          authorizer_class_name=STANDARD, allow_everyone_if_no_acl_found=True).start()
    yield b
    b.stop()


@pytest.fixture(scope="module")
def bin_dir(tmp_path_factory):
    return kafka_dist.make_root(tmp_path_factory.mktemp("kafka")) / "bin"


def run(bin_dir, broker, tool: str, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([str(bin_dir / tool), "--bootstrap-server", broker.bootstrap_servers, *args],
                          capture_output=True, text=True, timeout=120)


def test_kafka_topics_creates_with_configs_adds_partitions_and_deletes(broker, bin_dir):
    # 0052/0077's creation, 0045's --alter and --delete
    done = run(bin_dir, broker, "kafka-topics.sh", "--create", "--topic", "kd-topic", "--replication-factor", "1",
               "--partitions", "1", "--config", "cleanup.policy=compact", "--config", "segment.ms=500")
    assert done.returncode == 0, done.stderr
    info = broker.call(broker.node.logs.topic, "kd-topic")
    assert (info.partitions, info.configs) == (1, {"cleanup.policy": "compact", "segment.ms": "500"})
    assert run(bin_dir, broker, "kafka-topics.sh", "--alter", "--topic", "kd-topic", "--partitions", "4").returncode == 0
    assert broker.call(broker.node.logs.topic, "kd-topic").partitions == 4
    assert run(bin_dir, broker, "kafka-topics.sh", "--delete", "--topic", "kd-topic").returncode == 0
    assert "kd-topic" not in broker.call(lambda: set(broker.node.logs.topics))


def test_kafka_topics_fails_as_the_tool_does_on_an_error_and_on_what_it_does_not_serve(broker, bin_dir):
    assert run(bin_dir, broker, "kafka-topics.sh", "--delete", "--topic", "kd-no-such-topic").returncode != 0
    refused = run(bin_dir, broker, "kafka-topics.sh", "--describe", "--topic", "kd-topic")
    assert refused.returncode != 0 and "--describe" in refused.stderr


def test_kafka_acls_adds_and_removes_the_bindings_librdkafkas_tests_name(broker, bin_dir):
    def bindings():
        return broker.call(lambda: [b for b in broker.node.acls if b.name == "kd-acl"])

    # 0119's pair: allow Describe, deny Read, each for every principal from every host
    for args in (("--allow-principal", "User:*", "--operation", "Describe", "--allow-host", "*"),
                 ("--deny-principal", "User:*", "--operation", "Read", "--deny-host", "*")):
        done = run(bin_dir, broker, "kafka-acls.sh", "--add", *args, "--topic", "kd-acl")
        assert done.returncode == 0, done.stderr
    got = {(b.resource_type, b.principal, b.host, b.operation, b.permission) for b in bindings()}
    assert got == {(ResourceType.TOPIC, "User:*", "*", AclOperation.DESCRIBE, AclPermissionType.ALLOW),
                   (ResourceType.TOPIC, "User:*", "*", AclOperation.READ, AclPermissionType.DENY)}
    done = run(bin_dir, broker, "kafka-acls.sh", "--remove", "--force", "--deny-principal", "User:*",
               "--operation", "Read", "--deny-host", "*", "--topic", "kd-acl")
    assert done.returncode == 0, done.stderr
    assert [(b.operation, b.permission) for b in bindings()] == [(AclOperation.DESCRIBE, AclPermissionType.ALLOW)]


def test_kafka_run_class_runs_any_other_class_with_libs_on_the_class_path(tmp_path):
    # librdkafka's tests/java/run-class.sh: CLASSPATH=<its classes> $KAFKA_PATH/bin/kafka-run-class.sh Cls
    try:
        javarun.find_tools()
    except javarun.JavaUnavailable as e:
        pytest.skip(str(e))
    (tmp_path / "Hello.java").write_text(
        'public class Hello { public static void main(String[] a) {\n'
        '    System.out.println("hello " + a[0] + " " + System.getProperty("java.class.path")); } }\n')
    subprocess.run(["javac", "-d", str(tmp_path), str(tmp_path / "Hello.java")], check=True, timeout=120)
    lib = tmp_path / "dep.jar"
    lib.write_bytes(b"")
    root = kafka_dist.make_root(tmp_path / "kafka", jars=[lib])
    done = subprocess.run([str(root / "bin" / "kafka-run-class.sh"), "Hello", "world"], capture_output=True,
                          text=True, timeout=120, env={"PATH": "/usr/bin:/bin", "CLASSPATH": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    # java expands libs/* to the jars in it
    assert done.stdout.split() == ["hello", "world", f"{tmp_path}:{root / 'libs' / 'dep.jar'}"]
