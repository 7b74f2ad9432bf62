"""Kafka's key and trust stores (DefaultSslEngineFactory's rules) read into PEM for the stdlib ``ssl`` module.

- ``PEM``: ``ssl.keystore.location`` is one file with the private key and the certificate chain,
  ``ssl.truststore.location`` the CA certificates; or inline: ``ssl.keystore.key`` with
  ``ssl.keystore.certificate.chain``, ``ssl.truststore.certificates``. No store password.
- ``PKCS12`` (read with the ``cryptography`` package): a store password is needed for a key store
  and optional for a trust store, as in Kafka. The key store's private key, its certificate and the
  chain serve the listener.
- ``JKS``, Kafka's default type, ``JCEKS``: Java's own formats (shim.security.jks). As in Java, each
  of the types ``JKS`` and ``PKCS12`` reads both the JKS and the PKCS12 format (keytool has written PKCS12
  by default since JDK 9, whatever the file is called), and ``JCEKS`` reads JCEKS and JKS. A JKS key
  may have a password of its own (``ssl.key.password``); a PKCS12 key has the store's.
- Trust: every certificate of a PEM trust store is a trusted CA; of a PKCS12, JKS or JCEKS store,
  as Java's TrustManagerFactory reads it, the trusted-certificate entries (in PKCS12, the certificates
  keytool marks trusted: shim.security.pkcs12) and each private-key entry's own certificate.
- No type given: ``JKS``, as in Kafka, for a store file; ``PEM`` for a file of PEM text or inline PEM
  (where Kafka would want ``PEM`` named).

A store that cannot be read refuses the broker's start with Kafka's message.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from . import jks, keychoice, pkcs12

log = logging.getLogger(__name__)

PEM = "PEM"
STORE_TYPES = ("PKCS12", "JKS", "JCEKS")


class StoreError(ValueError):
    pass


@dataclass(frozen=True)
class KeyStore:
    key_pem: str
    chain_pem: str
    password: str | None  # of an encrypted PEM key
    location: str | None = None  # a PEM file the ssl module reads itself
    more: tuple[tuple[str, str], ...] = ()  # (key, chain) of the store's other key types (shim.security.keychoice)


def key_store(config) -> KeyStore | None:
    """The broker's key and certificate chain (None: none configured), or StoreError."""
    path = config.ssl_keystore_location or None
    password, key_password = config.ssl_keystore_password or None, config.ssl_key_password or None
    key, chain = config.ssl_keystore_key or None, config.ssl_keystore_certificate_chain or None
    kind = _kind(config.ssl_keystore_type, path, key is not None or chain is not None)
    if key is not None:
        if kind != PEM:
            raise StoreError(f"SSL private key can be specified only for PEM, but key store type is {kind}.")
        if chain is None:
            raise StoreError("SSL private key is specified, but certificate chain is not specified.")
        if path is not None:
            raise StoreError("Both SSL key store location and separate private key are specified.")
        _no_password_for_pem(password)
        return KeyStore(key, chain, key_password)
    if chain is not None:
        raise StoreError("SSL certificate chain is specified, but private key is not specified")
    if kind == PEM and path is not None:
        _no_password_for_pem(password)
        return KeyStore("", "", key_password, path)
    if path is None and password is not None:
        raise StoreError("SSL key store is not specified, but key store password is specified.")
    if path is not None and password is None:
        raise StoreError("SSL key store is specified, but key store password is not specified.")
    if path is None:
        return None
    data = _read_store(kind, path, "keystore")
    if jks.is_java_store(data):
        return _java_key_store(kind, path, _load_java(kind, path, data, password, "keystore"), key_password or password,
                               _key_manager(config))
    p12 = _load_pkcs12(kind, path, data, password, "keystore")
    if key_password is not None and key_password != password:  # Java's KeyManagerFactory fails to recover the key
        raise StoreError(f"Invalid SSL keystore {path}: its key cannot be recovered with ssl.key.password "
                         f"(a PKCS12 key is protected with the store's password)")
    if p12.key is None or p12.cert is None:
        raise StoreError(f"Failed to load SSL keystore {path} of type {kind}: it holds no private key entry")
    try:
        entries = pkcs12.key_entries(data, password)
        if len(entries) > 1:  # cryptography reads one key of a store
            return _served(kind, path, [_entry(alias, key, chain) for alias, key, chain in entries],
                           _key_manager(config))
    except (pkcs12.Pkcs12Error, ValueError, TypeError) as e:  # StoreError is one too: let it through as it is
        if isinstance(e, StoreError):
            raise
        raise StoreError(f"Failed to load SSL keystore {path} of type {kind}: {e}") from None
    chain = [p12.cert.certificate, *(c.certificate for c in p12.additional_certs)]
    return KeyStore(_key_pem(p12.key), "".join(_cert_pem(c) for c in chain), None)


