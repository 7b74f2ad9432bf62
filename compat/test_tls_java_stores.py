"""Every key and trust store type a Kafka broker takes, made as production makes them (the JDK's
keytool; the cryptography package for PKCS12 and PEM; PEM text inline too), serving real clients with
``ssl.client.auth=required``: kafka-clients 3.9.1 with JKS and PKCS12 key and trust stores of its own,
confluent-kafka with ``ssl.ca.location``/``ssl.certificate.location``, kafka-python and aiokafka
produce and consume; a client certificate signed by another CA fails the TLS handshake, in every
client, whatever the broker's trust store type.
"""

from __future__ import annotations

import shutil
import subprocess
import uuid
from pathlib import Path

import pytest

from compat.security_clients import CLIENTS, Security
from shim.broker import BrokerThread

pytestmark = pytest.mark.shim_only("starts kafka-shims with key and trust stores of their own")
pytest.importorskip("cryptography")

KEYTOOL = shutil.which("keytool")
STORE_PW, KEY_PW = "store-secret", "key-secret"
# the broker's store types: PEM (files, or inline text: ssl.keystore.key, ssl.keystore.certificate.chain,
# ssl.truststore.certificates) and PKCS12 made with cryptography, the others by keytool
STORE_KINDS = ["PEM", "PEM-inline", "PKCS12", "PKCS12-keytool", "JKS", "JCEKS"]


def _load(path: Path):
    from cryptography import x509
    from cryptography.hazmat.primitives import serialization
    data = path.read_bytes()
    if b"PRIVATE KEY" in data:
        return serialization.load_pem_private_key(data, None)
    return x509.load_pem_x509_certificate(data)


