"""SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677), the server side, sans-IO.

Credentials are stored salted, as Kafka stores them: salt, StoredKey, ServerKey and iterations;
the password itself is never kept. Messages and errors follow Kafka's ScramSaslServer: a failure
that must not reveal whether the user exists raises :class:`SaslFailure` without a message of its
own (the authenticator answers Kafka's generic text), one Kafka words for the client carries it.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
import unicodedata
from dataclasses import dataclass

MIN_ITERATIONS = 4096  # Kafka: ScramMechanism.minIterations, for both mechanisms
MAX_ITERATIONS = 16384  # Kafka: AlterUserScramCredentials refuses more (ScramMechanism.maxIterations)
HASHES = {"SCRAM-SHA-256": "sha256", "SCRAM-SHA-512": "sha512"}


class SaslFailure(Exception):
    """Authentication failed. ``client_message`` is what Kafka tells the client (None: its generic
    'invalid credentials' text, which says nothing about why)."""

    def __init__(self, reason: str, client_message: str | None = None) -> None:
        super().__init__(reason)
        self.client_message = client_message


@dataclass(frozen=True, slots=True)
class ScramCredential:
    salt: bytes
    stored_key: bytes
    server_key: bytes
    iterations: int

    def to_json(self) -> dict:
        b64 = lambda b: base64.b64encode(b).decode()  # noqa: E731
        return {"salt": b64(self.salt), "stored_key": b64(self.stored_key), "server_key": b64(self.server_key),
                "iterations": self.iterations}

    @classmethod
    def from_json(cls, d: dict) -> "ScramCredential":
        return cls(base64.b64decode(d["salt"]), base64.b64decode(d["stored_key"]),
                   base64.b64decode(d["server_key"]), int(d["iterations"]))


def _hmac(digest: str, key: bytes, msg: bytes) -> bytes:
    return hmac.new(key, msg, digest).digest()


def credential_from_salted(mechanism: str, salted_password: bytes, salt: bytes, iterations: int) -> ScramCredential:
    """From SaltedPassword, which is what AlterUserScramCredentials carries (the client salts)."""
    digest = HASHES[mechanism]
    client_key = _hmac(digest, salted_password, b"Client Key")
    stored_key = hashlib.new(digest, client_key).digest()
    server_key = _hmac(digest, salted_password, b"Server Key")
    return ScramCredential(salt, stored_key, server_key, iterations)


def make_credential(mechanism: str, password: str, iterations: int = MIN_ITERATIONS,
                    salt: bytes | None = None) -> ScramCredential:
    salt = secrets.token_bytes(32) if salt is None else salt
    normalized = unicodedata.normalize("NFKC", password).encode()  # Kafka: ScramFormatter.normalize
    salted = hashlib.pbkdf2_hmac(HASHES[mechanism], normalized, salt, iterations)
    return credential_from_salted(mechanism, salted, salt, iterations)


# Kafka: ScramMessages.ClientFirstMessage, only the 'n' channel-binding flag (no channel binding)
_PRINTABLE = r"[\x21-\x2b\x2d-\x7e]+"
_SASLNAME = r"(?:[\x01-\x2b\x2d-\x3c\x3e-\x7f]|=2C|=3D)+"
_EXTENSIONS = r"(,[a-zA-Z]=[^,]*)*"
_CLIENT_FIRST = re.compile(
    rf"(?P<gs2>n,(?:a=(?P<authzid>{_SASLNAME}))?,)(?P<bare>n=(?P<name>{_SASLNAME}),r=(?P<nonce>{_PRINTABLE})"
    rf"(?P<ext>{_EXTENSIONS}))", re.S)
_CLIENT_FINAL = re.compile(
    rf"(?P<without_proof>c=(?P<cbind>[A-Za-z0-9+/=]+),r=(?P<nonce>{_PRINTABLE}){_EXTENSIONS}),p=(?P<proof>[A-Za-z0-9+/=]+)",
    re.S)


def username(saslname: str) -> str:
    """RFC 5802 saslname -> username: '=2C' is ',' and '=3D' is '='."""
    return saslname.replace("=2C", ",").replace("=3D", "=")


class ScramServer:
    """One SCRAM exchange: client-first -> server-first, client-final -> server-final.

    ``lookup(username)`` gives the user's :class:`ScramCredential` for this mechanism or None.
    """

    def __init__(self, mechanism: str, lookup, nonce: str | None = None, nonce_check: str = "exact") -> None:
        self.mechanism = mechanism
        self.nonce_check = nonce_check  # "exact", "suffix" or "none": KafkaRelease.scram_nonce_check
        self.digest = HASHES[mechanism]
        self.lookup = lookup
        self.server_nonce = nonce or base64.b64encode(secrets.token_bytes(24)).decode().rstrip("=")
        self.complete = False
        self.authorization_id: str | None = None
        self._state = "first"
        self._credential: ScramCredential | None = None

    def evaluate(self, token: bytes) -> bytes:
        if self._state == "first":
            return self._first(token)
        if self._state == "final":
            return self._final(token)
        self._state = "failed"
        raise SaslFailure(f"Unexpected challenge in Sasl server state {self._state.upper()}")

    def _fail(self, reason: str, client_message: str | None = None):
        self._state, self._credential = "failed", None
        return SaslFailure(reason, client_message)

    def _first(self, token: bytes) -> bytes:
        m = _CLIENT_FIRST.fullmatch(_text(token, self))
        if m is None:
            raise self._fail("Invalid SCRAM client first message format")
        user = username(m["name"])
        credential = self.lookup(user)
        if credential is None:
            raise self._fail("Authentication failed: Invalid user credentials")
        if m["authzid"] and username(m["authzid"]) != user:
            raise self._fail("authorization id differs", "Authentication failed: Client requested an "
                             "authorization id that is different from username")
        if credential.iterations < MIN_ITERATIONS:
            raise self._fail(f"Iterations {credential.iterations} is less than the minimum {MIN_ITERATIONS}")
        self._credential, self.authorization_id = credential, user
        self._gs2, self._client_first_bare = m["gs2"], m["bare"]
        nonce = m["nonce"] + self.server_nonce
        self._server_first = f"r={nonce},s={base64.b64encode(credential.salt).decode()},i={credential.iterations}"
        self._nonce, self._state = nonce, "final"
        return self._server_first.encode()

    def _final(self, token: bytes) -> bytes:
        m = _CLIENT_FINAL.fullmatch(_text(token, self))
        if m is None:
            raise self._fail("Invalid SCRAM client final message format")
        if not _nonce_matches(m["nonce"], self._nonce, self.nonce_check):
            raise self._fail("Invalid client nonce in the final client message.")
        if _b64(m["cbind"], self) != self._gs2.encode():
            raise self._fail("Invalid channel binding in the final client message.")
        auth_message = f"{self._client_first_bare},{self._server_first},{m['without_proof']}".encode()
        credential = self._credential
        proof = _b64(m["proof"], self)
        signature = _hmac(self.digest, credential.stored_key, auth_message)
        if len(proof) != len(signature):
            raise self._fail("Invalid client credentials")
        client_key = bytes(a ^ b for a, b in zip(proof, signature))
        if not hmac.compare_digest(hashlib.new(self.digest, client_key).digest(), credential.stored_key):
            raise self._fail("Invalid client credentials")
        server_signature = _hmac(self.digest, credential.server_key, auth_message)
        self._state, self._credential, self.complete = "complete", None, True
        return b"v=" + base64.b64encode(server_signature)


def _nonce_matches(got: str, sent: str, check: str) -> bool:
    # Kafka: ScramSaslServer.evaluateResponse, RECEIVE_CLIENT_FINAL_MESSAGE, by release
    if check == "exact":
        return got == sent
    return got.endswith(sent) if check == "suffix" else True


def _text(token: bytes, server: ScramServer) -> str:
    try:
        return bytes(token).decode("utf-8")
    except UnicodeDecodeError:
        raise server._fail("SCRAM message is not UTF-8") from None


def _b64(value: str, server: ScramServer) -> bytes:
    try:
        return base64.b64decode(value, validate=True)
    except ValueError:
        raise server._fail("Invalid base64 in the final client message") from None
