"""Kafka's key and trust stores (shim.security.stores) and ssl.principal.mapping.rules
(shim.security.principal), without clients: what is read, and Kafka's messages for what is refused.
The clients' side is compat/test_tls_stores.py."""

from __future__ import annotations

import shutil
import ssl
import subprocess

import pytest

from shim.config import BrokerConfig
from shim.security.principal import SslPrincipalMapper, distinguished_name
from shim.security.stores import StoreError, key_store, trusted_certificates
from shim.security.tls import server_context

pytest.importorskip("cryptography")
from cryptography import x509  # noqa: E402
from cryptography.hazmat.primitives import serialization  # noqa: E402
from cryptography.hazmat.primitives.serialization import pkcs12  # noqa: E402

KEYTOOL = shutil.which("keytool")


def p12_files(certs: dict, out, password: bytes = b"store-pw") -> tuple[str, str]:
    """The broker's key store and a trust store holding the CA, as PKCS12 (what keytool writes by default)."""
    key = serialization.load_pem_private_key(certs["broker-key.pem"].read_bytes(), None)
    cert = x509.load_pem_x509_certificate(certs["broker-cert.pem"].read_bytes())
    ca = x509.load_pem_x509_certificate(certs["ca.pem"].read_bytes())
    enc = serialization.BestAvailableEncryption(password) if password else serialization.NoEncryption()
    keystore, truststore = out / "broker.p12", out / "trust.p12"
    keystore.write_bytes(pkcs12.serialize_key_and_certificates(b"broker", key, cert, [ca], enc))
    truststore.write_bytes(pkcs12.serialize_java_truststore([pkcs12.PKCS12Certificate(ca, b"ca")], enc))
    return str(keystore), str(truststore)


@pytest.fixture
def certs(tmp_path):
    from shim.security.certs import make_certs
    return make_certs(tmp_path / "certs")


def stores(keystore: str, truststore: str, kind: str = "PKCS12", **kw) -> BrokerConfig:
    return BrokerConfig(ssl_keystore_type=kind, ssl_keystore_location=keystore, ssl_keystore_password="store-pw",
                        ssl_truststore_type=kind, ssl_truststore_location=truststore, ssl_client_auth="required",
                        **{"ssl_truststore_password": "store-pw", **kw})


@pytest.mark.parametrize("kind", ["PKCS12", "JKS", "pkcs12"])
def test_pkcs12_stores_serve_tls_and_check_client_certificates(certs, tmp_path, kind):
    """A JKS-typed store in the PKCS12 format is read as Java's dual-format JKS key store reads it."""
    keystore, truststore = p12_files(certs, tmp_path)
    config = stores(keystore, truststore, kind)
    assert "BEGIN PRIVATE KEY" in key_store(config).key_pem
    assert trusted_certificates(config) == certs["ca.pem"].read_text()
    ctx = server_context(config)
    server_context(config.replace(ssl_key_password="store-pw"))  # the store's password, as keytool gives the key
    assert ctx.verify_mode == ssl.CERT_REQUIRED
    assert [c["subject"] for c in ctx.get_ca_certs()] == [((("organizationName", "kafka-shim"),),
                                                          (("organizationalUnitName", "test"),),
                                                          (("commonName", "kafka-shim test CA"),))]


def test_a_trust_store_password_is_optional(certs, tmp_path):
    _, truststore = p12_files(certs, tmp_path, password=b"")
    config = BrokerConfig(ssl_truststore_type="PKCS12", ssl_truststore_location=truststore)
    assert trusted_certificates(config) == certs["ca.pem"].read_text()


