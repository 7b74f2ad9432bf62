"""Just enough DER to walk the key and trust stores' ASN.1 (shim.security.jks, shim.security.pkcs12):
an element's tag and content, a constructed element's children, an OID's encoding. Every malformed
input is a ValueError (an IndexError included: callers catch both)."""

from __future__ import annotations

SEQUENCE, SET, INTEGER, OCTET_STRING, OID = 0x30, 0x31, 0x02, 0x04, 0x06


def element(data: bytes, pos: int = 0) -> tuple[int, int, int]:
    """The DER element at ``pos``: (tag, start of its content, end of its content)."""
    tag, first = data[pos], data[pos + 1]
    pos += 2
    if first & 0x80:
        width = first & 0x7F
        if not 0 < width <= 4 or pos + width > len(data):
            raise ValueError("a DER length that does not fit")
        first, pos = int.from_bytes(data[pos:pos + width], "big"), pos + width
    if pos + first > len(data):
        raise ValueError("a DER element longer than its container")
    return tag, pos, pos + first


def children(data: bytes, tag: int = SEQUENCE) -> list[bytes]:
    """The elements (each whole: tag, length, content) inside the constructed element ``data``."""
    found, pos, end = element(data)
    if found != tag:
        raise ValueError(f"DER tag {found:#x}, not {tag:#x}")
    items = []
    while pos < end:
        _, _, stop = element(data[:end], pos)
        items.append(data[pos:stop])
        pos = stop
    return items


def value(data: bytes, tag: int) -> bytes:
    """The content of the element ``data``, which must have ``tag``."""
    found, start, end = element(data)
    if found != tag:
        raise ValueError(f"DER tag {found:#x}, not {tag:#x}")
    return data[start:end]


def integer(data: bytes) -> int:
    return int.from_bytes(value(data, INTEGER), "big", signed=True)


def oid(dotted: str) -> bytes:
    """The content bytes of the OBJECT IDENTIFIER ``dotted`` (as ``value(x, OID)`` returns them)."""
    first, second, *rest = (int(arc) for arc in dotted.split("."))
    out = bytearray([first * 40 + second])
    for arc in rest:
        chunk = [arc & 0x7F]
        while arc := arc >> 7:
            chunk.append(0x80 | (arc & 0x7F))
        out += bytes(reversed(chunk))
    return bytes(out)


def dotted(content: bytes) -> str:
    """The dotted form of an OBJECT IDENTIFIER's content bytes (the inverse of ``oid``)."""
    arcs, arc = [], 0
    for byte in content:
        arc = arc << 7 | byte & 0x7F
        if not byte & 0x80:
            arcs.append(arc)
            arc = 0
    if not arcs:
        return ""
    first = min(arcs[0] // 40, 2)
    return ".".join(map(str, [first, arcs[0] - 40 * first, *arcs[1:]]))
