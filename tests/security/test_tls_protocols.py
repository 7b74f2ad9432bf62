"""``ssl.enabled.protocols``: a listener agrees only the TLS versions listed (Kafka's default
TLSv1.2,TLSv1.3), as Kafka's server SSLEngine does; a name the JDK does not know, or a list of
versions JDK 17 disables only, refuses the start naming the setting. Raw handshakes with Python ssl
client contexts pinned to one version, then real clients: confluent-kafka and kafka-python served
over a restricted list, kafka-python (its ssl_context) refused one outside it."""

from __future__ import annotations

import ssl

import pytest

from shim.broker import BrokerThread
from shim.security import versions
from shim.security.certs import make_certs

pytest.importorskip("cryptography")
V12, V13 = ssl.TLSVersion.TLSv1_2, ssl.TLSVersion.TLSv1_3


@pytest.fixture
def certs(tmp_path):
    return make_certs(tmp_path / "certs")


def broker(tmp_path, certs, protocols: str | None) -> BrokerThread:
    extra = {} if protocols is None else {"ssl.enabled.protocols": protocols}
    return BrokerThread(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                        ssl_keystore_location=str(certs["broker.pem"]), extra=extra)


def pinned(certs, low: ssl.TLSVersion, high: ssl.TLSVersion) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(certs["ca.pem"]))
    ctx.check_hostname = False
    ctx.minimum_version, ctx.maximum_version = low, high
    return ctx


def handshake(bootstrap: str, ctx: ssl.SSLContext) -> str:
    """The version agreed, or the reason the handshake failed."""
    import socket
    host, port = bootstrap.rsplit(":", 1)
    with socket.create_connection((host, int(port)), timeout=10) as raw:
        try:
            with ctx.wrap_socket(raw) as tls:
                return tls.version()
        except ssl.SSLError as exc:
            return exc.reason


@pytest.mark.parametrize("protocols, served", [
    (None, {V12: "TLSv1.2", V13: "TLSv1.3"}),
    ("TLSv1.2,TLSv1.3", {V12: "TLSv1.2", V13: "TLSv1.3"}),
    ("TLSv1.3", {V13: "TLSv1.3"}),
    (" TLSv1.2 ", {V12: "TLSv1.2"}),
    ("TLSv1.1,TLSv1.2", {V12: "TLSv1.2"}),  # TLSv1.1: known to the JDK, disabled by it
])
def test_only_the_listed_versions_are_agreed(tmp_path, certs, protocols, served):
    with broker(tmp_path, certs, protocols) as b:
        for version in (V12, V13):
            got = handshake(b.bootstrap("SSL"), pinned(certs, version, version))
            if version in served:
                assert got == served[version]
            else:
                assert got == "TLSV1_ALERT_PROTOCOL_VERSION", got  # the alert, not a bare close


@pytest.mark.parametrize("protocols, message", [
    ("TLSv1.4", "Unsupported protocol: TLSv1.4"),
    ("tlsv1.3", "Unsupported protocol: tlsv1.3"),  # the JDK's names mind case
    ("TLSv1,TLSv1.1", "No appropriate protocol"),
    ("SSLv3", "No appropriate protocol"),
])
def test_a_list_kafka_cannot_serve_refuses_the_start(tmp_path, certs, protocols, message):
    thread = broker(tmp_path, certs, protocols)
    with pytest.raises(ValueError, match=f"Invalid ssl.enabled.protocols=.*{message}"):
        thread.start()
    thread.stop()


def test_the_list_is_read_as_kafkas_list_type():
    assert versions.names(None) == versions.names("") == versions.names(" , ") == ("TLSv1.2", "TLSv1.3")
    assert versions.names("TLSv1.3, TLSv1.2") == ("TLSv1.3", "TLSv1.2")
    assert versions.version_range(["TLSv1.3", "TLSv1.2"]) == (V12, V13)


def test_real_clients_over_a_restricted_list(tmp_path, certs):
    confluent_admin = pytest.importorskip("confluent_kafka.admin")
    kafka = pytest.importorskip("kafka")
    with broker(tmp_path, certs, "TLSv1.2") as b:
        admin = confluent_admin.AdminClient({
            "bootstrap.servers": b.bootstrap("SSL"), "security.protocol": "SSL",
            "ssl.ca.location": str(certs["ca.pem"]), "ssl.endpoint.identification.algorithm": "none"})
        assert admin.list_topics(timeout=30).brokers  # librdkafka offers 1.2 and 1.3; 1.2 is agreed
        served = kafka.KafkaAdminClient(bootstrap_servers=b.bootstrap("SSL"), security_protocol="SSL",
                                        ssl_context=pinned(certs, V12, V12), request_timeout_ms=20000)
        assert served.describe_cluster()["brokers"]
        served.close()
        with pytest.raises(kafka.errors.KafkaTimeoutError, match="Unable to bootstrap"):  # no version in common
            kafka.KafkaAdminClient(bootstrap_servers=b.bootstrap("SSL"), security_protocol="SSL",
                                   ssl_context=pinned(certs, V13, V13), bootstrap_timeout_ms=3000)