def _key_manager(config) -> str:
    return (getattr(config, "extra", None) or {}).get("ssl.keymanager.algorithm") or keychoice.SUNX509


def _java_key_store(kind: str, path: str, store: jks.JavaStore, key_password: str, algorithm: str) -> KeyStore:
    """Java's choice of key entry per key type serves; like Java's KeyManagerFactory, every key entry (a
    secret key's too) must open with the password."""
    if not store.keys:
        raise StoreError(f"Failed to load SSL keystore {path} of type {kind}: it holds no private key entry")
    try:
        keys = [jks.recover_key(entry, key_password) for entry in store.keys]
        for secret in store.secrets:  # Java's key manager opens every key entry; a secret key serves nothing
            jks.recover_secret(secret, key_password)
        entries = [_entry(e.alias, key, e.chain) for e, key in zip(store.keys, keys) if e.chain]
    except jks.JavaStoreError as e:
        raise StoreError(f"Invalid SSL keystore {path} of type {kind}: {e} with ssl.key.password (or, without it, "
                         f"ssl.keystore.password)") from None
    except ValueError as e:
        raise StoreError(f"Failed to load SSL keystore {path} of type {kind}: {e}") from None
    return _served(kind, path, entries, algorithm)


def _entry(alias: str | None, key_der: bytes, chain_der) -> keychoice.KeyEntry:
    from cryptography import x509
    from cryptography.hazmat.primitives.serialization import load_der_private_key
    chain = [x509.load_der_x509_certificate(c) for c in chain_der]
    return keychoice.KeyEntry(alias, _key_pem(load_der_private_key(key_der, None)),
                              "".join(_cert_pem(c) for c in chain), keychoice.key_type(chain[0]))


def _served(kind: str, path: str, entries: list[keychoice.KeyEntry], algorithm: str) -> KeyStore:
    try:
        served = keychoice.served(entries, algorithm)
    except keychoice.KeyChoiceError as e:
        raise StoreError(f"Invalid SSL keystore {path} of type {kind}: {e}") from None
    if not served:
        raise StoreError(f"Failed to load SSL keystore {path} of type {kind}: it holds no private key of a type "
                         f"TLS serves with")
    return KeyStore(served[0].key_pem, served[0].chain_pem, None, more=tuple((e.key_pem, e.chain_pem)
                                                                             for e in served[1:]))


def trusted_certificates(config) -> str | None:
    """The CA certificates as PEM text (None: no trust store configured), or StoreError."""
    path = config.ssl_truststore_location or None
    password, certs = config.ssl_truststore_password or None, config.ssl_truststore_certificates or None
    kind = _kind(config.ssl_truststore_type, path, certs is not None)
    if certs is not None:
        if kind != PEM:
            raise StoreError(f"SSL trust store certs can be specified only for PEM, but trust store type is {kind}.")
        if path is not None:
            raise StoreError("Both SSL trust store location and separate trust certificates are specified.")
        if password is not None:
            raise StoreError("SSL trust store password cannot be specified for PEM format.")
        return _pem_certificates(certs, "Invalid PEM trust store certificates")
    if kind == PEM and path is not None:
        if password is not None:
            raise StoreError("SSL trust store password cannot be specified for PEM format.")
        failure = f"Failed to load PEM SSL keystore {path}"
        return _pem_certificates(_read_text(path, failure), failure)
    if path is None and password is not None:
        raise StoreError("SSL trust store is not specified, but trust store password is specified.")
    if path is None:
        return None
    data = _read_store(kind, path, "truststore")
    if jks.is_java_store(data):
        trusted = _load_java(kind, path, data, password, "truststore").trusted()
    else:
        _load_pkcs12(kind, path, data, password, "truststore")  # the password, the MAC, Kafka's messages
        try:
            trusted = pkcs12.trusted_certificates(data, password)
        except pkcs12.Pkcs12Error as e:
            raise StoreError(f"Failed to load SSL truststore {path} of type {kind}: {e}") from None
    if not trusted:  # Java starts, and then no client certificate passes
        log.warning("SSL truststore %s of type %s holds no certificate Java trusts (a PKCS12 certificate needs "
                    "keytool's trusted-certificate mark: keytool -importcert): every client certificate is refused",
                    path, kind)
    return "".join(_cert_pem(c) for c in _der_certificates(kind, path, trusted))


