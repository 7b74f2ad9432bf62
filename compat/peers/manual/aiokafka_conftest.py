"""Replaces tests/conftest.py of an aiokafka checkout (tag v0.14.0) so that its integration tests
run against kafka-shim instead of the Kafka it starts in Docker.

The fixtures keep their names and shapes (``kafka_server``, ``setup_test_class``, ``ssl_folder``,
``loop``...): a session-wide ``kafka-shim serve`` configured as the suite's image configures Kafka
(docker/scripts/start-kafka.sh): ``num.partitions=2``, topics created on first use, PLAINTEXT, SSL
(client certificates required), SASL_PLAINTEXT and SASL_SSL listeners, the PLAIN users of its
``kafka_server_jaas.conf`` (admin, test, test2), an authorizer with ``allow.everyone.if.no.acl.found``
and ``User:admin`` a super user.

What the suite does inside its container is done with kafka-shim's own tooling instead:
- ``gen-ssl-certs.sh`` (CA, client certificate): ``shim.security.certs.make_certs`` (the
  ``cryptography`` package), written under the names the suite reads (ca.crt, client.crt, client.key);
- ``kafka-acls.sh`` (ACLManager): CreateAcls / DeleteAcls / DescribeAcls from kafka-python's admin
  client, as User:admin, with kafka-acls.sh's meaning of each option;
- ``kafka-configs.sh --add-config SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]`` (KafkaConfig):
  AlterUserScramCredentials, as ``kafka-configs.sh --bootstrap-server`` sends it;
- the Kerberos KDC (KerberosUtils): none; GSSAPI is not served (shim/apis/NOT_IMPLEMENTED.md), so
  the two GSSAPI tests skip.

Usage: compat/README.md, "aiokafka's and confluent-kafka-python's own suites (manual runs)".
"""
import asyncio
import gc
import os
import sys
import warnings
from dataclasses import dataclass

import pytest

sys.path.insert(0, os.environ["KAFKA_SHIM_ROOT"])
from compat.peers.runner import BrokerProcess  # noqa: E402

with warnings.catch_warnings():  # kafka-python's import warns (importlib.resources.read_text); the suite's
    warnings.simplefilter("ignore", DeprecationWarning)  # filterwarnings=error would make that an error
    import kafka.admin  # noqa: F401,E402

KAFKA_VERSION = os.environ.get("AIOKAFKA_KAFKA_VERSION", "3.9.0")
ADMIN = ("admin", "admin")  # the super user of the image's JAAS file
PLAIN_JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" '
              'password="admin" user_admin="admin" user_test="test" user_test2="test2";')
LISTENERS = "PLAINTEXT SSL SASL_PLAINTEXT SASL_SSL".split()


def pytest_addoption(parser):
    parser.addoption("--docker-image", action="store", default=f"shim:{KAFKA_VERSION}")
    parser.addoption("--no-pull", action="store_true")


@dataclass
class KafkaServer:
    host: str
    port: int
    ssl_port: int
    sasl_plain_port: int
    sasl_ssl_port: int
    container: object = None

    @property
    def hosts(self):
        return [f"{self.host}:{self.port}"]


@pytest.fixture(scope="session")
def ssl_folder(tmp_path_factory):
    """gen-ssl-certs.sh's files: ca.crt, client.crt, client.key (the broker's own are beside them)."""
    from shim.security.certs import make_certs

    out = tmp_path_factory.mktemp("ssl_cert")
    certs = make_certs(out)
    for name, made in {"ca.crt": "ca.pem", "client.crt": "client-cert.pem", "client.key": "client-key.pem"}.items():
        (out / name).write_bytes(certs[made].read_bytes())
    return out


def _endpoints(broker) -> dict:
    """{listener: port} from serve's ``kafka-shim listeners:`` line (printed right after the ready line)."""
    line = broker.proc.stdout.readline()
    assert line.startswith("kafka-shim listeners: "), line
    return {name: int(rest.rsplit(":", 1)[1]) for name, rest in
            (item.split("://") for item in line.split(": ", 1)[1].strip().split(","))}


@pytest.fixture(scope="session")
def kafka_server(tmp_path_factory, ssl_folder):
    data = tmp_path_factory.mktemp("shim")
    args = ["--num-partitions", "2", "--group-min-session-timeout-ms", "1000",
            "--listeners", ",".join(f"{name}://127.0.0.1:0" for name in LISTENERS),
            "--ssl-keystore-location", str(ssl_folder / "broker.pem"),
            "--ssl-truststore-location", str(ssl_folder / "ca.pem"), "--ssl-client-auth", "required",
            "--sasl-enabled-mechanisms", "PLAIN,SCRAM-SHA-256,SCRAM-SHA-512", "--plain-sasl-jaas-config", PLAIN_JAAS,
            "--override", "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
            "--override", "allow.everyone.if.no.acl.found=true", "--override", f"super.users=User:{ADMIN[0]}"]
    with BrokerProcess(data / "data", data / "broker.log", args) as broker:
        ports = _endpoints(broker)
        yield KafkaServer("127.0.0.1", *(ports[name] for name in LISTENERS))


def _admin(kafka_server):
    """kafka-python's admin client as User:admin over SASL_PLAINTEXT: the container's shell tools."""
    from kafka.admin import KafkaAdminClient

    return KafkaAdminClient(bootstrap_servers=f"{kafka_server.host}:{kafka_server.sasl_plain_port}",
                            security_protocol="SASL_PLAINTEXT", sasl_mechanism="PLAIN",
                            sasl_plain_username=ADMIN[0], sasl_plain_password=ADMIN[1])


