"""What Java trusts in a PKCS12 trust store (sun.security.pkcs12.PKCS12KeyStore with
TrustManagerFactory): each certificate bag carrying Oracle's trusted-key-usage attribute (keytool's
-importcert writes it), and each private key's own certificate (the bag whose localKeyId is a key
bag's). Any other certificate (a key's chain above it, a CA written by ``openssl pkcs12 -nokeys``)
is trusted by nothing. The ``cryptography`` package reads no bag attributes, so the bags are walked
here; certificates are decrypted with cryptography's PBKDF2, AES and triple DES, or with RC2 of 40 or
128 bits (pbeWithSHAAnd40BitRC2-CBC: what JDKs before 8u301 and OpenSSL before 3.0, or ``openssl pkcs12
-legacy``, wrote) from the pycryptodome package: cryptography's RC2 takes 128-bit keys only.

Read after cryptography's ``load_pkcs12`` has checked the store's password and integrity.
"""

from __future__ import annotations

import hashlib

from . import der

DATA, ENCRYPTED_DATA = der.oid("1.2.840.113549.1.7.1"), der.oid("1.2.840.113549.1.7.6")
KEY_BAG, SHROUDED_KEY_BAG = der.oid("1.2.840.113549.1.12.10.1.1"), der.oid("1.2.840.113549.1.12.10.1.2")
CERT_BAG, SAFE_CONTENTS_BAG = der.oid("1.2.840.113549.1.12.10.1.3"), der.oid("1.2.840.113549.1.12.10.1.6")
X509_CERT = der.oid("1.2.840.113549.1.9.22.1")
LOCAL_KEY_ID, TRUSTED_KEY_USAGE = der.oid("1.2.840.113549.1.9.21"), der.oid("2.16.840.1.113894.746875.1.1")
FRIENDLY_NAME = der.oid("1.2.840.113549.1.9.20")
PBES2, PBKDF2 = der.oid("1.2.840.113549.1.5.13"), der.oid("1.2.840.113549.1.5.12")
PRFS = {der.oid(f"1.2.840.113549.2.{n}"): h for n, h in ((7, "sha1"), (8, "sha224"), (9, "sha256"),
                                                        (10, "sha384"), (11, "sha512"))}
CIPHERS = {der.oid("2.16.840.1.101.3.4.1.2"): ("AES", 16), der.oid("2.16.840.1.101.3.4.1.22"): ("AES", 24),
           der.oid("2.16.840.1.101.3.4.1.42"): ("AES", 32), der.oid("1.2.840.113549.3.7"): ("DES3", 24)}
PBE_SHA1_3DES = der.oid("1.2.840.113549.1.12.1.3")
PBE_SHA1_RC2 = {der.oid("1.2.840.113549.1.12.1.5"): 16, der.oid("1.2.840.113549.1.12.1.6"): 5}  # key bytes
REWRITE = ("keytool -importkeystore -srckeystore OLD -srcstoretype PKCS12 -destkeystore NEW -deststoretype PKCS12 "
           "(a JDK from 8u301 on), or openssl pkcs12 -legacy -in OLD -nodes | openssl pkcs12 -export -out NEW "
           "(OpenSSL 3)")
MAX_ITERATIONS = 5_000_000  # PKCS12KeyStore's bound (keytool writes 10,000, OpenSSL 2,048)


class Pkcs12Error(ValueError):
    pass


def trusted_certificates(data: bytes, password: str | None) -> list[bytes]:
    """The DER certificates Java trusts in the PKCS12 store ``data``, in the store's order."""
    try:
        bags = _bags(data, password)
        key_ids = {attrs.get(LOCAL_KEY_ID) for bag_id, _, attrs in bags if bag_id in (KEY_BAG, SHROUDED_KEY_BAG)}
        key_ids.discard(None)
        return [_certificate(value) for bag_id, value, attrs in bags
                if bag_id == CERT_BAG and (TRUSTED_KEY_USAGE in attrs or attrs.get(LOCAL_KEY_ID) in key_ids)]
    except Pkcs12Error:
        raise
    except (ValueError, IndexError) as e:
        raise Pkcs12Error(f"malformed PKCS12: {e}") from None


