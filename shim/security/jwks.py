"""A JSON Web Key Set file (RFC 7517) and JWS signature checks (RFC 7515/7518) with ``cryptography``.

RSA (RS256/384/512, PS256/384/512) and EC (ES256/384/512) public keys. A key is a candidate for a
token when its ``kid`` is the header's (if the header names one), its type fits the algorithm, its
``use`` is absent or ``sig`` and its ``alg`` absent or the header's, as jose4j's
VerificationJwkSelector chooses; the signature is good when a candidate verifies it.
"""

from __future__ import annotations

import base64
import json
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlparse

_HASHES = {"256": "SHA256", "384": "SHA384", "512": "SHA512"}
_CURVES = {"P-256": ("SECP256R1", "256"), "P-384": ("SECP384R1", "384"), "P-521": ("SECP521R1", "512")}


@dataclass(frozen=True)
class Jwk:
    kid: str | None
    kty: str
    alg: str | None
    use: str | None
    key: object


def _int(value: str) -> int:
    return int.from_bytes(base64.urlsafe_b64decode(value + "=" * (-len(value) % 4)), "big")


def jwks_path(url: str) -> Path:
    """``file:///path/jwks.json`` or a plain path (kafka-shim reads no HTTP endpoint)."""
    if url.startswith("file:"):
        return Path(unquote(urlparse(url).path))
    if "://" in url:
        raise ValueError(f"sasl.oauthbearer.jwks.endpoint.url must be a file: URL here, not {url!r}")
    return Path(url)


def load_jwks(url: str) -> list[Jwk]:
    from cryptography.hazmat.primitives.asymmetric import ec, rsa

    doc = json.loads(jwks_path(url).read_text())
    keys = []
    for k in doc.get("keys", []):
        if k.get("kty") == "RSA":
            key = rsa.RSAPublicNumbers(_int(k["e"]), _int(k["n"])).public_key()
        elif k.get("kty") == "EC" and k.get("crv") in _CURVES:
            curve = getattr(ec, _CURVES[k["crv"]][0])()
            key = ec.EllipticCurvePublicNumbers(_int(k["x"]), _int(k["y"]), curve).public_key()
        else:
            continue  # a key type no supported algorithm uses
        keys.append(Jwk(k.get("kid"), k["kty"], k.get("alg"), k.get("use"), key))
    if not keys:
        raise ValueError(f"{url}: no RSA or EC public key in the JWKS")
    return keys


def verify(keys: list[Jwk], header: dict, signing_input: bytes, signature: bytes) -> bool:
    alg = header.get("alg")
    if not isinstance(alg, str) or alg[:2] not in ("RS", "PS", "ES") or alg[2:] not in _HASHES:
        return False  # "none" and HMAC algorithms are refused (Kafka: DISALLOW_NONE, public keys only)
    kty = "EC" if alg.startswith("ES") else "RSA"
    kid = header.get("kid")
    for jwk in keys:
        if jwk.kty != kty or (kid is not None and jwk.kid != kid) or jwk.use not in (None, "sig"):
            continue
        if jwk.alg not in (None, alg):
            continue
        if _verifies(jwk.key, alg, signing_input, signature):
            return True
    return False


def _verifies(key, alg: str, signing_input: bytes, signature: bytes) -> bool:
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec, padding
    from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature

    digest = getattr(hashes, _HASHES[alg[2:]])()
    try:
        if alg.startswith("ES"):
            half = len(signature) // 2
            if len(signature) % 2 or not half:
                return False
            der = encode_dss_signature(int.from_bytes(signature[:half], "big"), int.from_bytes(signature[half:], "big"))
            key.verify(der, signing_input, ec.ECDSA(digest))
        elif alg.startswith("PS"):
            key.verify(signature, signing_input, padding.PSS(padding.MGF1(digest), padding.PSS.DIGEST_LENGTH), digest)
        else:
            key.verify(signature, signing_input, padding.PKCS1v15(), digest)
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
