"""What a PKCS12 trust store trusts (shim.security.pkcs12), checked against Java itself: stores made
by keytool, OpenSSL and cryptography, with and without keytool's trusted-certificate mark, with a
private key (a key store named as the trust store), encrypted with AES or triple DES or not at all,
each read by Java's TrustManagerFactory and by kafka-shim, which must accept the same issuers.
A certificate Java does not trust lets no client in."""

from __future__ import annotations

import logging
import shutil
import subprocess
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from shim.config import BrokerConfig
from shim.security import pkcs12
from shim.security.stores import StoreError, trusted_certificates
from shim.security.tls import server_context
from tests.security.test_java_stores import handshake

pytest.importorskip("cryptography")
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.serialization import PrivateFormat  # noqa: E402
from cryptography.hazmat.primitives.serialization import pkcs12 as p12  # noqa: E402

KEYTOOL, OPENSSL = shutil.which("keytool"), shutil.which("openssl")
PW = "store-secret"

# Java's view of each store: the subjects its TrustManagerFactory accepts as issuers
JAVA_TRUST = """
import java.io.FileInputStream;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import javax.net.ssl.TrustManagerFactory;
import javax.net.ssl.X509TrustManager;

public class Trust {
    public static void main(String[] args) throws Exception {
        for (int i = 1; i < args.length; i++) {
            KeyStore store = KeyStore.getInstance("PKCS12");
            char[] password = args[i].contains("plain") ? null : args[0].toCharArray();  // a store without a MAC
            try (FileInputStream in = new FileInputStream(args[i])) { store.load(in, password); }
            TrustManagerFactory factory = TrustManagerFactory.getInstance("PKIX");
            factory.init(store);
            StringBuilder line = new StringBuilder();
            for (X509Certificate c : ((X509TrustManager) factory.getTrustManagers()[0]).getAcceptedIssuers())
                line.append(c.getSubjectX500Principal().getName()).append(';');
            System.out.println(line);
        }
    }
}
"""


def _run(*args: str) -> None:
    made = subprocess.run(args, capture_output=True, text=True, timeout=120)
    assert made.returncode == 0, made.stderr


@pytest.fixture(scope="module")
def certs(tmp_path_factory):
    from shim.security.certs import make_certs
    d = tmp_path_factory.mktemp("pkcs12-trust")
    return {"dir": d, **make_certs(d / "certs")}


def _objects(certs):
    load = x509.load_pem_x509_certificate
    return (serialization.load_pem_private_key(certs["broker-key.pem"].read_bytes(), None),
            load(certs["broker-cert.pem"].read_bytes()), load(certs["ca.pem"].read_bytes()))


def made_by_cryptography(certs) -> dict[str, bytes]:
    key, cert, ca = _objects(certs)
    aes = serialization.BestAvailableEncryption(PW.encode())
    des3 = PrivateFormat.PKCS12.encryption_builder().key_cert_algorithm(
        p12.PBES.PBESv1SHA1And3KeyTripleDESCBC).build(PW.encode())
    marked = [p12.PKCS12Certificate(ca, b"ca")]
    return {"java-truststore": p12.serialize_java_truststore(marked, aes),
            "java-truststore-3des": p12.serialize_java_truststore(marked, des3),
            "java-truststore-plain": p12.serialize_java_truststore(marked, serialization.NoEncryption()),
            "unmarked-ca": p12.serialize_key_and_certificates(None, None, None, [ca], aes),
            "named-unmarked-ca": p12.serialize_key_and_certificates(None, None, None, marked, aes),
            "key-store": p12.serialize_key_and_certificates(b"broker", key, cert, [ca], aes),
            "key-store-3des": p12.serialize_key_and_certificates(b"broker", key, cert, [ca], des3)}


