"""SASL/PLAIN (RFC 4616), the server side, with Kafka's PlainSaslServer messages."""

from __future__ import annotations

from .scram import SaslFailure


class PlainServer:
    mechanism = "PLAIN"

    def __init__(self, verify) -> None:
        self.verify = verify  # verify(user, password) -> bool
        self.complete = False
        self.authorization_id: str | None = None

    def evaluate(self, token: bytes) -> bytes:
        try:
            text = bytes(token).decode("utf-8")
        except UnicodeDecodeError:
            raise SaslFailure("SASL/PLAIN response is not UTF-8") from None
        # Kafka: PlainSaslServer.split, missing tokens are empty and a fourth is ignored
        authzid, user, password = (text.split("\x00") + ["", ""])[:3]
        if not user:
            raise SaslFailure("Authentication failed: username not specified")
        if not password:
            raise SaslFailure("Authentication failed: password not specified")
        if not self.verify(user, password):
            raise SaslFailure("bad password", "Authentication failed: Invalid username or password")
        if authzid and authzid != user:
            raise SaslFailure("authzid", "Authentication failed: Client requested an authorization id that is "
                              "different from username")
        self.authorization_id, self.complete = user, True
        return b""
