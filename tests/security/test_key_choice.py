"""A key store with several private keys serves what Java's key manager would serve
(shim.security.keychoice): of each key type the entry SunX509 chooses, checked against the JDK's own
key manager on stores the JDK wrote, and in TLS handshakes against a JDK TLS server on the same store.
The clients' side is compat/test_tls_key_choice.py."""

from __future__ import annotations

import datetime
import ipaddress
import shutil
import socket
import ssl
from pathlib import Path

import pytest

from shim.config import BrokerConfig
from shim.security import keychoice
from shim.security.stores import StoreError, key_store
from shim.security.tls import server_context
from tests.security.java_key_manager import JavaTlsServer, java_key_manager, java_merged_store

pytest.importorskip("cryptography")
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import hashes, serialization  # noqa: E402
from cryptography.hazmat.primitives.asymmetric import ec, rsa  # noqa: E402
from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: E402
from cryptography.x509.oid import NameOID  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("javac") is None, reason="no JDK")
STORE_PW = "store-secret"
FEW = {"kafka": "RSA", "broker-rsa": "RSA", "kafka-ec": "EC", "broker-ec": "EC"}  # a table of 16 buckets
MANY = {**{a: "RSA" for a in ("broker-rsa", "kafka", "legacy-rsa", "rsa-2048", "node-1", "node-2", "old-broker",
                              "internal")},
        **{a: "EC" for a in ("broker-ec", "kafka-ec", "ssl", "ec-p256", "node-3", "ec-backup")}}  # 32 buckets


def self_signed(alias: str, kind: str):
    key = rsa.generate_private_key(65537, 2048) if kind == "RSA" else ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, alias)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
            .not_valid_after(now + datetime.timedelta(days=2))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("localhost"),
                                                        x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .sign(key, hashes.SHA256()))
    return key, cert


@pytest.fixture(scope="module")
def sources(tmp_path_factory) -> dict[str, Path]:
    """A PKCS12 file per alias of MANY (and rsa-1, rsa-15, which share a bucket): its key and certificate."""
    d = tmp_path_factory.mktemp("key-choice")
    out = {}
    for alias, kind in {**MANY, "rsa-1": "RSA", "rsa-15": "RSA"}.items():
        key, cert = self_signed(alias, kind)
        (d / f"{alias}.p12").write_bytes(pkcs12.serialize_key_and_certificates(
            alias.encode(), key, cert, None, serialization.BestAvailableEncryption(STORE_PW.encode())))
        (d / f"{alias}.pem").write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        out[alias] = d / f"{alias}.p12"
    return out


def store(sources, tmp_path, kind: str, aliases) -> str:
    path = tmp_path / f"broker.{kind.lower()}"
    java_merged_store(path, kind, {a: sources[a] for a in aliases}, STORE_PW, STORE_PW)
    return str(path)


def config(path: str, kind: str) -> BrokerConfig:
    return BrokerConfig(ssl_keystore_type=kind, ssl_keystore_location=path, ssl_keystore_password=STORE_PW)


def served_aliases(ks) -> str:
    """'RSA=<alias> EC=<alias>' of the key store read, as java_key_manager prints Java's choice."""
    by_type = {}
    for chain in (ks.chain_pem, *(c for _, c in ks.more)):
        cert = x509.load_pem_x509_certificate(chain.encode())
        by_type[keychoice.key_type(cert)] = cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
    return f"RSA={by_type.get('RSA', 'null')} EC={by_type.get('EC', 'null')}"


@pytest.mark.parametrize("aliases", [FEW, MANY], ids=["16-buckets", "32-buckets"])
@pytest.mark.parametrize("kind", ["JKS", "JCEKS", "PKCS12"])
def test_each_key_type_serves_the_entry_java_chooses(sources, tmp_path, kind, aliases):
    path = store(sources, tmp_path, kind, aliases)
    java = java_key_manager(path, kind, STORE_PW)
    assert served_aliases(key_store(config(path, kind))) == java
    first = {t: next(a for a, kind in aliases.items() if kind == t) for t in ("RSA", "EC")}
    assert java != f"RSA={first['RSA']} EC={first['EC']}"  # not simply the first of each written


def test_keys_of_one_type_serve_that_type_alone(sources, tmp_path):
    path = store(sources, tmp_path, "PKCS12", ["kafka-ec", "broker-ec", "ssl"])
    ks = key_store(config(path, "PKCS12"))
    assert ks.more == () and served_aliases(ks) == java_key_manager(path, "PKCS12", STORE_PW) == "RSA=null EC=broker-ec"


def test_two_keys_of_a_type_in_one_bucket_are_refused_naming_them(sources, tmp_path):
    """Java then serves the one its store enumerates first, which kafka-shim does not follow."""
    assert keychoice.bucket("rsa-1", 16) == keychoice.bucket("rsa-15", 16)
    path = store(sources, tmp_path, "JKS", ["rsa-1", "rsa-15", "broker-ec"])
    assert java_key_manager(path, "JKS", STORE_PW).startswith("RSA=rsa-1")  # Java starts, and serves one of them
    with pytest.raises(StoreError, match=f"Invalid SSL keystore {path} of type JKS: its RSA private keys 'rsa-1' and "
                                         f"'rsa-15' fall in one bucket of Java's key manager.*keytool -changealias"):
        server_context(config(path, "JKS"))


