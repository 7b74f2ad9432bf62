"""``ssl.enabled.protocols``: the TLS versions a listener's handshake may agree, as Kafka's
DefaultSslEngineFactory enables them on each server SSLEngine (``setEnabledProtocols``).

The JDK knows the names SSLv2Hello, SSLv3, TLSv1, TLSv1.1, TLSv1.2 and TLSv1.3, spelt exactly (its
ProtocolVersion lookup minds case). Any other name makes ``setEnabledProtocols`` throw
IllegalArgumentException "Unsupported protocol: <name>". JDK 17's java.security disables SSLv3, TLSv1 and
TLSv1.1 (``jdk.tls.disabledAlgorithms``), so of the known names only TLSv1.2 and TLSv1.3 can be agreed; a
list without either leaves a server SSLEngine no protocol, and every handshake fails ("No appropriate
protocol"). Kafka checks an inter-broker listener at start by a handshake between two engines made
from its settings (SslFactory's SslEngineValidator) and refuses the start with a ConfigException; on the
other listeners every connection fails. kafka-shim refuses the start in both cases, naming the setting.

OpenSSL takes a range of versions (minimum, maximum); the usable names are two neighbours, so every
list Kafka can serve is a range.
"""

from __future__ import annotations

import ssl

SETTING = "ssl.enabled.protocols"
DEFAULT = ("TLSv1.2", "TLSv1.3")  # Kafka's default (the JDK 11+ one)
KNOWN = ("SSLv2Hello", "SSLv3", "TLSv1", "TLSv1.1", "TLSv1.2", "TLSv1.3")
USABLE = {"TLSv1.2": ssl.TLSVersion.TLSv1_2, "TLSv1.3": ssl.TLSVersion.TLSv1_3}


class ProtocolError(ValueError):
    pass


def names(value) -> tuple[str, ...]:
    """Kafka's LIST type: comma-separated, each trimmed, empties dropped; unset or empty: the default."""
    if value is None:
        return DEFAULT
    items = value if isinstance(value, (list, tuple)) else str(value).split(",")
    listed = tuple(s.strip() for s in items if str(s).strip())
    return listed or DEFAULT


def version_range(value) -> tuple[ssl.TLSVersion, ssl.TLSVersion]:
    """(minimum, maximum) for ``ssl.enabled.protocols=value``; a ProtocolError where Kafka's listener fails."""
    listed = names(value)
    for name in listed:
        if name not in KNOWN:
            raise ProtocolError(f"Invalid {SETTING}={','.join(listed)}: java.lang.IllegalArgumentException: "
                                f"Unsupported protocol: {name} (the JDK knows {', '.join(KNOWN)}; case matters)")
    usable = [USABLE[n] for n in listed if n in USABLE]
    if not usable:
        raise ProtocolError(f"Invalid {SETTING}={','.join(listed)}: javax.net.ssl.SSLHandshakeException: No "
                            f"appropriate protocol (the JDK disables {', '.join(n for n in listed)}; enable "
                            f"TLSv1.2 or TLSv1.3)")
    return min(usable), max(usable)


def apply(ctx: ssl.SSLContext, props: dict) -> None:
    ctx.minimum_version, ctx.maximum_version = version_range(props.get(SETTING))
