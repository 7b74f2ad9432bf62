"""Which private key a Kafka broker serves from a key store holding several, as Java chooses it.

Kafka's DefaultSslEngineFactory hands the whole key store to the JDK's KeyManagerFactory of
``ssl.keymanager.algorithm``, by default SunX509, and has no setting naming the server's alias. The
handshake asks that key manager for a key of one type (TLS 1.3: the key type of each signature scheme
the client offers, in the client's order; TLS 1.2: the cipher suite's, ECDHE_ECDSA "EC", ECDHE_RSA
"RSA"), and SunX509 answers, with no issuers and no SNI on the server side, with the first key entry of
that type in the iteration order of its HashMap of aliases: a java.util.HashMap keyed by the alias,
ordered by bucket, the bucket being String.hashCode() spread (h ^ h >>> 16) over the table, which
starts at 16 and doubles past three quarters full.

So per key type one entry is Java's, and only it can ever serve. The stdlib ``ssl`` (OpenSSL) holds one
certificate per key type too, and chooses among them in the handshake much as Java does (both prefer
ECDSA to RSA for a client that offers both): Java's entry of each type is loaded, no other. What
cannot be told is refused: two entries of a type in the same bucket are ordered by the store's own
enumeration, and a PKCS12 key without a friendly name gets a name Java counts out at load.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

log = logging.getLogger(__name__)

# a certificate's public key algorithm as Java names it (PublicKey.getAlgorithm()), of those TLS serves with
JAVA_KEY_TYPES = {"1.2.840.113549.1.1.1": "RSA", "1.2.840.113549.1.1.10": "RSASSA-PSS",
                  "1.2.840.10045.2.1": "EC", "1.3.101.112": "EdDSA", "1.3.101.113": "EdDSA",
                  "1.2.840.10040.4.1": "DSA"}
HASHMAP_CAPACITY = 16
SUNX509 = "SunX509"  # Kafka's ssl.keymanager.algorithm: the JDK's default


class KeyChoiceError(ValueError):
    pass


@dataclass(frozen=True)
class KeyEntry:
    alias: str | None  # None: a PKCS12 key without a friendly name
    key_pem: str
    chain_pem: str
    key_type: str  # Java's name, or the OID of a key type no TLS handshake asks for


def key_type(certificate) -> str:
    """Java's name of the certificate's public key algorithm."""
    oid = certificate.public_key_algorithm_oid.dotted_string
    return JAVA_KEY_TYPES.get(oid, oid)


def served(entries: list[KeyEntry], algorithm: str = SUNX509) -> list[KeyEntry]:
    """Of each key type TLS uses, the entry Java's SunX509 key manager returns; KeyChoiceError where
    that cannot be told. ``algorithm``: ssl.keymanager.algorithm; PKIX (NewSunX509) ranks the keys of a
    type per handshake (SNI, validity, key usage), which is not followed where a type has several."""
    capacity = HASHMAP_CAPACITY
    while len(entries) > capacity * 3 // 4:
        capacity *= 2
    chosen = []
    for kind in dict.fromkeys(e.key_type for e in entries if e.key_type in JAVA_KEY_TYPES.values()):
        candidates = [e for e in entries if e.key_type == kind]
        if len(candidates) > 1:
            if algorithm.upper() != SUNX509.upper():
                raise KeyChoiceError(f"it holds {len(candidates)} {kind} private keys, among which Java's "
                                     f"{algorithm} key manager (ssl.keymanager.algorithm) chooses per handshake by "
                                     f"the server name, validity and key usage: kafka-shim does not follow that; keep "
                                     f"one {kind} key, or leave ssl.keymanager.algorithm at Kafka's {SUNX509}")
            candidates = _in_hashmap_order(kind, candidates, capacity)
            log.info("the key store holds %d %s keys: %r serves, as Java's SunX509 key manager chooses it; not %s",
                     len(candidates), kind, candidates[0].alias, ", ".join(repr(e.alias) for e in candidates[1:]))
        chosen.append(candidates[0])
    return chosen


def _in_hashmap_order(kind: str, candidates: list[KeyEntry], capacity: int) -> list[KeyEntry]:
    unnamed = [e for e in candidates if e.alias is None]
    if unnamed:
        raise KeyChoiceError(f"it holds {len(candidates)} {kind} private keys, {len(unnamed)} of them without a "
                             f"friendly name, which Java names by a count at load: kafka-shim cannot tell which "
                             f"Java serves; give each key a name (keytool -importkeystore, or openssl pkcs12 -name) "
                             f"or keep one {kind} key")
    ordered = sorted(candidates, key=lambda e: bucket(e.alias, capacity))
    if bucket(ordered[0].alias, capacity) == bucket(ordered[1].alias, capacity):
        raise KeyChoiceError(f"its {kind} private keys {ordered[0].alias!r} and {ordered[1].alias!r} fall in one "
                             f"bucket of Java's key manager, which then serves the one its store lists first: "
                             f"kafka-shim cannot tell which; rename one (keytool -changealias) or keep one {kind} key")
    return ordered


def bucket(alias: str, capacity: int) -> int:
    """java.util.HashMap's bucket of the String ``alias`` in a table of ``capacity``."""
    h = java_string_hash(alias)
    return (h ^ (h >> 16)) & (capacity - 1)


def java_string_hash(text: str) -> int:
    """String.hashCode() over UTF-16 code units, as an unsigned 32-bit value."""
    units = text.encode("utf-16-be", "surrogatepass")
    h = 0
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & 0xFFFFFFFF
    return h