def made_by_tools(certs) -> list[str]:
    d, made = certs["dir"], []
    if KEYTOOL:
        (d / "key.p12").write_bytes(made_by_cryptography(certs)["key-store"])
        for name, extra in (("keytool-trust", []), ("keytool-plain", [
                "-J-Dkeystore.pkcs12.certProtectionAlgorithm=NONE", "-J-Dkeystore.pkcs12.macAlgorithm=NONE"])):
            _run(KEYTOOL, "-importcert", "-noprompt", "-alias", "ca", "-file", str(certs["ca.pem"]), "-keystore",
                 str(d / f"{name}.p12"), "-storetype", "PKCS12", "-storepass", PW, *extra)
        _run(KEYTOOL, "-importkeystore", "-noprompt", "-srckeystore", str(d / "key.p12"), "-srcstoretype", "PKCS12",
             "-srcstorepass", PW, "-destkeystore", str(d / "keytool-key-and-ca.p12"), "-deststoretype", "PKCS12",
             "-deststorepass", PW)
        _run(KEYTOOL, "-importcert", "-noprompt", "-alias", "ca", "-file", str(certs["ca.pem"]), "-keystore",
             str(d / "keytool-key-and-ca.p12"), "-storepass", PW)
        # JDKs before 8u301 encrypted certificates with 40-bit RC2; keytool still can, asked for the legacy format
        _run(KEYTOOL, "-importcert", "-noprompt", "-alias", "ca", "-file", str(certs["ca.pem"]), "-keystore",
             str(d / "keytool-legacy-rc2.p12"), "-storetype", "PKCS12", "-storepass", PW, "-J-Dkeystore.pkcs12.legacy")
        made += ["keytool-trust", "keytool-plain", "keytool-key-and-ca", "keytool-legacy-rc2"]
    if OPENSSL:
        chain = ["-in", str(certs["broker-cert.pem"]), "-inkey", str(certs["broker-key.pem"]), "-certfile",
                 str(certs["ca.pem"])]
        for name, args in (("openssl-key", chain), ("openssl-nokeys", ["-nokeys", "-in", str(certs["ca.pem"])]),
                           ("openssl-key-3des", [*chain, "-certpbe", "PBE-SHA1-3DES", "-keypbe", "PBE-SHA1-3DES"]),
                           ("openssl-legacy-rc2", [*chain, "-legacy"]),  # OpenSSL 1.1's defaults: RC2-40
                           ("openssl-rc2-128", [*chain, "-legacy", "-certpbe", "PBE-SHA1-RC2-128"])):
            _run(OPENSSL, "pkcs12", "-export", *args, "-out", str(d / f"{name}.p12"), "-passout", f"pass:{PW}")
            made.append(name)
    return made


@pytest.fixture(scope="module")
def stores(certs) -> dict[str, Path]:
    d = certs["dir"]
    for name, data in made_by_cryptography(certs).items():
        (d / f"{name}.p12").write_bytes(data)
    names = [*made_by_cryptography(certs), *made_by_tools(certs)]
    return {name: d / f"{name}.p12" for name in names}


def subjects(der_certificates: list[bytes]) -> set[str]:
    return {x509.load_der_x509_certificate(c).subject.rfc4514_string() for c in der_certificates}


@pytest.mark.skipif(shutil.which("java") is None, reason="no JDK")
def test_the_issuers_java_trusts(stores, tmp_path):
    (tmp_path / "Trust.java").write_text(JAVA_TRUST)
    java = subprocess.run(["java", str(tmp_path / "Trust.java"), PW, *map(str, stores.values())],
                          capture_output=True, text=True, timeout=120)
    assert java.returncode == 0, java.stderr
    javas = {name: set(filter(None, line.split(";"))) for name, line in zip(stores, java.stdout.splitlines())}
    ours = {name: subjects(pkcs12.trusted_certificates(path.read_bytes(), None if "plain" in name else PW))
            for name, path in stores.items()}
    assert ours == javas
    ca, broker = "CN=kafka-shim test CA,OU=test,O=kafka-shim", "CN=localhost,OU=test,O=kafka-shim"
    assert javas["java-truststore"] == {ca} and javas["unmarked-ca"] == set() and javas["key-store"] == {broker}


