"""``kafka-shim certs --out DIR``: a throwaway CA with a broker and a client certificate, as PEM.

For development and tests only (keys are unencrypted, the CA key sits beside them). Needs the
``cryptography`` package (the ``certs`` extra). Files written:
``ca.pem`` (the CA certificate: the clients' ssl.ca.location / truststore),
``broker.pem`` (broker key + certificate chain: ssl.keystore.location), ``broker-key.pem`` and
``broker-cert.pem`` separately, ``client-key.pem`` and ``client-cert.pem`` (mutual TLS), ``ca-key.pem``.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
from pathlib import Path


def _imports():
    try:
        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
    except ImportError:
        raise SystemExit("kafka-shim certs needs the cryptography package: pip install 'kafka-shim[certs]'") from None
    return x509, hashes, serialization, ec, ExtendedKeyUsageOID, NameOID


def make_certs(out: Path, hosts: tuple[str, ...] = ("localhost", "127.0.0.1", "::1"),
               client_cn: str = "client", days: int = 365, ca_cn: str = "kafka-shim test CA") -> dict[str, Path]:
    x509, hashes, serialization, ec, eku, NameOID = _imports()
    out.mkdir(parents=True, exist_ok=True)
    now = datetime.datetime.now(datetime.timezone.utc)

    def name(cn: str):
        return x509.Name([x509.NameAttribute(NameOID.ORGANIZATION_NAME, "kafka-shim"),
                          x509.NameAttribute(NameOID.ORGANIZATIONAL_UNIT_NAME, "test"),
                          x509.NameAttribute(NameOID.COMMON_NAME, cn)])

    def cert(subject, key, issuer, issuer_key, ca: bool, usage=None, sans=()):
        b = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer).public_key(key.public_key())
             .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
             .not_valid_after(now + datetime.timedelta(days=days))
             .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True))
        if usage:
            b = b.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
        if sans:
            b = b.add_extension(x509.SubjectAlternativeName(list(sans)), critical=False)
        return b.sign(issuer_key, hashes.SHA256())

    def san(host: str):
        try:
            return x509.IPAddress(ipaddress.ip_address(host))
        except ValueError:
            return x509.DNSName(host)

    ca_key = ec.generate_private_key(ec.SECP256R1())
    ca = cert(name(ca_cn), ca_key, name(ca_cn), ca_key, ca=True)
    broker_key = ec.generate_private_key(ec.SECP256R1())
    broker = cert(name(hosts[0]), broker_key, ca.subject, ca_key, False, eku.SERVER_AUTH, [san(h) for h in hosts])
    client_key = ec.generate_private_key(ec.SECP256R1())
    client = cert(name(client_cn), client_key, ca.subject, ca_key, False, eku.CLIENT_AUTH)

    key_pem = lambda k: k.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,  # noqa: E731
                                        serialization.NoEncryption())
    cert_pem = lambda c: c.public_bytes(serialization.Encoding.PEM)  # noqa: E731
    return _write(out, {"ca.pem": cert_pem(ca), "ca-key.pem": key_pem(ca_key),
                        "broker.pem": key_pem(broker_key) + cert_pem(broker) + cert_pem(ca),
                        "broker-key.pem": key_pem(broker_key), "broker-cert.pem": cert_pem(broker),
                        "client-key.pem": key_pem(client_key), "client-cert.pem": cert_pem(client)})


def _write(out: Path, files: dict[str, bytes]) -> dict[str, Path]:
    paths = {}
    for file_name, data in files.items():
        path = out / file_name
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)  # private keys: the owner's only
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        paths[file_name] = path
    return paths
