"""The principal of a client certificate on an SSL listener, as Kafka's DefaultKafkaPrincipalBuilder
makes it: the subject's distinguished name as ``X500Principal.getName()`` writes it (RFC 2253), then
rewritten by ``ssl.principal.mapping.rules`` (Kafka's SslPrincipalMapper).

Rules are separated by commas and tried in order; the first that matches names the client:

- ``DEFAULT``: the distinguished name itself;
- ``RULE:pattern/replacement/``, ``RULE:pattern/replacement/L`` or ``.../U``: when the Java regular
  expression ``pattern`` matches the whole name, every match of it is replaced by ``replacement``
  (``$1`` is a group; ``\\`` escapes), lower- or upper-cased with ``L`` or ``U``.

A rule that does not parse refuses the broker's start, as Kafka's does; a certificate no rule
matches closes the connection (Kafka fails the request with "No rules apply to ...").
"""

from __future__ import annotations

import re
import ssl

ANONYMOUS = "User:ANONYMOUS"
DEFAULT_PRINCIPAL_BUILDER = "org.apache.kafka.common.security.authenticator.DefaultKafkaPrincipalBuilder"


def check_principal_builder(name: str | None) -> None:
    """``principal.builder.class``: only Kafka's default builder, whose rules this module follows,
    can be had (another is a Java class; with one, Kafka would ignore the mapping rules)."""
    if name and name.strip() != DEFAULT_PRINCIPAL_BUILDER:
        raise ValueError(f"principal.builder.class: only {DEFAULT_PRINCIPAL_BUILDER} is served, not {name!r}")

# SslPrincipalMapper's grammar: group 1 DEFAULT, 2 the pattern, 4 the replacement, 6 the case flag,
# 7 anything else (an empty rule when empty, an error otherwise)
_RULE = r"(DEFAULT)|RULE:((\\.|[^\\/])*)/((\\.|[^\\/])*)/([LU]?).*?|(.*?)"
_SPLITTER = re.compile(r"\s*(" + _RULE + r")\s*(,\s*|$)")
_PARSER = re.compile(_RULE)


class NoMatchingRule(ValueError):
    pass


class Rule:
    def __init__(self, pattern: str | None = None, replacement: str = "", flag: str = "") -> None:
        self.source, self.replacement, self.flag = pattern, replacement, flag
        self.pattern = None if pattern is None else re.compile(_python_regex(pattern))

    def apply(self, dn: str) -> str | None:
        if self.pattern is None:
            return dn
        if not self.pattern.fullmatch(dn):
            return None
        template = _java_replacement(_escape_missing_groups(self.replacement, self.pattern.groups), self.pattern.groups)
        result = self.pattern.sub(lambda m: "".join(p if isinstance(p, str) else (m.group(p) or "") for p in template),
                                  dn)
        return result.lower() if self.flag == "L" else result.upper() if self.flag == "U" else result

    def __repr__(self) -> str:
        if self.pattern is None:
            return "DEFAULT"
        return f"RULE:{self.source}/{self.replacement}" + (f"/{self.flag}" if self.flag else "")


class SslPrincipalMapper:
    def __init__(self, rules: str | None) -> None:
        self.rules = [r for r in map(_parse, _split("DEFAULT" if rules is None else rules)) if r is not None]

    def name(self, dn: str) -> str:
        for rule in self.rules:
            mapped = rule.apply(dn)
            if mapped is not None:
                return mapped
        raise NoMatchingRule(f"No rules apply to {dn}, rules [{', '.join(map(repr, self.rules))}]")

    def principal(self, peer_subject: tuple | None) -> str:
        """``User:<mapped name>``, or ANONYMOUS for a client without a certificate."""
        if not peer_subject:
            return ANONYMOUS
        return "User:" + self.name(distinguished_name(peer_subject))


def _split(rules: str) -> list[str]:
    return [m.group(1) for m in _SPLITTER.finditer(rules.strip())]


def _parse(rule: str) -> Rule | None:
    m = _PARSER.match(rule)
    if m.end() != len(rule):
        raise ValueError(f"Invalid rule: `{rule}`, unmatched substring: `{rule[m.end():]}`")
    if m.group(1) is not None:
        return Rule()
    if m.group(2) is not None:
        try:
            return Rule(m.group(2), m.group(4), m.group(6))
        except re.error as e:
            raise ValueError(f"Invalid rule: `{rule}`: {e}") from None
    return None  # an empty rule is ignored


