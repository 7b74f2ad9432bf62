"""Key and trust stores in Java's own formats, JKS and JCEKS (shim.security.jks), made by the JDK's
keytool: what the broker serves and trusts, and the start refused for what Java refuses. The
clients' side is compat/test_tls_stores.py."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from shim.config import BrokerConfig
from shim.security import jks
from shim.security.stores import StoreError, key_store, trusted_certificates
from shim.security.tls import server_context
from tests.security.java_key_manager import java_key_manager

pytest.importorskip("cryptography")
KEYTOOL = shutil.which("keytool")
pytestmark = pytest.mark.skipif(KEYTOOL is None, reason="keytool (a JDK) is not installed")
STORE_PW, KEY_PW = "store-secret", "key-secret"


def keytool(*args: str) -> None:
    made = subprocess.run([KEYTOOL, *args], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from shim.security.certs import make_certs
    d = tmp_path_factory.mktemp("java-stores")
    return {"trusted": make_certs(d / "trusted"), "other": make_certs(d / "other"), "dir": d}


def java_stores(certs: dict, fmt: str) -> tuple[str, str]:
    """keytool's key store of ``fmt`` (the broker's key, a password of its own, the CA-signed chain) and
    its trust store (the CA)."""
    d, pem = certs["dir"] / fmt, certs["trusted"]
    if d.exists():
        return str(d / "broker.ks"), str(d / "trust.ks")
    d.mkdir()
    p12 = d / "broker.p12"  # keytool imports a key from PKCS12 only; the certs' PEM becomes one first
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    p12.write_bytes(pkcs12.serialize_key_and_certificates(
        b"broker", serialization.load_pem_private_key(pem["broker-key.pem"].read_bytes(), None),
        x509.load_pem_x509_certificate(pem["broker-cert.pem"].read_bytes()),
        [x509.load_pem_x509_certificate(pem["ca.pem"].read_bytes())],
        serialization.BestAvailableEncryption(b"transfer")))
    keytool("-importkeystore", "-noprompt", "-srckeystore", str(p12), "-srcstoretype", "PKCS12", "-srcstorepass",
            "transfer", "-destkeystore", str(d / "broker.ks"), "-deststoretype", fmt, "-deststorepass", STORE_PW,
            "-destkeypass", KEY_PW, "-srcalias", "broker", "-destalias", "broker")
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(pem["ca.pem"]), "-keystore", str(d / "trust.ks"),
            "-storetype", fmt, "-storepass", STORE_PW)
    if fmt == "JCEKS":  # secret keys, as JCEKS stores often hold: the key store's opens with the key password
        add_secret_key(d / "broker.ks", "aes-secret", KEY_PW)
        add_secret_key(d / "trust.ks", "hmac-secret", "a-password-of-its-own", "HmacSHA256")
    return str(d / "broker.ks"), str(d / "trust.ks")


def add_secret_key(store, alias: str, password: str, algorithm: str = "AES") -> None:
    keytool("-genseckey", "-alias", alias, "-keyalg", algorithm, "-keysize", "128" if algorithm == "AES" else "256",
            "-keystore", str(store), "-storetype", "JCEKS", "-storepass", STORE_PW, "-keypass", password)


def config(keystore: str, truststore: str, kind: str, **kw) -> BrokerConfig:
    return BrokerConfig(**{"ssl_keystore_type": kind, "ssl_keystore_location": keystore,
                           "ssl_keystore_password": STORE_PW, "ssl_key_password": KEY_PW, "ssl_truststore_type": kind,
                           "ssl_truststore_location": truststore, "ssl_truststore_password": STORE_PW,
                           "ssl_client_auth": "required", **kw})


@pytest.mark.parametrize("fmt, kind", [("JKS", "JKS"), ("JKS", "PKCS12"), ("JKS", "JCEKS"), ("JCEKS", "JCEKS")])
def test_java_format_stores_serve_tls_and_trust_their_ca(certs, fmt, kind):
    """Java's JKS and PKCS12 types both read the JKS format; its JCEKS type reads JCEKS and JKS."""
    keystore, truststore = java_stores(certs, fmt)
    ks = key_store(config(keystore, truststore, kind))
    pem = certs["trusted"]
    assert ks.chain_pem == pem["broker-cert.pem"].read_text() + pem["ca.pem"].read_text()
    assert trusted_certificates(config(keystore, truststore, kind)) == pem["ca.pem"].read_text()
    ctx = server_context(config(keystore, truststore, kind))
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert [dict(x[0] for x in c["subject"])["commonName"] for c in ctx.get_ca_certs()] == ["kafka-shim test CA"]