def keytool(*args: str) -> None:
    made = subprocess.run([KEYTOOL, *args], capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr


def key_store(out: Path, kind: str, pem: dict, who: str) -> str:
    """``who``'s key and chain (``broker`` or ``client`` of the certs ``pem``) as a store of ``kind``:
    PKCS12 written by cryptography, or keytool's import of that into JKS, JCEKS (the key with a
    password of its own; JCEKS with a secret key too) or PKCS12 (``PKCS12-keytool``: a PKCS12 key has the store's password)."""
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.serialization import pkcs12
    p12 = out / f"{who}.p12"
    p12.write_bytes(pkcs12.serialize_key_and_certificates(
        who.encode(), _load(pem[f"{who}-key.pem"]), _load(pem[f"{who}-cert.pem"]), [_load(pem["ca.pem"])],
        serialization.BestAvailableEncryption(STORE_PW.encode())))
    if kind == "PKCS12":
        return str(p12)
    fmt = kind.removesuffix("-keytool")
    store = out / f"{who}.{fmt.lower()}"
    store.unlink(missing_ok=True)
    keytool("-importkeystore", "-noprompt", "-srckeystore", str(p12), "-srcstoretype", "PKCS12", "-srcstorepass",
            STORE_PW, "-destkeystore", str(store), "-deststoretype", fmt, "-deststorepass", STORE_PW,
            *(["-destkeypass", KEY_PW] if fmt != "PKCS12" else []), "-srcalias", who, "-destalias", who)
    if fmt == "JCEKS":  # a secret key beside it, as JCEKS stores often hold: Java opens it with the key password
        keytool("-genseckey", "-alias", "secret", "-keyalg", "AES", "-keysize", "128", "-keystore", str(store),
                "-storetype", fmt, "-storepass", STORE_PW, "-keypass", KEY_PW)
    return str(store)


def key_password(kind: str) -> str:
    return KEY_PW if kind in ("JKS", "JCEKS") else STORE_PW


def trust_store(out: Path, kind: str, ca: Path) -> str:
    """A store whose one trusted entry is the CA ``ca``: cryptography's PKCS12 (with Java's
    trusted-key-usage attribute), or keytool's -importcert into a store of ``kind``."""
    if kind == "PKCS12":
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.serialization import pkcs12
        path = out / "trust.p12"
        path.write_bytes(pkcs12.serialize_java_truststore([pkcs12.PKCS12Certificate(_load(ca), b"ca")],
                                                          serialization.BestAvailableEncryption(STORE_PW.encode())))
        return str(path)
    fmt = kind.removesuffix("-keytool")
    path = out / f"trust.{fmt.lower()}"
    path.unlink(missing_ok=True)
    keytool("-importcert", "-noprompt", "-alias", "ca", "-file", str(ca), "-keystore", str(path), "-storetype", fmt,
            "-storepass", STORE_PW)
    return str(path)


def broker_settings(d: Path, kind: str, pem: dict) -> dict:
    if kind == "PEM":
        return {"ssl_keystore_type": "PEM", "ssl_keystore_location": str(pem["broker.pem"]),
                "ssl_truststore_type": "PEM", "ssl_truststore_location": str(pem["ca.pem"])}
    if kind == "PEM-inline":
        return {"ssl_keystore_type": "PEM", "ssl_keystore_key": pem["broker-key.pem"].read_text(),
                "ssl_keystore_certificate_chain": pem["broker-cert.pem"].read_text() + pem["ca.pem"].read_text(),
                "ssl_truststore_type": "PEM", "ssl_truststore_certificates": pem["ca.pem"].read_text()}
    fmt = kind.removesuffix("-keytool")
    return {"ssl_keystore_type": fmt, "ssl_keystore_location": key_store(d, kind, pem, "broker"),
            "ssl_keystore_password": STORE_PW, "ssl_key_password": key_password(kind), "ssl_truststore_type": fmt,
            "ssl_truststore_location": trust_store(d, kind, pem["ca.pem"]), "ssl_truststore_password": STORE_PW}


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    """Two CAs, each with a broker and a client certificate: the broker trusts ``trusted`` only."""
    if KEYTOOL is None:
        pytest.skip("keytool (a JDK) is not installed")
    from shim.security.certs import make_certs
    d = tmp_path_factory.mktemp("java-stores")
    return {"dir": d, "trusted": make_certs(d / "trusted"), "other": make_certs(d / "other", ca_cn="another CA", client_cn="intruder")}


@pytest.fixture(scope="module", params=STORE_KINDS)
def broker(request, certs):
    d = certs["dir"] / f"broker-{request.param}"
    d.mkdir()
    with BrokerThread(data_dir=d / "data", listeners="SSL://127.0.0.1:0", ssl_client_auth="required",
                      group_initial_rebalance_delay_ms=0,
                      **broker_settings(d, request.param, certs["trusted"])) as thread:
        thread.kind = request.param
        yield thread


def security(broker, certs, ca: str = "trusted") -> Security:
    """A client trusting the broker's CA, with the client certificate of CA ``ca``."""
    pem = certs[ca]
    return Security(broker.bootstrap("SSL"), "SSL", cafile=str(certs["trusted"]["ca.pem"]),
                    certfile=str(pem["client-cert.pem"]), keyfile=str(pem["client-key.pem"]))


def topic() -> str:
    return f"stores-{uuid.uuid4().hex[:10]}"


@pytest.mark.parametrize("kind", CLIENTS, ids=lambda k: k.name)
def test_python_clients_produce_and_consume(broker, certs, kind):
    c, t = kind(security(broker, certs)), topic()
    c.produce(t, [b"one", b"two"])
    assert c.consume(t, 2) == [b"one", b"two"]


# How each client reports the broker's unknown_ca alert: OpenSSL's words for it in librdkafka and
# kafka-python; aiokafka's connection reports only that it closed.
REFUSED = {"kafka-python": "unknown ca", "confluent-kafka": "unknown ca", "aiokafka": "closed"}


@pytest.mark.parametrize("kind", CLIENTS, ids=lambda k: k.name)
def test_a_certificate_of_another_ca_is_refused(broker, certs, kind):
    error = kind(security(broker, certs, "other")).auth_error()
    assert REFUSED[kind.name] in error.lower().replace("_", " "), error


def java_client_stores(certs, kind: str, ca: str = "trusted") -> dict:
    """kafka-clients' own key store (the client certificate of CA ``ca``) and trust store (the broker's
    CA), both of ``kind`` and made by keytool."""
    d = certs["dir"] / f"java-{kind}-{ca}"
    d.mkdir(exist_ok=True)
    fmt = kind.removesuffix("-keytool")
    return {"client.security.protocol": "SSL", "client.ssl.truststore.type": fmt,
            "client.ssl.truststore.location": trust_store(d, kind, certs["trusted"]["ca.pem"]),
            "client.ssl.truststore.password": STORE_PW, "client.ssl.keystore.type": fmt,
            "client.ssl.keystore.location": key_store(d, kind, certs[ca], "client"),
            "client.ssl.keystore.password": STORE_PW, "client.ssl.key.password": key_password(kind)}


def run_java(java_drivers, broker, stores: dict) -> dict:
    results = java_drivers.run("KafkaDriver", ["produce_consume.none"], broker.bootstrap("SSL"), timeout=180,
                               prefix=f"java-stores-{uuid.uuid4().hex[:6]}", parallel=1, timeout_s=60, **stores)
    return results["results"]["produce_consume.none"]


@pytest.mark.parametrize("kind", ["JKS", "PKCS12-keytool"])
def test_java_client_with_its_own_stores(broker, certs, java_drivers, kind):
    result = run_java(java_drivers, broker, java_client_stores(certs, kind))
    assert result["ok"], f"{result['error']}\n{result['trace']}"
    assert result["observed"]["offsets"] == [0, 1, 2, 3, 4]


def test_java_client_with_a_certificate_of_another_ca_is_refused(broker, certs, java_drivers):
    result = run_java(java_drivers, broker, java_client_stores(certs, "JKS", "other"))
    assert not result["ok"]
    assert "SslAuthenticationException" in result["error"] + result["trace"], result["error"]


@pytest.mark.parametrize("args, message", [
    (["--ssl-keystore-password", "not-it"], "Failed to load SSL keystore {ks} of type JKS: Keystore was tampered "
                                            "with, or password was incorrect"),
    (["--ssl-key-password", "not-it"], "Invalid SSL keystore {ks} of type JKS: Cannot recover key"),
    (["--ssl-truststore-password", "not-it"], "Failed to load SSL truststore {ts} of type JKS: Keystore was tampered "
                                              "with, or password was incorrect"),
    (["--ssl-truststore-location", "{d}/missing.jks"], "Failed to load SSL truststore {d}/missing.jks of type JKS: "),
    (["--ssl-keystore-type", "JCEKS", "--ssl-keystore-location", "{d}/trusted-p12"],
     "Failed to load SSL keystore {d}/trusted-p12 of type JCEKS: Invalid keystore format"),
    (["--ssl-truststore-type", "BKS"], "Failed to load SSL truststore {ts} of type BKS: kafka-shim reads PEM, "
                                       "PKCS12, JKS and JCEKS stores"),
])
def test_serve_refuses_to_start_with_a_store_it_cannot_read(certs, tmp_path, args, message):
    """As Kafka refuses to start: the message, exit status 2, no traceback."""
    import sys
    d = certs["dir"] / "serve"
    d.mkdir(exist_ok=True)
    settings = broker_settings(d, "JKS", certs["trusted"])
    (d / "trusted-p12").write_bytes(Path(key_store(d, "PKCS12", certs["trusted"], "broker")).read_bytes())
    flags = {f"--{k.replace('_', '-')}": v for k, v in settings.items()}
    for flag, value in zip(args[::2], args[1::2]):
        flags[flag] = value.format(d=d)
    proc = subprocess.run([str(Path(sys.executable).parent / "kafka-shim"), "serve", "--data-dir", str(tmp_path / "data"),
                           "--listeners", "SSL://127.0.0.1:0", "--ssl-client-auth", "required",
                           *(x for kv in flags.items() for x in kv)], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    expected = message.format(ks=settings["ssl_keystore_location"], ts=settings["ssl_truststore_location"], d=d)
    assert expected in proc.stderr, proc.stderr
