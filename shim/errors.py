"""Kafka outcomes as typed errors.

Domain code raises :class:`KafkaError` carrying the protocol error code; the API layer turns it
into the response's error field. Only a malformed frame closes a connection (see
:class:`shim.protocol.framing.FrameError`), never a KafkaError.
"""

from __future__ import annotations

from kio.schema.errors import ErrorCode

__all__ = ["ErrorCode", "KafkaError"]


class KafkaError(Exception):
    """A request outcome that the protocol reports as an error code."""

    def __init__(self, code: ErrorCode, message: str | None = None) -> None:
        super().__init__(message or code.name)
        self.code = code
        self.message = message

    def __repr__(self) -> str:
        return f"KafkaError({self.code.name}, {self.message!r})"