def handshake(ctx: ssl.SSLContext, pem: dict) -> str:
    """A TLS 1.3 handshake in memory with the client certificate of ``pem``: 'ok' or the server's refusal."""
    client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    client.check_hostname, client.verify_mode = False, ssl.CERT_NONE
    client.load_cert_chain(pem["client-cert.pem"], pem["client-key.pem"])
    ends = [ssl.MemoryBIO() for _ in range(4)]
    c = client.wrap_bio(ends[0], ends[1], server_hostname="localhost")
    s = ctx.wrap_bio(ends[2], ends[3], server_side=True)
    done = {c: False, s: False}
    for _ in range(10):
        for side in (c, s):
            if not done[side]:
                try:
                    side.do_handshake()
                    done[side] = True
                except ssl.SSLWantReadError:
                    pass
                except ssl.SSLError as e:
                    if side is s:
                        return e.reason
                    raise
        ends[2].write(ends[1].read())
        ends[0].write(ends[3].read())
        if all(done.values()):
            return "ok"
    raise AssertionError("the handshake did not finish")


@pytest.mark.parametrize("fmt", ["JKS", "JCEKS"])
def test_a_client_certificate_of_another_ca_is_refused(certs, fmt):
    ctx = server_context(config(*java_stores(certs, fmt), fmt))
    assert handshake(ctx, certs["trusted"]) == "ok"
    assert handshake(ctx, certs["other"]) == "CERTIFICATE_VERIFY_FAILED"


def test_a_key_store_as_trust_store_trusts_its_own_certificate_not_its_chain(certs):
    """Java's TrustManagerFactory trusts a private-key entry's own certificate, not the CA above it:
    the CA's other certificates are refused."""
    keystore, _ = java_stores(certs, "JKS")
    ctx = server_context(config(keystore, keystore, "JKS"))
    assert ctx.cert_store_stats() == {"crl": 0, "x509_ca": 0, "x509": 1}  # the broker's own certificate
    assert trusted_certificates(config(keystore, keystore, "JKS")) == certs["trusted"]["broker-cert.pem"].read_text()
    assert handshake(ctx, certs["trusted"]) == "CERTIFICATE_VERIFY_FAILED"


def test_a_trust_store_password_is_optional_and_then_unchecked(certs):
    """Java loads a store without a password and skips its integrity check (Kafka passes none when
    ssl.truststore.password is unset)."""
    _, truststore = java_stores(certs, "JKS")
    plain = BrokerConfig(ssl_truststore_type="JKS", ssl_truststore_location=truststore)
    assert trusted_certificates(plain) == certs["trusted"]["ca.pem"].read_text()


@pytest.mark.parametrize("settings, message", [
    ({"ssl_keystore_password": "wrong"}, "Failed to load SSL keystore {ks} of type {fmt}: Keystore was tampered "
                                         "with, or password was incorrect"),
    ({"ssl_truststore_password": "wrong"}, "Failed to load SSL truststore {ts} of type {fmt}: Keystore was tampered "
                                           "with, or password was incorrect"),
    ({"ssl_key_password": "wrong"}, "Invalid SSL keystore {ks} of type {fmt}: Cannot recover key with "
                                    "ssl.key.password"),
    ({"ssl_key_password": ""}, "Invalid SSL keystore {ks} of type {fmt}: Cannot recover key"),  # the store's: not it
    ({"ssl_keystore_location": "{dir}/missing.jks"}, "Failed to load SSL keystore {dir}/missing.jks of type {fmt}: "),
    ({"ssl_keystore_type": "PEM"}, "SSL key store password cannot be specified with PEM format"),
])
@pytest.mark.parametrize("fmt", ["JKS", "JCEKS"])
def test_java_format_stores_refused_with_kafkas_messages(certs, fmt, settings, message):
    keystore, truststore = java_stores(certs, fmt)
    c = config(keystore, truststore, fmt).replace(**{k: v.format(dir=certs["dir"]) for k, v in settings.items()})
    with pytest.raises(StoreError) as refused:
        server_context(c)
    assert str(refused.value).startswith(message.format(ks=keystore, ts=truststore, fmt=fmt, dir=certs["dir"]))


