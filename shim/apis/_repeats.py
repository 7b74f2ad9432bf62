"""Answers to requests that name one entity many times (a group id): Kafka answers every name, a
repeated one too, so kafka-shim does, from one build per entity, and bounds the answer.

A 1 MiB DescribeGroups, ConsumerGroupDescribe or ShareGroupDescribe can name the same group half
a million times; each repeat was built afresh (members, assignments, subscriptions), and the
encoded answer is the group's entry as many times: a Stable group of ten members with a kilobyte
of metadata each becomes 5 GB. Each entity's entry is now built and measured once, and an answer
whose entries would pass MAX_ANSWER_BYTES closes the connection with the warning of an answer that
cannot be encoded (Kafka would build it, or fail with an OutOfMemoryError). No client sends
repeats: kafka-clients' Admin asks for a set of groups.
"""

from __future__ import annotations

from typing import Callable

from kio.serial.errors import SerialError

from ..protocol.framing import FrameError
from ..protocol.messages import encoded_size

MAX_ANSWER_BYTES = 64 * 1024 * 1024  # of one answer's repeated entries: far above a real group's


class Repeats:
    def __init__(self, api_name: str) -> None:
        self.api_name = api_name
        self.built: dict = {}  # key -> (entry, its encoded size)
        self.size = 0

    def entry(self, key, build: Callable[[], object]):
        """``build()``'s entry for ``key``, built the first time ``key`` is named."""
        kept = self.built.get(key)
        if kept is None:
            entry = build()
            try:
                kept = self.built[key] = (entry, encoded_size(entry))
            except (SerialError, TypeError, ValueError) as exc:  # as shim.apis.dispatch closes for one
                raise FrameError(f"cannot encode the {self.api_name} response: {exc}") from exc
        self.size += kept[1]
        if self.size > MAX_ANSWER_BYTES:
            raise FrameError(f"cannot encode the {self.api_name} response: its entries pass "
                             f"{MAX_ANSWER_BYTES} bytes")
        return kept[0]