def key_entries(data: bytes, password: str | None) -> list[tuple[str | None, bytes, list[bytes]]]:
    """Each private key entry as PKCS12KeyStore reads it: (its alias, the friendly name in lower case or
    None; the PKCS#8 key, DER; its chain: the certificate of the key's localKeyId, then each issuer found
    among the store's certificates by name, up to a self-issued one). Keys without a certificate are left
    out, as Java's key manager leaves them out."""
    try:
        bags = _bags(data, password)
        certificates = [_certificate(value) for bag_id, value, _ in bags if bag_id == CERT_BAG]
        by_key_id = {attrs[LOCAL_KEY_ID]: _certificate(value) for bag_id, value, attrs in bags
                     if bag_id == CERT_BAG and LOCAL_KEY_ID in attrs}
        entries = []
        for bag_id, value, attrs in bags:
            if bag_id not in (KEY_BAG, SHROUDED_KEY_BAG) or attrs.get(LOCAL_KEY_ID) not in by_key_id:
                continue
            if bag_id == SHROUDED_KEY_BAG:
                algorithm, encrypted = der.children(value)
                value = _decrypt(algorithm, der.value(encrypted, der.OCTET_STRING), password or "")
            name = attrs.get(FRIENDLY_NAME)
            alias = name.decode("utf-16-be", "replace").lower() if name is not None else None
            entries.append((alias, value, _chain(by_key_id[attrs[LOCAL_KEY_ID]], certificates)))
        return entries
    except Pkcs12Error:
        raise
    except (ValueError, IndexError) as e:
        raise Pkcs12Error(f"malformed PKCS12: {e}") from None


def _chain(first: bytes, certificates: list[bytes]) -> list[bytes]:
    from cryptography import x509
    loaded = [x509.load_der_x509_certificate(c) for c in certificates]
    chain, cert = [first], x509.load_der_x509_certificate(first)
    while cert.issuer != cert.subject:
        issuer = next((i for i, c in enumerate(loaded) if c.subject == cert.issuer), None)
        if issuer is None or certificates[issuer] in chain:
            break
        chain.append(certificates[issuer])
        cert = loaded[issuer]
    return chain


def _bags(data: bytes, password: str | None) -> list[tuple[bytes, bytes, dict]]:
    _, auth_safe, *_ = der.children(data)
    kind, content = _content_info(auth_safe)
    if kind != DATA:
        raise Pkcs12Error("a PKCS12 store signed with a public key is not read")
    bags: list[tuple[bytes, bytes, dict]] = []
    for info in der.children(der.value(content, der.OCTET_STRING)):
        _collect(_safe_contents(info, password), bags)
    return bags


def _content_info(info: bytes) -> tuple[bytes, bytes]:
    kind, *content = der.children(info)
    return der.value(kind, der.OID), der.value(content[0], 0xA0) if content else b""


def _safe_contents(info: bytes, password: str | None) -> bytes:
    kind, content = _content_info(info)
    if kind == DATA:
        return der.value(content, der.OCTET_STRING)
    if kind != ENCRYPTED_DATA:
        raise Pkcs12Error("a PKCS12 content that is neither data nor password-encrypted data")
    _, encrypted_info = der.children(content)[:2]
    _, algorithm, encrypted = der.children(encrypted_info)[:3]
    if encrypted[0] == 0xA0:  # constructed, as BER may write it: the octet strings inside, joined
        encrypted = b"".join(der.value(part, der.OCTET_STRING) for part in der.children(encrypted, 0xA0))
    else:
        encrypted = der.value(encrypted, 0x80)
    return _decrypt(algorithm, encrypted, password or "")


def _collect(safe_contents: bytes, bags: list) -> None:
    """Each SafeBag as (bag type, its value, {attribute type: first value}); nested bags too."""
    for bag in der.children(safe_contents):
        bag_id, value, *attributes = der.children(bag)
        bag_id, value = der.value(bag_id, der.OID), der.value(value, 0xA0)
        if bag_id == SAFE_CONTENTS_BAG:
            _collect(value, bags)
            continue
        attrs = {}
        for attribute in der.children(attributes[0], der.SET) if attributes else ():
            kind, values = der.children(attribute)
            first = der.children(values, der.SET)
            attrs[der.value(kind, der.OID)] = der.value(first[0], first[0][0]) if first else b""
        bags.append((bag_id, value, attrs))


def _certificate(cert_bag: bytes) -> bytes:
    kind, value = der.children(cert_bag)
    if der.value(kind, der.OID) != X509_CERT:
        raise Pkcs12Error("a certificate bag that is not X.509")
    return der.value(der.value(value, 0xA0), der.OCTET_STRING)


