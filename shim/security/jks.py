"""Java's own key store formats, JKS and JCEKS, read as Java reads them (sun.security.provider.JavaKeyStore,
com.sun.crypto.provider.JceKeyStore, and the two KeyProtectors that guard their private keys).

A store is a magic number, a version, a count of entries and the entries: private keys (an
EncryptedPrivateKeyInfo and its certificate chain) and trusted certificates, ending with a SHA-1 of
the store password, the words "Mighty Aphrodite" and everything before. A JKS key is XORed with a
SHA-1 key stream of its password; a JCEKS key is encrypted with Sun's PBEWithMD5AndTripleDES. The
hashes come from hashlib and triple DES from the ``cryptography`` package: no library reads these
formats that is still kept up (pyjks, the one there is, had its last release in 2020).

A JCEKS secret-key entry is a serialized javax.crypto.SealedObject with no length before it (read with
shim.security.javaser): TLS has no use for it, but Java's key manager opens every key entry, a secret
key's too, with the key password, so its seal is checked as Java's KeyProtector unseals it.
"""

from __future__ import annotations

import hashlib
import hmac
from dataclasses import dataclass

from . import der, javaser

MAGIC = {b"\xfe\xed\xfe\xed": "JKS", b"\xce\xce\xce\xce": "JCEKS"}
TAMPERED = "Keystore was tampered with, or password was incorrect"
UNRECOVERABLE = "Cannot recover key"
JKS_KEY_PROTECTOR = der.oid("1.3.6.1.4.1.42.2.17.1.1")
JCE_KEY_PROTECTOR = der.oid("1.3.6.1.4.1.42.2.19.1")  # PBEWithMD5AndTripleDES
MAX_ITERATIONS = 5_000_000  # JceKeyStore's bound on a key's PBE iteration count
PRIVATE_KEY, TRUSTED_CERT, SECRET_KEY = 1, 2, 3


class JavaStoreError(ValueError):
    pass


@dataclass(frozen=True)
class KeyEntry:
    alias: str
    protected: bytes  # the EncryptedPrivateKeyInfo, DER
    chain: tuple[bytes, ...]  # DER certificates, the key's own first


@dataclass(frozen=True)
class SecretEntry:
    alias: str
    seal_algorithm: str
    params: bytes  # the PBE parameters, DER
    sealed: bytes  # the serialized key, encrypted


@dataclass(frozen=True)
class JavaStore:
    fmt: str  # JKS or JCEKS
    keys: tuple[KeyEntry, ...]
    certificates: tuple[bytes, ...]  # the trusted-certificate entries, DER
    secrets: tuple[SecretEntry, ...] = ()  # JCEKS secret keys: no part in TLS

    def trusted(self) -> list[bytes]:
        """What Java's TrustManagerFactory trusts in a store: each trusted-certificate entry, and of each
        private-key entry its own certificate (not the rest of its chain)."""
        return [*self.certificates, *(k.chain[0] for k in self.keys if k.chain)]


def is_java_store(data: bytes) -> bool:
    return data[:4] in MAGIC


def load(data: bytes, password: str | None) -> JavaStore:
    """The store's entries; with a password its integrity is checked first (Java skips it without one)."""
    fmt = MAGIC.get(data[:4])
    if fmt is None or len(data) < 32:
        raise JavaStoreError("Invalid keystore format")
    if password is not None:
        expected = hashlib.sha1(_utf16(password) + b"Mighty Aphrodite" + data[:-20]).digest()
        if not hmac.compare_digest(expected, data[-20:]):
            raise JavaStoreError(TAMPERED)
    r = _Reader(data, 4, len(data) - 20)
    version = r.u32()
    if version not in (1, 2):
        raise JavaStoreError("Invalid keystore format")
    keys, certificates, secrets = [], [], []
    for _ in range(r.u32()):
        tag, alias = r.u32(), r.utf()
        r.take(8)  # the entry's creation date
        if tag == PRIVATE_KEY:
            protected = r.take(r.u32())
            keys.append(KeyEntry(alias, protected, tuple(r.certificate(version) for _ in range(r.u32()))))
        elif tag == TRUSTED_CERT:
            certificates.append(r.certificate(version))
        elif tag == SECRET_KEY and fmt == "JCEKS":
            secrets.append(_secret_entry(r, alias))
        else:
            raise JavaStoreError("Unrecognized keystore entry")
    return JavaStore(fmt, tuple(keys), tuple(certificates), tuple(secrets))


def _secret_entry(r: "_Reader", alias: str) -> SecretEntry:
    """A JCEKS secret key: a SealedObjectForKeyProtector serialized in a stream of its own."""
    try:
        sealed, r.pos = javaser.read_object(r.data, r.pos, r.end)
    except javaser.JavaSerialError as e:
        raise JavaStoreError(f"Invalid keystore format: the secret key entry {alias!r}: {e}") from None
    fields = sealed if isinstance(sealed, dict) else {}
    params, content, algorithm = fields.get("encodedParams"), fields.get("encryptedContent"), fields.get("sealAlg")
    if not (isinstance(params, bytes) and isinstance(content, bytes) and isinstance(algorithm, str)):
        raise JavaStoreError(f"Invalid keystore format: the secret key entry {alias!r} is not a sealed key")
    return SecretEntry(alias, algorithm, params, content)


