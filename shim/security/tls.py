"""TLS for SSL and SASL_SSL listeners (stdlib ``ssl``) from Kafka's key and trust store settings
(shim.security.stores: PEM, PKCS12, JKS and JCEKS), and the principal of
a client certificate (shim.security.principal: ``ssl.principal.mapping.rules``).
"""

from __future__ import annotations

import logging
import os
import ssl
import tempfile

from . import ciphers, jdk, versions
from .principal import ANONYMOUS, SslPrincipalMapper
from .stores import StoreError, key_store, trusted_certificates

CLIENT_AUTH = {"none": ssl.CERT_NONE, "requested": ssl.CERT_OPTIONAL, "required": ssl.CERT_REQUIRED}
REFUSED_CERTIFICATE = ("CERTIFICATE_VERIFY_FAILED", "PEER_DID_NOT_RETURN_A_CERTIFICATE")
REFUSED_VERSION = ("UNSUPPORTED_PROTOCOL",  # no version of ssl.enabled.protocols offered: protocol_version
                   "NO_SHARED_CIPHER")  # no suite of ssl.cipher.suites offered: handshake_failure
log = logging.getLogger(__name__)


class AlertingSSLObject(ssl.SSLObject):
    """A client certificate refused in the handshake is told so with a TLS alert before the connection
    closes, as Kafka's SSLEngine tells it. asyncio closes the transport the moment do_handshake raises,
    dropping the alert OpenSSL has just written (a certificate of an unknown CA: unknown_ca), and the
    client sees a bare disconnect: kafka-clients then retries until its timeout instead of failing at
    once with SslAuthenticationException. So that failure first reads as "want more data", which makes
    asyncio send what is pending, the alert; the next call raises it (on the client's close, or more
    bytes), and the handshake timeout bounds a client that does neither. A client offering no version
    ssl.enabled.protocols lists, or no suite of ssl.cipher.suites, is told so the same way (protocol_version
    or handshake_failure, as Java's SSLEngine alerts).
    Other failures (not TLS at all, say) close at once as before."""

    _failure: ssl.SSLError | None = None

    def do_handshake(self) -> None:
        if self._failure is not None:
            raise self._failure
        try:
            super().do_handshake()
        except ssl.SSLError as exc:
            if not isinstance(exc, ssl.SSLCertVerificationError) and exc.reason not in REFUSED_CERTIFICATE + REFUSED_VERSION:
                raise
            log.info("TLS handshake failed: %s", exc)
            self._failure = exc
            raise ssl.SSLWantReadError("the handshake is refused; the alert is on its way") from exc


def server_context(config) -> ssl.SSLContext:
    if config.ssl_client_auth not in CLIENT_AUTH:
        raise ValueError(f"ssl.client.auth is one of {', '.join(CLIENT_AUTH)}, not {config.ssl_client_auth!r}")
    props = getattr(config, "extra", None) or {}
    jdk.check(props)  # names Kafka's SslFactory would not find in the JDK
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.sslobject_class = AlertingSSLObject
    versions.apply(ctx, props)  # ssl.enabled.protocols, Kafka's default TLSv1.2,TLSv1.3
    ciphers.apply(ctx, props)  # ssl.cipher.suites, within those versions
    store = key_store(config)
    if store is None:
        raise ValueError("an SSL or SASL_SSL listener needs ssl.keystore.location (a PEM file with the key and "
                         "certificate chain, or a PKCS12/JKS store with ssl.keystore.password) or ssl.keystore.key "
                         "with ssl.keystore.certificate.chain")
    try:
        if store.location:
            ctx.load_cert_chain(store.location, password=store.password)
        else:
            _load_inline_chain(ctx, store.chain_pem, store.key_pem, store.password)
        for key, chain in store.more:  # one key per type: OpenSSL keeps each, and the handshake chooses
            _load_inline_chain(ctx, chain, key, None)
    except (ssl.SSLError, OSError) as e:
        raise StoreError(f"Invalid SSL keystore: {e}") from None
    cas = trusted_certificates(config)
    if cas:
        try:
            ctx.load_verify_locations(cadata=cas)
        except (ssl.SSLError, ValueError) as e:
            raise StoreError(f"Invalid SSL truststore: {e}") from None
    elif cas is None and config.ssl_client_auth != "none":  # "": a store trusting nothing, as Java reads it
        raise ValueError("ssl.client.auth needs the CA certificates: ssl.truststore.location or ssl.truststore.certificates")
    ctx.verify_mode = CLIENT_AUTH[config.ssl_client_auth]
    return ctx


def principal_mapper(config) -> SslPrincipalMapper:
    """``ssl.principal.mapping.rules``; a rule that does not parse is a ValueError (the start is refused)."""
    return SslPrincipalMapper(config.ssl_principal_mapping_rules)


def _load_inline_chain(ctx: ssl.SSLContext, chain: str, key: str, password: str | None) -> None:
    with tempfile.TemporaryDirectory(prefix="kafka-shim-tls-") as d:  # 0700; the ssl module reads files only
        path = os.path.join(d, "keystore.pem")
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(key.strip() + "\n" + chain.strip() + "\n")
        ctx.load_cert_chain(path, password=password)


def principal_of(peercert: dict | None, mapper: SslPrincipalMapper | None = None) -> str:
    """``User:<the certificate's distinguished name, mapped>``, or ANONYMOUS without a certificate."""
    if not peercert or not peercert.get("subject"):
        return ANONYMOUS
    return (mapper or _DEFAULT).principal(peercert["subject"])


_DEFAULT = SslPrincipalMapper("DEFAULT")