def _decrypt(algorithm: bytes, encrypted: bytes, password: str) -> bytes:
    oid, params = der.children(algorithm)
    oid = der.value(oid, der.OID)
    if oid == PBES2:
        kdf, scheme = der.children(params)
        kdf_oid, kdf_params = der.children(kdf)
        cipher_oid, iv = der.children(scheme)
        if der.value(kdf_oid, der.OID) != PBKDF2 or der.value(cipher_oid, der.OID) not in CIPHERS:
            raise Pkcs12Error("a PBES2 key derivation or cipher other than PBKDF2 with AES or triple DES")
        salt, iterations, *rest = der.children(kdf_params)
        prf = next((PRFS.get(der.value(der.children(r)[0], der.OID)) for r in rest if r[0] == der.SEQUENCE), "sha1")
        name, size = CIPHERS[der.value(cipher_oid, der.OID)]
        if prf is None:
            raise Pkcs12Error("a PBKDF2 pseudo-random function other than HMAC-SHA-1/2")
        key = hashlib.pbkdf2_hmac(prf, password.encode(), der.value(salt, der.OCTET_STRING),
                                  _iterations(iterations), size)
        return _cbc_decrypt(name, key, der.value(iv, der.OCTET_STRING), encrypted)
    if oid == PBE_SHA1_3DES or oid in PBE_SHA1_RC2:
        salt, iterations = der.children(params)
        salt, count = der.value(salt, der.OCTET_STRING), _iterations(iterations)
        secret = (password + "\0").encode("utf-16-be")  # a BMPString with its terminating zero
        name, size = ("DES3", 24) if oid == PBE_SHA1_3DES else ("RC2", PBE_SHA1_RC2[oid])
        return _cbc_decrypt(name, _pkcs12_kdf(secret, salt, count, 1, size), _pkcs12_kdf(secret, salt, count, 2, 8),
                            encrypted)
    raise Pkcs12Error(f"its certificates are encrypted with {der.dotted(oid)}, a cipher Java's PKCS12 stores do not "
                      f"use; rewrite it: {REWRITE}")


def _iterations(element: bytes) -> int:
    count = der.integer(element)
    if not 0 < count <= MAX_ITERATIONS:
        raise Pkcs12Error(f"an iteration count of {count}")
    return count


def _pkcs12_kdf(secret: bytes, salt: bytes, iterations: int, purpose: int, size: int) -> bytes:
    """RFC 7292 appendix B.2 with SHA-1: u = 20, v = 64."""
    def stretch(data: bytes) -> bytes:  # repeated to a whole number of 64-byte blocks
        length = 64 * -(-len(data) // 64)
        return (data * (length // len(data) + 1))[:length] if data else b""
    diversifier, i = bytes([purpose]) * 64, bytearray(stretch(salt) + stretch(secret))
    out = b""
    while len(out) < size:
        a = hashlib.sha1(diversifier + i).digest()
        for _ in range(iterations - 1):
            a = hashlib.sha1(a).digest()
        out += a
        b = int.from_bytes((a * 4)[:64], "big")
        for j in range(0, len(i), 64):
            block = (int.from_bytes(i[j:j + 64], "big") + b + 1) % (1 << 512)
            i[j:j + 64] = block.to_bytes(64, "big")
    return out[:size]


def _cbc_decrypt(name: str, key: bytes, iv: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
    if name == "RC2":
        return _unpad(_rc2_cbc_decrypt(key, iv, data), len(iv))
    if name == "AES":
        algorithm = algorithms.AES(key)
    else:
        try:
            from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
        except ImportError:  # cryptography before 43
            TripleDES = algorithms.TripleDES
        algorithm = TripleDES(key)
    decryptor = Cipher(algorithm, modes.CBC(iv)).decryptor()
    return _unpad(decryptor.update(data) + decryptor.finalize(), len(iv))


def _rc2_cbc_decrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    """RC2 whose effective key length is the key's own (40 bits for pbeWithSHAAnd40BitRC2-CBC)."""
    try:
        from Crypto.Cipher import ARC2
    except ImportError:
        raise Pkcs12Error(f"its certificates are encrypted with {8 * len(key)}-bit RC2 (pbeWithSHAAnd{8 * len(key)}"
                          f"BitRC2-CBC), which needs the pycryptodome package: pip install 'kafka-shim[certs]'; or "
                          f"rewrite it: {REWRITE}") from None
    if len(data) % 8:
        raise Pkcs12Error("its certificates do not decrypt with the password")
    return ARC2.new(key, ARC2.MODE_CBC, iv=iv, effective_keylen=8 * len(key)).decrypt(data)


def _unpad(padded: bytes, block: int) -> bytes:
    pad = padded[-1] if padded else 0
    if not 1 <= pad <= block or padded[-pad:] != bytes([pad]) * pad:
        raise Pkcs12Error("its certificates do not decrypt with the password")
    return padded[:-pad]