@pytest.mark.parametrize("settings, message", [
    ({"ssl_keystore_password": "wrong"}, "Failed to load SSL keystore {ks} of type PKCS12: keystore password was "
                                         "incorrect"),
    ({"ssl_keystore_password": ""}, "SSL key store is specified, but key store password is not specified."),
    ({"ssl_key_password": "other"}, "Invalid SSL keystore {ks}: its key cannot be recovered with ssl.key.password"),
    ({"ssl_keystore_location": ""}, "SSL key store is not specified, but key store password is specified."),
    ({"ssl_keystore_location": "{tmp}/missing.p12"}, "Failed to load SSL keystore {tmp}/missing.p12 of type PKCS12: "),
    ({"ssl_keystore_location": "{tmp}/certs/ca.pem"}, "Failed to load SSL keystore {tmp}/certs/ca.pem of type PKCS12: "),
    ({"ssl_keystore_type": "PEM"}, "SSL key store password cannot be specified with PEM format, only key password may "
                                   "be specified."),
    ({"ssl_keystore_key": "k", "ssl_keystore_certificate_chain": "c", "ssl_keystore_location": ""},
     "SSL private key can be specified only for PEM, but key store type is PKCS12."),
    ({"ssl_keystore_certificate_chain": "c"}, "SSL certificate chain is specified, but private key is not specified"),
    ({"ssl_keystore_type": "BKS"}, "Failed to load SSL keystore {ks} of type BKS: kafka-shim reads PEM, PKCS12, JKS "
                                   "and JCEKS stores"),
    ({"ssl_keystore_type": "JCEKS"}, "Failed to load SSL keystore {ks} of type JCEKS: Invalid keystore format"),
    ({"ssl_truststore_certificates": "c"}, "SSL trust store certs can be specified only for PEM, but trust store type "
                                           "is PKCS12."),
    ({"ssl_truststore_type": "PEM"}, "SSL trust store password cannot be specified for PEM format."),
    ({"ssl_truststore_location": ""}, "SSL trust store is not specified, but trust store password is specified."),
    ({"ssl_truststore_password": "wrong"}, "Failed to load SSL truststore {ts} of type PKCS12: keystore password "
                                           "was incorrect"),
    ({"ssl_truststore_password": ""}, "Failed to load SSL truststore {ts} of type PKCS12: it is encrypted and no "
                                      "ssl.truststore.password is set"),
])
def test_stores_refused_with_kafkas_messages(certs, tmp_path, settings, message):
    keystore, truststore = p12_files(certs, tmp_path)
    config = stores(keystore, truststore)
    config = config.replace(**{k: v.format(tmp=tmp_path) for k, v in settings.items()})
    with pytest.raises(StoreError) as refused:
        server_context(config)
    assert str(refused.value).startswith(message.format(ks=keystore, ts=truststore, tmp=tmp_path))


@pytest.mark.skipif(KEYTOOL is None, reason="keytool (a JDK) is not installed")
def test_keytools_default_store_is_read_as_type_jks(certs, tmp_path):
    """keytool writes PKCS12 unless told otherwise, whatever the file is called: Kafka reads it with
    ssl.truststore.type=JKS (Java's default keystore type is dual-format), and so does kafka-shim."""
    path = tmp_path / "kafka.truststore.jks"
    made = subprocess.run([KEYTOOL, "-importcert", "-noprompt", "-alias", "ca", "-file", str(certs["ca.pem"]),
                           "-keystore", str(path), "-storepass", "store-pw"], capture_output=True, text=True,
                          timeout=60)
    assert made.returncode == 0, made.stderr
    config = BrokerConfig(ssl_truststore_type="JKS", ssl_truststore_location=str(path),
                          ssl_truststore_password="store-pw")
    assert trusted_certificates(config) == certs["ca.pem"].read_text()


# -- ssl.principal.mapping.rules (the cases of Kafka's SslPrincipalMapperTest) ---------------------

def test_rules_map_in_order_with_case_flags():
    mapper = SslPrincipalMapper(", ".join([
        "RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L", "RULE:^CN=(.*?),OU=(.*?),O=(.*?),L=(.*?),ST=(.*?),C=(.*?)$/$1@$2/L",
        "RULE:^cn=(.*?),ou=(.*?),dc=(.*?),dc=(.*?)$/$1@$2/U", "RULE:^.*[Cc][Nn]=([a-zA-Z0-9.]*).*$/$1/U", "DEFAULT"]))
    assert mapper.name("CN=Duke,OU=ServiceUsers,O=Org,C=US") == "duke"
    assert mapper.name("CN=Duke,OU=SME,O=mycp,L=Fulton,ST=MD,C=US") == "duke@sme"
    assert mapper.name("cn=duke,ou=sme,dc=mycp,dc=com") == "DUKE@SME"
    assert mapper.name("cN=duke,OU=JavaSoft,O=Sun Microsystems") == "DUKE"
    assert mapper.name("OU=JavaSoft,O=Sun Microsystems,C=US") == "OU=JavaSoft,O=Sun Microsystems,C=US"
    assert SslPrincipalMapper(r"RULE:^CN=((\\, *|\w)+)(,.*|$)/$1/,DEFAULT").name(
        r"CN=Tkac\, Adam,OU=ITZ,DC=geodis,DC=cz") == r"Tkac\, Adam"


def test_replacement_references_as_java_reads_them():
    # $N past the last group is literal text ($12 with one group is group 1 then "2"); \ escapes
    assert SslPrincipalMapper(r"RULE:^CN=(\w+).*$/$1-$12-$3-\$1/").name("CN=ab,O=x") == "ab-ab2-$3-$1"
    assert SslPrincipalMapper(r"RULE:^CN=(?<user>\w+).*$/$1/U").name("CN=ab,O=x") == "AB"


