"""The JDK algorithm names a Kafka broker's TLS settings must name, checked as its SslFactory checks them.

Kafka's DefaultSslEngineFactory asks the JDK's providers by name for the listener's SSLContext
(``ssl.protocol``), KeyManagerFactory (``ssl.keymanager.algorithm``), TrustManagerFactory
(``ssl.trustmanager.algorithm``) and SecureRandom (``ssl.secure.random.implementation``). A name no
provider registers throws NoSuchAlgorithmException ("<name> <type> not available"), which Kafka wraps in
a KafkaException: the broker does not start, and a dynamic listener update naming one is refused.
kafka-shim serves TLS with OpenSSL and uses none of these objects, but refuses the same names.

The names are those a stock JDK (11 to 21, Linux) registers, with their aliases; a provider looks
names up without regard to case. Names a stock JDK knows that mean nothing to OpenSSL are accepted.
"""

from __future__ import annotations

# (setting, the JDK's type, the names its providers register, Kafka's default)
_KEY_MANAGERS = ("SunX509", "NewSunX509", "PKIX")  # PKIX: NewSunX509's alias
_TRUST_MANAGERS = ("SunX509", "PKIX", "SunPKIX", "X509", "X.509")  # the last three: PKIX's aliases
_SSL_CONTEXTS = ("TLS", "SSL", "TLSv1", "SSLv3", "TLSv1.1", "TLSv1.2", "TLSv1.3", "DTLS", "DTLSv1.0", "DTLSv1.2",
                 "Default")  # SunJSSE's; SSL is TLS's alias, SSLv3 TLSv1's
_SECURE_RANDOMS = ("NativePRNG", "NativePRNGBlocking", "NativePRNGNonBlocking", "SHA1PRNG", "DRBG")  # SUN's, Linux
CHECKS = (("ssl.keymanager.algorithm", "KeyManagerFactory", _KEY_MANAGERS),
          ("ssl.trustmanager.algorithm", "TrustManagerFactory", _TRUST_MANAGERS),
          ("ssl.protocol", "SSLContext", _SSL_CONTEXTS),
          ("ssl.secure.random.implementation", "SecureRandom", _SECURE_RANDOMS))
SETTINGS = tuple(name for name, _, _ in CHECKS)


class UnknownAlgorithmError(ValueError):
    pass


def problem(setting: str, value: str | None) -> str | None:
    """Why Kafka's SslFactory fails on ``setting=value`` (None: it does not). Empty or unset: the default."""
    if not value:
        return None
    for name, kind, known in CHECKS:
        if name == setting:
            if value.upper() in (k.upper() for k in known):
                if kind == "SSLContext" and value.upper() == "DEFAULT":  # getInstance works, init() refuses
                    return (f"Invalid {setting}={value}: java.security.KeyManagementException: Default SSLContext is "
                            f"initialized automatically (Kafka's SslFactory initialises its own: use TLSv1.3 or TLS)")
                return None
            return (f"Invalid {setting}={value}: java.security.NoSuchAlgorithmException: {value} {kind} not "
                    f"available (the JDK knows {', '.join(known)}; case does not matter)")
    return None


def check(props: dict) -> None:
    """Refuse, as Kafka's broker refuses at start, TLS settings naming an algorithm the JDK has not."""
    for setting in SETTINGS:
        reason = problem(setting, props.get(setting))
        if reason:
            raise UnknownAlgorithmError(reason)