def _python_regex(pattern: str) -> str:
    """Java's named groups ``(?<name>...)`` in Python's spelling; the rest of the syntax rules use is shared."""
    return re.sub(r"(?<!\\)\(\?<(?![=!])", "(?P<", pattern)


def _escape_missing_groups(replacement: str, groups: int) -> str:
    """SslPrincipalMapper's escapeLiteralBackReferences: ``$N`` naming no group stays literal text
    (``$123`` is group 12 or 1 when there are that few). Positions come from the unchanged text, as
    Kafka's loop takes them."""
    if groups == 0:
        return replacement
    value = replacement
    for m in re.finditer(r"\$(\d+)", replacement):
        digits = m.group(1)
        if digits.startswith("0"):
            continue
        index = int(digits)
        while index > groups and index >= 10:
            index //= 10
        if index > groups:
            start = m.start(1)
            value = value[:start - 1] + "\\" + value[start - 1:]
    return value


def _java_replacement(replacement: str, groups: int) -> list[str | int]:
    """Java's Matcher.appendReplacement syntax: literal text and group numbers."""
    out: list[str | int] = []
    i = 0
    while i < len(replacement):
        c = replacement[i]
        if c == "\\":
            if i + 1 == len(replacement):
                raise ValueError("character to be escaped is missing")
            out.append(replacement[i + 1])
            i += 2
        elif c == "$":
            if i + 1 == len(replacement) or not replacement[i + 1].isdigit() or not replacement[i + 1].isascii():
                raise ValueError("Illegal group reference")
            ref, i = int(replacement[i + 1]), i + 2
            while i < len(replacement) and replacement[i] in "0123456789" and ref * 10 + int(replacement[i]) <= groups:
                ref, i = ref * 10 + int(replacement[i]), i + 1
            if ref > groups:
                raise ValueError(f"No group {ref}")
            out.append(ref)
        else:
            out.append(c)
            i += 1
    return out


# X500Principal.getName() (RFC 2253) names these attributes by keyword; others by OID, value in hex
_KEYWORDS = {"commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
             "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
             "domainComponent": "DC", "userId": "UID"}
# the ASN.1 string type certificates give these attributes (the ssl module does not say): Java writes
# attributes without an RFC 2253 keyword as OID=#<DER of the value>; others are UTF8String
_TAGS = {"1.2.840.113549.1.9.1": 0x16, "0.9.2342.19200300.100.1.25": 0x16, "2.5.4.5": 0x13, "2.5.4.46": 0x13,
         "1.3.6.1.4.1.311.60.2.1.3": 0x13}
_ESCAPED = set(',=+<>#;"\\')


def distinguished_name(subject: tuple) -> str:
    """The subject of ``SSLObject.getpeercert()`` as X500Principal.getName() writes it: most
    specific RDN first, multi-valued RDNs joined by ``+``."""
    return ",".join("+".join(_attribute(name, value) for name, value in rdn) for rdn in reversed(subject))


def _attribute(name: str, value: str) -> str:
    if name in _KEYWORDS:
        return f"{_KEYWORDS[name]}={_escape(value)}"
    oid = _oid(name)
    raw = value.encode()
    return f"{oid}=#{_TAGS.get(oid, 0x0C):02x}{_der_length(len(raw))}{raw.hex()}"


def _oid(name: str) -> str:
    """The dotted OID of an attribute the ssl module names by OpenSSL's long name (an OID it does
    not know it gives dotted already)."""
    if name[:1].isdigit():
        return name
    try:
        return ssl._ASN1Object.fromname(name).oid
    except ValueError:
        return name


def _der_length(n: int) -> str:
    if n < 0x80:
        return f"{n:02x}"
    body = n.to_bytes((n.bit_length() + 7) // 8, "big")
    return f"{0x80 | len(body):02x}{body.hex()}"


def _escape(value: str) -> str:
    """AVA.toRFC2253String: a backslash before each of ``,=+<>#;"\\``, ``\\00`` for NUL, and before
    each leading and trailing space or carriage return."""
    chars = ["\\00" if c == "\0" else "\\" + c if c in _ESCAPED else c for c in value]
    lead = next((i for i, c in enumerate(chars) if c not in (" ", "\r")), len(chars))
    trail = next((i for i in range(len(chars) - 1, -1, -1) if chars[i] not in (" ", "\r")), -1)
    return "".join("\\" + c if i < lead or i > trail else c for i, c in enumerate(chars))