def test_no_matching_rule():
    with pytest.raises(ValueError, match=r"No rules apply to CN=x, rules \[RULE:\^O=\(\.\*\)\$/\$1/L\]"):
        SslPrincipalMapper("RULE:^O=(.*)$/$1/L").name("CN=x")
    assert SslPrincipalMapper("").rules == []


@pytest.mark.parametrize("rules, expected", [
    ("", "[]"), ("DEFAULT", "[DEFAULT]"), ("RULE://", "[RULE:/]"), ("RULE:/.*/", "[RULE:/.*]"),
    ("RULE:/.*/L", "[RULE:/.*/L]"), ("  RULE:// ,  DEFAULT  ", "[RULE:/, DEFAULT]"),
    ("  RULE:   /     / ,  DEFAULT  ", "[RULE:   /     , DEFAULT]"),
    ("  RULE:([A-Z]*)/$1/U   ,RULE:([a-z]+)/$1/,   DEFAULT  ", "[RULE:([A-Z]*)/$1/U, RULE:([a-z]+)/$1, DEFAULT]"),
    (",   , , ,      , , ,   ", "[]"), (",,RULE://,,,DEFAULT,,", "[RULE:/, DEFAULT]"),
    (r"RULE:\/\\\(\)\n\t/\/\//", r"[RULE:\/\\\(\)\n\t/\/\/]"),
    (r"RULE:\**\/+/*/L,RULE:\/*\**/**/", r"[RULE:\**\/+/*/L, RULE:\/*\**/**]"),
    (r"RULE:,RULE:,/,RULE:,\//U,RULE:,/RULE:,/,RULE:,RULE:,/L,RULE:,/L,RULE:, DEFAULT, /DEFAULT/,DEFAULT",
     r"[RULE:,RULE:,/,RULE:,\//U, RULE:,/RULE:,, RULE:,RULE:,/L,RULE:,/L, RULE:, DEFAULT, /DEFAULT, DEFAULT]"),
])
def test_rules_split_as_kafka_splits_them(rules, expected):
    assert "[" + ", ".join(map(repr, SslPrincipalMapper(rules).rules)) + "]" == expected