@pytest.mark.parametrize("algorithm", ["PKIX", "NewSunX509"])
def test_a_pkix_key_manager_over_several_keys_of_a_type_is_refused(sources, tmp_path, algorithm):
    """PKIX ranks a type's keys per handshake (SNI, validity, key usage), which kafka-shim does not follow;
    over one key of each type it has no choice to make, and the store serves."""
    path = store(sources, tmp_path, "PKCS12", FEW)
    with pytest.raises(StoreError, match=f"Invalid SSL keystore {path} of type PKCS12: it holds 2 RSA private keys, "
                                         f"among which Java's {algorithm} key manager"):
        server_context(config(path, "PKCS12").replace(extra={"ssl.keymanager.algorithm": algorithm}))
    one_each = store(sources, tmp_path, "JKS", ["kafka", "kafka-ec"])
    ks = key_store(config(one_each, "JKS").replace(extra={"ssl.keymanager.algorithm": algorithm}))
    assert served_aliases(ks) == "RSA=kafka EC=kafka-ec"


def presented(connect, client: ssl.SSLContext) -> str:
    """The common name of the certificate a server presents to ``client``."""
    cert = x509.load_der_x509_certificate(connect(client))
    return cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value


def over_socket(port: int):
    def connect(client: ssl.SSLContext) -> bytes:
        with socket.create_connection(("127.0.0.1", port), timeout=30) as raw:
            with client.wrap_socket(raw, server_hostname="localhost") as s:
                return s.getpeercert(binary_form=True)
    return connect


def in_memory(ctx: ssl.SSLContext):
    def connect(client: ssl.SSLContext) -> bytes:
        ends = [ssl.MemoryBIO() for _ in range(4)]
        c = client.wrap_bio(ends[0], ends[1], server_hostname="localhost")
        s = ctx.wrap_bio(ends[2], ends[3], server_side=True)
        done = set()
        for _ in range(10):
            for side in (c, s):
                try:
                    side.do_handshake()
                    done.add(side)
                except ssl.SSLWantReadError:
                    pass
            ends[2].write(ends[1].read())
            ends[0].write(ends[3].read())
            if c in done:
                return c.getpeercert(binary_form=True)
        raise AssertionError("the handshake did not finish")
    return connect


def clients() -> dict[str, ssl.SSLContext]:
    """TLS 1.3 and 1.2 clients offering both key types, and TLS 1.2 clients that take one key type only."""
    out = {}
    for name, version, ciphers in (("tls1.3", ssl.TLSVersion.TLSv1_3, None), ("tls1.2", ssl.TLSVersion.TLSv1_2, None),
                                   ("tls1.2-rsa", ssl.TLSVersion.TLSv1_2, "ECDHE-RSA-AES128-GCM-SHA256"),
                                   ("tls1.2-ecdsa", ssl.TLSVersion.TLSv1_2, "ECDHE-ECDSA-AES128-GCM-SHA256")):
        c = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        c.check_hostname, c.verify_mode = False, ssl.CERT_NONE
        c.maximum_version = version
        if ciphers:
            c.set_ciphers(ciphers)
        out[name] = c
    return out


@pytest.mark.parametrize("kind", ["JKS", "PKCS12"])
def test_handshakes_present_the_certificate_a_jdk_server_presents(sources, tmp_path, kind):
    path = store(sources, tmp_path, kind, MANY)
    ours = in_memory(server_context(config(path, kind)))
    with JavaTlsServer(path, kind, STORE_PW, STORE_PW, len(clients())) as java:
        javas = {name: presented(over_socket(java.port), c) for name, c in clients().items()}
    assert {name: presented(ours, c) for name, c in clients().items()} == javas
    assert javas["tls1.3"] == javas["tls1.2"] == javas["tls1.2-ecdsa"] == "ec-p256"
    assert javas["tls1.2-rsa"] == "internal"


def entry(alias: str | None, kind: str) -> keychoice.KeyEntry:
    return keychoice.KeyEntry(alias, f"key of {alias}", f"chain of {alias}", kind)


def test_unnamed_pkcs12_keys_of_one_type_are_refused_and_alone_serve():
    """Java names a PKCS12 key without a friendly name by a count at load, which is not followed."""
    with pytest.raises(keychoice.KeyChoiceError, match="2 RSA private keys, 1 of them without a friendly name"):
        keychoice.served([entry(None, "RSA"), entry("named", "RSA"), entry("ec", "EC")])
    assert keychoice.served([entry(None, "RSA"), entry("ec", "EC")]) == [entry(None, "RSA"), entry("ec", "EC")]


def test_keys_of_no_tls_type_are_not_served():
    assert keychoice.served([entry("x", "1.3.101.110"), entry("ec", "EC")]) == [entry("ec", "EC")]
    assert keychoice.served([entry("x", "1.3.101.110")]) == []


def test_java_string_hash():
    """String.hashCode(): "broker".hashCode() is -1380616231 in Java; a character beyond the BMP is two units."""
    assert keychoice.java_string_hash("broker") == -1380616231 & 0xFFFFFFFF
    assert keychoice.java_string_hash("\U0001F511") == (31 * 0xD83D + 0xDD11) & 0xFFFFFFFF
