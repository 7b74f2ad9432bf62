"""The crash soak's group clients' own logs, kept in a ring and written out beside the brokers' logs
when a group takes long to recover after a restart (``SLOW_RECOVERY_S``): librdkafka's consumer-group
debug (``debug=cgrp``) of the two classic members and aiokafka's group coordinator, so that what a
member waited for (a member of before the kill to time out, a rebalance to complete) can be read off
beside the broker's rebalance lines."""

from __future__ import annotations

import collections
import logging
import time
from pathlib import Path

SLOW_RECOVERY_S = 5.0
LINES = 20_000


class RingLog(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: collections.deque = collections.deque(maxlen=LINES)
        self.setFormatter(logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s"))

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


RING = RingLog()


def client_logger(name: str) -> logging.Logger:
    """A logger into the ring alone (librdkafka's ``logger`` setting, aiokafka's module loggers)."""
    logger = logging.getLogger(name)
    logger.setLevel(logging.DEBUG)
    logger.propagate = False
    if RING not in logger.handlers:
        logger.addHandler(RING)
    return logger


def write_slow_recovery(path: Path, recover_s: dict, restarted_at: float, killed_log: str, restarted_log: str) -> None:
    """``recover_s``: each member's time from the restart's ready line to its first acknowledged commit."""
    wall = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(time.time() - (time.monotonic() - restarted_at)))
    path.write_text(f"recovery seconds per member: {recover_s}\nready line at about {wall}\n"
                    f"--- killed broker (tail) ---\n{''.join(killed_log.splitlines(True)[-400:])}"
                    f"--- restarted broker ---\n{restarted_log}\n--- clients ---\n" + "\n".join(RING.lines))