def test_jceks_secret_keys_are_read_and_serve_nothing(certs):
    keystore, truststore = java_stores(certs, "JCEKS")
    store = jks.load(open(keystore, "rb").read(), STORE_PW)
    assert [s.alias for s in store.secrets] == ["aes-secret"] and [k.alias for k in store.keys] == ["broker"]
    assert [s.alias for s in jks.load(open(truststore, "rb").read(), STORE_PW).secrets] == ["hmac-secret"]
    assert handshake(server_context(config(keystore, truststore, "JCEKS")), certs["trusted"]) == "ok"


def test_a_secret_key_that_the_key_password_does_not_open_is_refused_as_java_refuses(certs, tmp_path):
    """Java's SunX509 KeyManagerFactory opens every key entry with the key password, a secret key's too,
    and fails (UnrecoverableKeyException) on one it cannot open."""
    keystore, truststore = java_stores(certs, "JCEKS")
    shutil.copy(keystore, tmp_path / "ks.jceks")
    add_secret_key(tmp_path / "ks.jceks", "other-secret", "not-the-key-password")
    with pytest.raises(StoreError, match="Invalid SSL keystore .* of type JCEKS: Cannot recover key"):
        server_context(config(str(tmp_path / "ks.jceks"), truststore, "JCEKS"))
    assert java_key_manager(tmp_path / "ks.jceks", "JCEKS", KEY_PW).startswith("refused "
                                                                                "java.security.UnrecoverableKeyException")
    assert java_key_manager(keystore, "JCEKS", KEY_PW) == "RSA=null EC=broker"


def test_a_jceks_store_is_not_read_as_type_jks(certs):
    keystore, truststore = java_stores(certs, "JCEKS")
    with pytest.raises(StoreError, match="of type JKS: Invalid keystore format"):
        server_context(config(keystore, truststore, "JKS"))


def test_a_tampered_store_is_refused(certs, tmp_path):
    keystore, truststore = java_stores(certs, "JKS")
    data = bytearray(open(truststore, "rb").read())
    data[len(data) // 2] ^= 1
    (tmp_path / "t.jks").write_bytes(bytes(data))
    with pytest.raises(StoreError, match="Keystore was tampered with, or password was incorrect"):
        trusted_certificates(config(keystore, str(tmp_path / "t.jks"), "JKS"))


@pytest.mark.parametrize("fmt", ["JKS", "JCEKS"])
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_store_read_without_its_password_is_refused_not_crashed(certs, fmt, data):
    """Without a password nothing checks the bytes: any cut or changed byte is a JavaStoreError or a
    store, never another exception."""
    keystore, _ = java_stores(certs, fmt)
    raw = bytearray(open(keystore, "rb").read())
    cut = data.draw(st.integers(0, len(raw)))
    for i in data.draw(st.lists(st.integers(0, len(raw) - 1), max_size=4)):
        raw[i] = data.draw(st.integers(0, 255))
    try:
        store = jks.load(bytes(raw[:cut]), None)
        for entry in store.keys if fmt == "JKS" else ():  # a JCEKS key's PBE rounds take a while
            jks.recover_key(entry, KEY_PW)
    except jks.JavaStoreError:
        pass


def test_a_key_with_the_store_password_needs_no_key_password(tmp_path):
    """keytool gives a key the store's password unless told otherwise; Kafka then needs no
    ssl.key.password (the store's opens the key)."""
    path = tmp_path / "kafka.keystore.jks"
    keytool("-genkeypair", "-alias", "broker", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost",
            "-validity", "2", "-keystore", str(path), "-storetype", "JKS", "-storepass", STORE_PW)
    ks = key_store(BrokerConfig(ssl_keystore_type="JKS", ssl_keystore_location=str(path),
                                ssl_keystore_password=STORE_PW))
    assert "BEGIN PRIVATE KEY" in ks.key_pem and ks.chain_pem.count("BEGIN CERTIFICATE") == 1


def test_without_cryptography_a_store_is_refused_with_the_install_command(certs, monkeypatch):
    keystore, truststore = java_stores(certs, "JKS")
    monkeypatch.setitem(__import__("sys").modules, "cryptography", None)  # `import cryptography` fails
    with pytest.raises(StoreError, match=f"Failed to load SSL keystore {keystore} of type JKS: reading a JKS store "
                                         f"needs the cryptography package: pip install 'kafka-shim\\[certs\\]'"):
        key_store(config(keystore, truststore, "JKS"))
