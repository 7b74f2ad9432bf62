"""``ssl.cipher.suites``: the cipher suites a listener agrees, as Kafka's DefaultSslEngineFactory
enables them on each server SSLEngine (``setEnabledCipherSuites``; unset or empty: the JDK's defaults).

The names are the JDK's (IANA's). A name the JDK does not support makes ``setEnabledCipherSuites``
throw IllegalArgumentException "Unsupported CipherSuite: <name>"; kafka-shim refuses the start instead,
as Kafka refuses an inter-broker listener's (shim.security.versions says why). The TLS 1.2 suites JDK 17
enables by default are served, through OpenSSL's names (OPENSSL, checked against ``openssl ciphers
-stdname`` in the tests); a name outside them (a static-ECDH suite, one the JDK disables) is refused too.

TLS 1.3 suites are chosen too, as the JDK's list restricts both versions: Python's ssl module cannot
(set_ciphers is SSL_CTX_set_cipher_list, TLS 1.2 and older), so shim.security.tls13 calls OpenSSL's
SSL_CTX_set_ciphersuites. A JDK server with no TLS 1.3 suite enabled agrees TLS 1.2 only, and one with
only TLS 1.3 suites agrees TLS 1.3 only; kafka-shim narrows the version range the same way.
"""

from __future__ import annotations

import logging
import ssl

from . import tls13

SETTING = "ssl.cipher.suites"
log = logging.getLogger(__name__)
TLS13 = ("TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256", "TLS_CHACHA20_POLY1305_SHA256")
_KX = {"ECDHE_ECDSA": "ECDHE-ECDSA-", "ECDHE_RSA": "ECDHE-RSA-", "DHE_RSA": "DHE-RSA-", "DHE_DSS": "DHE-DSS-",
       "RSA": ""}
_BULK = {"AES_256_GCM_SHA384": "AES256-GCM-SHA384", "AES_128_GCM_SHA256": "AES128-GCM-SHA256",
         "AES_256_CBC_SHA384": "AES256-SHA384", "AES_128_CBC_SHA256": "AES128-SHA256",
         "AES_256_CBC_SHA256": "AES256-SHA256", "AES_256_CBC_SHA": "AES256-SHA", "AES_128_CBC_SHA": "AES128-SHA",
         "CHACHA20_POLY1305_SHA256": "CHACHA20-POLY1305"}
_JDK17_TLS12 = {  # JDK 17's enabled TLS 1.2 suites OpenSSL also serves: key exchange -> bulk ciphers
    "ECDHE_ECDSA": ("AES_256_GCM_SHA384", "AES_128_GCM_SHA256", "CHACHA20_POLY1305_SHA256", "AES_256_CBC_SHA384",
                    "AES_128_CBC_SHA256", "AES_256_CBC_SHA", "AES_128_CBC_SHA"),
    "ECDHE_RSA": ("AES_256_GCM_SHA384", "AES_128_GCM_SHA256", "CHACHA20_POLY1305_SHA256", "AES_256_CBC_SHA384",
                  "AES_128_CBC_SHA256", "AES_256_CBC_SHA", "AES_128_CBC_SHA"),
    "DHE_RSA": ("AES_256_GCM_SHA384", "AES_128_GCM_SHA256", "CHACHA20_POLY1305_SHA256", "AES_256_CBC_SHA256",
                "AES_128_CBC_SHA256", "AES_256_CBC_SHA", "AES_128_CBC_SHA"),
    "DHE_DSS": ("AES_256_GCM_SHA384", "AES_128_GCM_SHA256", "AES_256_CBC_SHA256", "AES_128_CBC_SHA256",
                "AES_256_CBC_SHA", "AES_128_CBC_SHA"),
    "RSA": ("AES_256_GCM_SHA384", "AES_128_GCM_SHA256", "AES_256_CBC_SHA256", "AES_128_CBC_SHA256",
            "AES_256_CBC_SHA", "AES_128_CBC_SHA"),
}
OPENSSL = {f"TLS_{kx}_WITH_{bulk}": _KX[kx] + _BULK[bulk] for kx, bulks in _JDK17_TLS12.items() for bulk in bulks}


class CipherSuiteError(ValueError):
    pass


def names(value) -> tuple[str, ...]:
    if value is None:
        return ()
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    return tuple(s.strip() for s in items if str(s).strip())


def apply(ctx: ssl.SSLContext, props: dict) -> None:
    """Narrow ``ctx`` (its versions already set) to ``ssl.cipher.suites``; unset or empty: unchanged."""
    listed = names(props.get(SETTING))
    if not listed:
        return
    for name in listed:
        if name not in OPENSSL and name not in TLS13:
            raise CipherSuiteError(f"Invalid {SETTING}: java.lang.IllegalArgumentException: Unsupported "
                                   f"CipherSuite: {name} (kafka-shim serves {', '.join(TLS13)} and the TLS 1.2 "
                                   f"suites JDK 17 enables: {', '.join(OPENSSL)})")
    tls12 = [OPENSSL[n] for n in listed if n in OPENSSL]
    low, high = ctx.minimum_version, ctx.maximum_version
    if not any(n in TLS13 for n in listed):
        high = min(high, ssl.TLSVersion.TLSv1_2)
    if not tls12:
        low = max(low, ssl.TLSVersion.TLSv1_3)
    if low > high:
        raise CipherSuiteError(f"Invalid {SETTING}={','.join(listed)}: javax.net.ssl.SSLHandshakeException: No "
                               f"appropriate protocol (no suite listed serves a version ssl.enabled.protocols lists)")
    if tls12:
        ctx.set_ciphers(":".join(tls12))
    if high >= ssl.TLSVersion.TLSv1_3:
        _set_tls13(ctx, [n for n in listed if n in TLS13])
    ctx.minimum_version, ctx.maximum_version = low, high


def _set_tls13(ctx: ssl.SSLContext, listed: list[str]) -> None:
    try:
        tls13.set_suites(ctx, listed)
    except tls13.Unavailable as e:
        log.warning("%s lists %s, but this Python cannot restrict TLS 1.3 suites (%s): it serves %s",
                    SETTING, ",".join(listed), e, ",".join(tls13.suites(ctx)))