class ACLManager:
    """tests/_testutil.py's ACLManager (kafka-acls.sh --add/--remove/--list) over the ACL APIs."""

    def __init__(self, admin):
        self._admin = admin
        self._active_acls = []

    def add_acl(self, **acl_params):
        result = self._admin.create_acls(self._acls(**acl_params))
        assert not result["failed"], result["failed"]
        self._active_acls.append(acl_params)

    def remove_acl(self, **acl_params):
        from kafka.admin import ACLFilter

        for a in self._acls(**acl_params):
            filt = ACLFilter(a.principal, a.host, a.operation, a.permission_type, a.resource_pattern)
            for _filter, matches, error in self._admin.delete_acls([filt]):
                assert error.errno == 0, error
        self._active_acls.remove(acl_params)

    def list_acl(self, principal=None):
        from kafka.admin import (ACLFilter, ACLOperation, ACLPermissionType, ACLResourcePatternType,
                                 ResourcePatternFilter, ResourceType)

        pattern = ResourcePatternFilter(ResourceType.ANY, None, ACLResourcePatternType.ANY)
        principal = f"User:{principal}" if principal else None
        acls, error = self._admin.describe_acls(ACLFilter(principal, None, ACLOperation.ANY, ACLPermissionType.ANY,
                                                          pattern))
        assert error.errno == 0, error
        return acls

    def cleanup(self):
        for acl_params in self._active_acls[:]:
            self.remove_acl(**acl_params)

    @staticmethod
    def _acls(cluster=None, topic=None, group=None, transactional_id=None, allow_principal=None,
              deny_principal=None, allow_host=None, deny_host=None, operation=None, producer=None, consumer=None):
        """kafka-acls.sh's reading of its options: one ACL per resource and principal, host ``*`` unless
        given, LITERAL patterns; ``--operation All`` is ALL."""
        from kafka.admin import ACL, ACLOperation, ACLPermissionType, ACLResourcePatternType, ResourcePattern
        from kafka.admin import ResourceType as RT

        if producer or consumer:
            raise NotImplementedError("kafka-acls.sh --producer/--consumer: no test of the suite uses them")
        resources = [ResourcePattern(kind, name, ACLResourcePatternType.LITERAL) for kind, name in (
            (RT.CLUSTER, "kafka-cluster" if cluster else None), (RT.TOPIC, topic), (RT.GROUP, group),
            (RT.TRANSACTIONAL_ID, transactional_id)) if name is not None]
        op = ACLOperation[operation.upper()]
        grants = [(f"User:{p}", allow_host or "*", ACLPermissionType.ALLOW) for p in [allow_principal] if p]
        grants += [(f"User:{p}", deny_host or "*", ACLPermissionType.DENY) for p in [deny_principal] if p]
        return [ACL(principal, host, op, perm, res) for res in resources for principal, host, perm in grants]


class KafkaConfig:
    """tests/_testutil.py's KafkaConfig: kafka-configs.sh --alter --add-config SCRAM-SHA-256=[...],SCRAM-SHA-512=[...]."""

    def __init__(self, admin):
        self._admin = admin

    def add_scram_user(self, username, password):
        from kafka.admin import ScramMechanism, UserScramCredentialUpsertion

        # one request per mechanism: a KRaft controller (ScramControlManager.alterCredentials) keys a
        # request's changes by user name, so two in one request are DUPLICATE_RESOURCE
        for mechanism in (ScramMechanism.SCRAM_SHA_256, ScramMechanism.SCRAM_SHA_512):
            errors = self._admin.alter_user_scram_credentials([UserScramCredentialUpsertion(username, mechanism, password)])
            assert not any(errors.values()), errors


class _NoKerberos:
    """KerberosUtils stand-in: GSSAPI is not served by kafka-shim."""

    def __getattr__(self, name):
        pytest.skip("GSSAPI (Kerberos) is not served by kafka-shim (shim/apis/NOT_IMPLEMENTED.md)")


@pytest.fixture(scope="class")
def loop(request):
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)
    yield loop
    if not loop._closed:
        loop.call_soon(loop.stop)
        loop.run_forever()
        loop.close()
    gc.collect()
    asyncio.set_event_loop(None)


@pytest.fixture(autouse=True)
def collect_garbage():
    yield
    gc.collect()


@pytest.fixture(scope="class")
def setup_test_class_serverless(request, loop):
    request.cls.loop = loop


@pytest.fixture(scope="class")
def setup_test_class(request, loop, kafka_server, ssl_folder):
    cls = request.cls
    cls.loop = loop
    cls.kafka_host, cls.kafka_port = kafka_server.host, kafka_server.port
    cls.kafka_ssl_port = kafka_server.ssl_port
    cls.kafka_sasl_plain_port = kafka_server.sasl_plain_port
    cls.kafka_sasl_ssl_port = kafka_server.sasl_ssl_port
    cls.ssl_folder = ssl_folder
    admin = _admin(kafka_server)
    cls.acl_manager = ACLManager(admin)
    cls.kafka_config = KafkaConfig(admin)
    cls.kerberos_utils = _NoKerberos()
    cls.hosts = kafka_server.hosts
    cls.kafka_version = KAFKA_VERSION
    yield
    admin.close()