@pytest.mark.parametrize("rules, unmatched", [
    ("default", "default"), ("DEFAUL", "DEFAUL"), ("DEFAULT/L", "/L"), ("DEFAULT/U", "/U"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L/U", "/U"),
    ("rule:^CN=(.*?),OU=ServiceUsers.*$/$1/", "rule:^CN=(.*?)"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/L", "RULE:^CN=(.*?)"),
    ("RULE:^CN=(.*?),OU=ServiceUsers.*$/LU", "RULE:^CN=(.*?)"),
])
def test_malformed_rules_are_refused(rules, unmatched):
    with pytest.raises(ValueError, match="^Invalid rule: `.*`, unmatched substring: `" + __import__("re").escape(unmatched)):
        SslPrincipalMapper(rules)


def test_a_malformed_rule_refuses_the_start(tmp_path, certs):
    from shim.broker import BrokerThread
    thread = BrokerThread(data_dir=tmp_path / "d", listeners="SSL://127.0.0.1:0",
                          ssl_keystore_location=str(certs["broker.pem"]), ssl_principal_mapping_rules="DEFAULT/L")
    with pytest.raises(ValueError, match="Invalid rule: `DEFAULT/L`"):
        thread.start()
    thread.stop()


def test_distinguished_name_escapes_as_x500principal_does():
    subject = ((("countryName", "US"),), (("organizationName", "Acme, Inc."),),
               (("organizationalUnitName", "a=b#c"), ("userId", "u1")), (("commonName", "  #lead\r "),),
               (("emailAddress", "a@b.c"),))
    assert distinguished_name(subject) == (
        "1.2.840.113549.1.9.1=#16056140622e63,CN=\\ \\ \\#lead\\\r\\ ,OU=a\\=b\\#c+UID=u1,O=Acme\\, Inc.,C=US")


JAVA_DN = """
import java.io.FileInputStream;
import java.security.cert.CertificateFactory;
import java.security.cert.X509Certificate;
public class DN {
    public static void main(String[] paths) throws Exception {
        for (String path : paths) {
            X509Certificate cert = (X509Certificate) CertificateFactory.getInstance("X.509")
                .generateCertificate(new FileInputStream(path));
            System.out.print(cert.getSubjectX500Principal().getName() + "\\u0000");
        }
    }
}
"""


@pytest.mark.skipif(shutil.which("java") is None, reason="java (JDK 11+) is not installed")
def test_distinguished_names_match_javas_x500principal(tmp_path):
    """Certificates with awkward subjects: what kafka-shim names them (from the ssl module's view of
    the certificate) is what Java's X500Principal.getName() says, which Kafka's mapping rules read."""
    import datetime

    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID as N

    a, rdn = x509.NameAttribute, x509.RelativeDistinguishedName
    subjects = [
        [a(N.COUNTRY_NAME, "US"), a(N.ORGANIZATION_NAME, "Acme, Inc."), a(N.ORGANIZATIONAL_UNIT_NAME, 'a=b#c;<>"+\\'),
         a(N.COMMON_NAME, "  #lead\r "), a(N.EMAIL_ADDRESS, "a@b.c")],
        [a(N.DOMAIN_COMPONENT, "com"), a(N.USER_ID, "u1"), a(N.SERIAL_NUMBER, "123"), a(N.TITLE, "Dr"),
         a(N.GIVEN_NAME, "Jo"), a(N.SURNAME, "Ng"), a(N.STREET_ADDRESS, "1 Main St"), a(N.LOCALITY_NAME, "Zürich"),
         a(N.STATE_OR_PROVINCE_NAME, "ZH"), a(N.COMMON_NAME, "   ")],
        [rdn([a(N.ORGANIZATIONAL_UNIT_NAME, "eng"), a(N.USER_ID, "u1")]), rdn([a(N.COMMON_NAME, "client")])],
        [a(N.JURISDICTION_COUNTRY_NAME, "DE"), a(N.ORGANIZATION_IDENTIFIER, "VATDE-123"), a(N.DN_QUALIFIER, "q1"),
         a(N.BUSINESS_CATEGORY, "Private Organization"), a(N.PSEUDONYM, "px"), a(x509.ObjectIdentifier("1.2.3.4"), "x"),
         a(N.DOMAIN_COMPONENT, "a,b"), a(N.COMMON_NAME, "svc")],
    ]
    key = ec.generate_private_key(ec.SECP256R1())
    now = datetime.datetime.now(datetime.timezone.utc)
    paths, ours = [], []
    for i, attributes in enumerate(subjects):
        name = x509.Name(attributes)
        cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                .serial_number(1).not_valid_before(now).not_valid_after(now + datetime.timedelta(days=1))
                .sign(key, hashes.SHA256()))
        path = tmp_path / f"c{i}.pem"
        path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
        paths.append(str(path))
        ours.append(distinguished_name(ssl._ssl._test_decode_cert(str(path))["subject"]))
    (tmp_path / "DN.java").write_text(JAVA_DN)
    java = subprocess.run(["java", str(tmp_path / "DN.java"), *paths], capture_output=True, timeout=120)
    assert java.returncode == 0, java.stderr
    assert java.stdout.decode().split("\0")[:-1] == ours


def test_without_a_type_a_store_is_kafkas_default_jks_and_pem_text_is_pem(certs, tmp_path):
    """Kafka's ssl.keystore.type and ssl.truststore.type default to JKS: a server.properties that
    names none reads its (PKCS12-format) stores; PEM files and inline PEM need no type either."""
    from shim.configs.properties import config_from_properties, static_properties
    keystore, truststore = p12_files(certs, tmp_path)
    props = {"ssl.keystore.location": keystore, "ssl.keystore.password": "store-pw",
             "ssl.truststore.location": truststore, "ssl.truststore.password": "store-pw"}
    config = config_from_properties(props)
    assert "ssl.keystore.type" not in static_properties(config)  # described as Kafka's default
    server_context(config)
    config = config.replace(ssl_keystore_password="wrong")
    with pytest.raises(StoreError, match=f"Failed to load SSL keystore {keystore} of type JKS: keystore password"):
        server_context(config)
    pem = BrokerConfig(ssl_keystore_location=str(certs["broker.pem"]), ssl_truststore_location=str(certs["ca.pem"]))
    assert key_store(pem).location == str(certs["broker.pem"])
    assert trusted_certificates(pem) == certs["ca.pem"].read_text()


def test_only_kafkas_default_principal_builder_is_served():
    from shim.configs.properties import config_from_properties
    default = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"
    assert config_from_properties({"principal.builder.class": default}).extra["principal.builder.class"] == default
    with pytest.raises(ValueError, match=f"principal.builder.class: only {default} is served, not 'com.acme.Builder'"):
        config_from_properties({"principal.builder.class": "com.acme.Builder"})
