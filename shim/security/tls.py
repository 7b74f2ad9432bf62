"""TLS for SSL and SASL_SSL listeners (stdlib ``ssl``), with Kafka's PEM settings, and the principal
of a client certificate as Kafka's default ``ssl.principal.mapping.rules`` names it.

Kafka 3.9 takes PEM either as files (``ssl.keystore.type=PEM``: ``ssl.keystore.location`` is one file
with the private key and the certificate chain; ``ssl.truststore.type=PEM``: ``ssl.truststore.location``
holds the CA certificates) or inline (``ssl.keystore.key`` + ``ssl.keystore.certificate.chain``,
``ssl.truststore.certificates``). JKS and PKCS12 stores are not read: convert them to PEM.
"""

from __future__ import annotations

import os
import ssl
import tempfile

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}


def server_context(config) -> ssl.SSLContext:
    for kind in (config.ssl_keystore_type, config.ssl_truststore_type):
        if kind.upper() != "PEM":
            raise ValueError(f"only PEM key and trust stores are read (ssl.keystore.type/ssl.truststore.type), not {kind}")
    if config.ssl_client_auth not in CLIENT_AUTH:
        raise ValueError(f"ssl.client.auth is one of {', '.join(CLIENT_AUTH)}, not {config.ssl_client_auth!r}")
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2  # Kafka: ssl.enabled.protocols TLSv1.2,TLSv1.3
    password = config.ssl_key_password or None
    if config.ssl_keystore_location:
        ctx.load_cert_chain(config.ssl_keystore_location, password=password)
    elif config.ssl_keystore_key and config.ssl_keystore_certificate_chain:
        _load_inline_chain(ctx, config.ssl_keystore_certificate_chain, config.ssl_keystore_key, password)
    else:
        raise ValueError("an SSL or SASL_SSL listener needs ssl.keystore.location (a PEM file with the key and "
                         "certificate chain) or ssl.keystore.key with ssl.keystore.certificate.chain")
    if config.ssl_truststore_location:
        ctx.load_verify_locations(cafile=config.ssl_truststore_location)
    elif config.ssl_truststore_certificates:
        ctx.load_verify_locations(cadata=config.ssl_truststore_certificates)
    elif config.ssl_client_auth != "none":
        raise ValueError("ssl.client.auth needs the CA certificates: ssl.truststore.location or ssl.truststore.certificates")
    ctx.verify_mode = CLIENT_AUTH[config.ssl_client_auth]
    return ctx


def _load_inline_chain(ctx: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="kafka-shim-tls-") as d:  # the ssl module reads files only
        path = os.path.join(d, "keystore.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.strip() + "\n" + chain.strip() + "\n")
        ctx.load_cert_chain(path, password=password)


# X500Principal.getName() (RFC 2253) names these attributes by keyword; others by OID
_KEYWORDS = {"commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
_OIDS = {"emailAddress": ("1.2.840.113549.1.9.1", 0x16), "serialNumber": ("2.5.4.5", 0x13),
         "title": ("2.5.4.12", 0x0C), "givenName": ("2.5.4.42", 0x0C), "surname": ("2.5.4.4", 0x0C)}


def principal_of(peercert: dict | None) -> str:
    """``User:CN=...,OU=...`` (the full distinguished name, most specific first), or ANONYMOUS."""
    if not peercert or not peercert.get("subject"):
        return "User:ANONYMOUS"
    rdns = []
    for rdn in reversed(peercert["subject"]):
        rdns.append("+".join(_attribute(name, value) for name, value in rdn))
    return "User:" + ",".join(rdns)


def _attribute(name: str, value: str) -> str:
    if name in _KEYWORDS:
        return f"{_KEYWORDS[name]}={_escape(value)}"
    oid, tag = _OIDS.get(name, (name, 0x0C))
    raw = value.encode()
    return f"{oid}=#{tag:02x}{_der_length(len(raw))}{raw.hex()}"


def _der_length(n: int) -> str:
    if n < 0x80:
        return f"{n:02x}"
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return f"{0x80 | len(body):02x}{body.hex()}"


def _escape(value: str) -> str:
    out = "".join("\\" + c if c in ',+"\\<>;' else c for c in value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out