def test_a_key_store_named_as_trust_store_lets_no_other_certificate_of_its_ca_in(certs, stores):
    config = BrokerConfig(ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_type="PKCS12",
                          ssl_truststore_location=str(stores["key-store"]), ssl_truststore_password=PW,
                          ssl_client_auth="required")
    assert handshake(server_context(config), certs) == "CERTIFICATE_VERIFY_FAILED"
    marked = config.replace(ssl_truststore_location=str(stores["java-truststore"]))
    assert handshake(server_context(marked), certs) == "ok"


def test_a_store_of_unmarked_certificates_trusts_none_and_says_so(certs, stores, caplog):
    """As Java: the broker starts, and no client certificate passes."""
    config = BrokerConfig(ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_type="PKCS12",
                          ssl_truststore_location=str(stores["unmarked-ca"]), ssl_truststore_password=PW,
                          ssl_client_auth="required")
    with caplog.at_level(logging.WARNING, logger="shim.security.stores"):
        assert trusted_certificates(config) == ""
        ctx = server_context(config)
    assert "holds no certificate Java trusts" in caplog.text
    assert handshake(ctx, certs) == "CERTIFICATE_VERIFY_FAILED"


@pytest.mark.skipif(KEYTOOL is None, reason="keytool (a JDK) is not installed")
def test_a_store_with_40_bit_rc2_certificates_trusts_what_java_trusts(certs, stores):
    """keytool's legacy PKCS12 (JDKs before 8u301): certificates under pbeWithSHAAnd40BitRC2-CBC."""
    data = stores["keytool-legacy-rc2"].read_bytes()
    assert b"\x06\x0a\x2a\x86\x48\x86\xf7\x0d\x01\x0c\x01\x06" in data  # the RC2-40 OID: legacy indeed
    config = BrokerConfig(ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_type="PKCS12",
                          ssl_truststore_location=str(stores["keytool-legacy-rc2"]), ssl_truststore_password=PW,
                          ssl_client_auth="required")
    assert trusted_certificates(config) == certs["ca.pem"].read_text()
    assert handshake(server_context(config), certs) == "ok"
    with pytest.raises(pkcs12.Pkcs12Error, match="do not decrypt with the password"):  # RC2's padding fails
        pkcs12.trusted_certificates(data, "not-the-password")


@pytest.mark.skipif(KEYTOOL is None, reason="keytool (a JDK) is not installed")
def test_without_pycryptodome_an_rc2_store_is_refused_naming_the_cipher_and_the_rewrite(certs, stores, monkeypatch):
    for module in ("Crypto", "Crypto.Cipher"):  # `from Crypto.Cipher import ARC2` fails
        monkeypatch.setitem(__import__("sys").modules, module, None)
    path = stores["keytool-legacy-rc2"]
    config = BrokerConfig(ssl_truststore_type="PKCS12", ssl_truststore_location=str(path), ssl_truststore_password=PW)
    with pytest.raises(StoreError, match=f"Failed to load SSL truststore {path} of type PKCS12: its certificates are "
                                         f"encrypted with 40-bit RC2 \\(pbeWithSHAAnd40BitRC2-CBC\\), which needs the "
                                         f"pycryptodome package: .* keytool -importkeystore .* openssl pkcs12 -legacy"):
        trusted_certificates(config)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_damaged_store_is_a_pkcs12_error_and_nothing_else(stores, data):
    name = data.draw(st.sampled_from(["java-truststore-plain", "java-truststore-3des", "key-store-3des"]))
    raw = bytearray(stores[name].read_bytes())
    for i in data.draw(st.lists(st.integers(0, len(raw) - 1), min_size=1, max_size=4)):
        raw[i] = data.draw(st.integers(0, 255))
    damaged = bytes(raw[:data.draw(st.integers(1, len(raw)))])
    for read in (pkcs12.trusted_certificates, pkcs12.key_entries):  # the key store's keys are read too
        try:
            read(damaged, PW)
        except pkcs12.Pkcs12Error:
            pass