def _kind(given: str, path: str | None, inline: bool) -> str:
    """The store type: as given; else PEM for inline text or a file of PEM text, JKS (Kafka's default) otherwise."""
    if given:
        return given
    if inline or path is None:
        return PEM
    try:
        with open(path, "rb") as f:
            head = f.read(4096)
    except OSError:
        return PEM  # refused as the missing PEM file it would be
    return PEM if b"-----BEGIN " in head else "JKS"


def _pem_certificates(text: str, failure: str) -> str:
    """PEM trust: Kafka's PemStore wants at least one certificate (an empty one would trust nothing)."""
    if "-----BEGIN CERTIFICATE-----" not in text:
        raise StoreError(f"{failure}: At least one certificate expected")
    return text


def _no_password_for_pem(password: str | None) -> None:
    if password is not None:
        raise StoreError("SSL key store password cannot be specified with PEM format, only key password may be "
                         "specified.")


def _read_text(path: str, failure: str) -> str:
    try:
        return Path(path).read_text()
    except (OSError, UnicodeDecodeError) as e:
        raise StoreError(f"{failure}: {e}") from None


def _read_store(kind: str, path: str, what: str) -> bytes:
    failure = f"Failed to load SSL {what} {path} of type {kind}"
    if kind.upper() not in STORE_TYPES:
        raise StoreError(f"{failure}: kafka-shim reads PEM, PKCS12, JKS and JCEKS stores")
    try:
        import cryptography  # noqa: F401  (PKCS12, and the keys and certificates of JKS and JCEKS)
    except ImportError:
        raise StoreError(f"{failure}: reading a {kind} store needs the cryptography package: "
                         f"pip install 'kafka-shim[certs]'") from None
    try:
        return Path(path).read_bytes()
    except OSError as e:
        raise StoreError(f"{failure}: {e}") from None


def _load_java(kind: str, path: str, data: bytes, password: str | None, what: str) -> jks.JavaStore:
    """A store in Java's JKS or JCEKS format; Java's JKS type does not read JCEKS, the others read JKS."""
    failure = f"Failed to load SSL {what} {path} of type {kind}"
    try:
        store = jks.load(data, password)
    except jks.JavaStoreError as e:
        raise StoreError(f"{failure}: {e}") from None
    if store.fmt == "JCEKS" and kind.upper() != "JCEKS":
        raise StoreError(f"{failure}: Invalid keystore format (a JCEKS store: set the type to JCEKS)")
    return store


def _der_certificates(kind: str, path: str, certificates: list[bytes]) -> list:
    from cryptography import x509
    try:
        return [x509.load_der_x509_certificate(c) for c in certificates]
    except ValueError as e:
        raise StoreError(f"Failed to load SSL truststore {path} of type {kind}: {e}") from None


def _load_pkcs12(kind: str, path: str, data: bytes, password: str | None, what: str):
    failure = f"Failed to load SSL {what} {path} of type {kind}"
    if kind.upper() == "JCEKS":
        raise StoreError(f"{failure}: Invalid keystore format (Java's JCEKS type reads JCEKS and JKS stores)")
    from cryptography.hazmat.primitives.serialization import pkcs12
    try:
        return pkcs12.load_pkcs12(data, password.encode() if password is not None else None)
    except (ValueError, TypeError) as e:
        reason = str(e)
        if "password" in reason.lower():
            reason = "keystore password was incorrect" if password is not None else \
                f"it is encrypted and no ssl.{what}.password is set"
        raise StoreError(f"{failure}: {reason}") from None


def _key_pem(key) -> str:
    from cryptography.hazmat.primitives import serialization
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()


def _cert_pem(cert) -> str:
    from cryptography.hazmat.primitives import serialization
    return cert.public_bytes(serialization.Encoding.PEM).decode()