def recover_secret(entry: SecretEntry, password: str) -> None:
    """Unseal a secret key as Java's KeyManagerFactory does for every key entry: JavaStoreError(UNRECOVERABLE)
    unless it opens with ``password`` (the key itself is of no use to TLS)."""
    if entry.seal_algorithm.upper() != "PBEWITHMD5ANDTRIPLEDES":
        raise JavaStoreError(f"the secret key {entry.alias!r} is sealed with {entry.seal_algorithm}, not Java's "
                             f"PBEWithMD5AndTripleDES")
    if not _jce_recover(entry.sealed, password, entry.params).startswith(javaser.MAGIC):
        raise JavaStoreError(UNRECOVERABLE)


def recover_key(entry: KeyEntry, password: str) -> bytes:
    """The entry's private key as PKCS#8 DER, or JavaStoreError(UNRECOVERABLE) for a wrong password."""
    try:
        algorithm, encrypted = der.children(entry.protected)
        oid, *params = der.children(algorithm)
        oid, encrypted = der.value(oid, der.OID), der.value(encrypted, der.OCTET_STRING)
    except (ValueError, IndexError):
        raise JavaStoreError(f"the key of {entry.alias!r} is not an EncryptedPrivateKeyInfo") from None
    if oid == JKS_KEY_PROTECTOR:
        return _jks_recover(encrypted, password)
    if oid == JCE_KEY_PROTECTOR and params:
        return _jce_recover(encrypted, password, params[0])
    raise JavaStoreError(f"the key of {entry.alias!r} is protected with an algorithm Java's key stores do not use")


def _jks_recover(encrypted: bytes, password: str) -> bytes:
    """sun.security.provider.KeyProtector: salt (20) | key XOR SHA-1 stream | SHA-1(password | key)."""
    if len(encrypted) < 40:
        raise JavaStoreError(UNRECOVERABLE)
    secret, salt, body, check = _utf16(password), encrypted[:20], encrypted[20:-20], encrypted[-20:]
    stream, digest = bytearray(), salt
    while len(stream) < len(body):
        digest = hashlib.sha1(secret + digest).digest()
        stream += digest
    key = bytes(a ^ b for a, b in zip(body, stream))
    if not hmac.compare_digest(hashlib.sha1(secret + key).digest(), check):
        raise JavaStoreError(UNRECOVERABLE)
    return key


def _jce_recover(encrypted: bytes, password: str, params: bytes) -> bytes:
    """com.sun.crypto.provider.KeyProtector: PBEWithMD5AndTripleDES (PBES1Core's key derivation)."""
    try:
        salt, count = der.children(params)
        salt, iterations = der.value(salt, der.OCTET_STRING), der.integer(count)
        secret = password.encode("ascii")
    except (ValueError, IndexError, UnicodeEncodeError):
        raise JavaStoreError(UNRECOVERABLE) from None
    if len(salt) != 8 or not 0 < iterations <= MAX_ITERATIONS or len(encrypted) % 8:
        raise JavaStoreError(UNRECOVERABLE)
    halves = [salt[:4], salt[4:]]
    if halves[0] == halves[1]:  # PBES1Core's "inversion" of the first half, as it is written
        a, b, _, d = halves[0]
        halves[0] = bytes((d, a, b, d))
    derived = b""
    for half in halves:
        for _ in range(iterations):
            half = hashlib.md5(half + secret).digest()
        derived += half
    padded = _des3_cbc_decrypt(derived[:24], derived[24:], encrypted)
    pad = padded[-1] if padded else 0
    if not 1 <= pad <= 8 or padded[-pad:] != bytes([pad]) * pad:
        raise JavaStoreError(UNRECOVERABLE)
    return padded[:-pad]


def _des3_cbc_decrypt(key: bytes, iv: bytes, data: bytes) -> bytes:
    from cryptography.hazmat.primitives.ciphers import Cipher, modes
    try:
        from cryptography.hazmat.decrepit.ciphers.algorithms import TripleDES
    except ImportError:  # cryptography before 43
        from cryptography.hazmat.primitives.ciphers.algorithms import TripleDES
    decryptor = Cipher(TripleDES(key), modes.CBC(iv)).decryptor()
    return decryptor.update(data) + decryptor.finalize()


def _utf16(password: str) -> bytes:
    """A Java char[] as the stores hash it: each UTF-16 code unit, high byte first."""
    return password.encode("utf-16-be", "surrogatepass")


class _Reader:
    def __init__(self, data: bytes, pos: int, end: int):
        self.data, self.pos, self.end = data, pos, end

    def take(self, n: int) -> bytes:
        if n < 0 or self.pos + n > self.end:
            raise JavaStoreError("Invalid keystore format: it ends within an entry")
        self.pos += n
        return self.data[self.pos - n:self.pos]

    def u32(self) -> int:
        return int.from_bytes(self.take(4), "big")

    def utf(self) -> str:
        """Java's DataInput.readUTF: a two-byte length, then modified UTF-8."""
        return self.take(int.from_bytes(self.take(2), "big")).decode("utf-8", "replace")

    def certificate(self, version: int) -> bytes:
        if version == 2 and (kind := self.utf()) != "X.509":
            raise JavaStoreError(f"a certificate of type {kind!r}: only X.509 certificates serve TLS")
        return self.take(self.u32())
