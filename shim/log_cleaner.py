"""The log cleaner's asyncio shell (Kafka: LogCleaner's CleanerThread and Throttler).

One task cleans the filthiest compacted log that qualifies (shim.storage.cleaner_manager), a chunk
of log.cleaner.io.buffer.size bytes at a time, giving the event loop back after every chunk and
sleeping as long as log.cleaner.io.max.bytes.per.second asks; with nothing to clean it waits
log.cleaner.backoff.ms. ``clean_now()`` runs a pass at once (tests and tools wait on it, never on
a sleep).
"""

from __future__ import annotations

import asyncio
import logging
import time

from .configs.catalogue import BROKER_CONFIGS
from .coordinators.loader import LOADED_TOPICS
from .errors import KafkaError
from .storage import cleaner_manager as cm

log = logging.getLogger(__name__)


def cleaner_config(props: dict[str, str]) -> cm.CleanerConfig:
    """The broker's log.cleaner.* properties, typed (the --override/--config/AlterConfigs values)."""
    typed = {n: BROKER_CONFIGS[n].parse(v) for n, v in props.items()
             if n.startswith("log.cleaner.") and n in BROKER_CONFIGS}
    return cm.CleanerConfig.from_properties(typed)


class Throttler:
    """Kafka: utils.Throttler -- sleep whenever the rate since the window began exceeds the bound."""

    def __init__(self, rate: float, clock=time.monotonic) -> None:
        self.rate, self.clock = rate, clock
        self._start, self._bytes = clock(), 0

    def delay(self, n: int) -> float:
        """Seconds to wait after ``n`` more bytes of I/O."""
        self._bytes += n
        elapsed = self.clock() - self._start
        if self.rate == float("inf") or self.rate <= 0:
            return 0.0
        wait = self._bytes / self.rate - elapsed
        if elapsed > 1.0:  # a new window each second, as Kafka's checkIntervalMs
            self._start, self._bytes = self.clock(), 0
        return max(wait, 0.0)


class LogCleaner:
    def __init__(self, node) -> None:
        self.node = node
        self.progress = cm.Progress()
        self.rounds = 0  # cleaning rounds completed since start
        self.passes = 0  # times the background task looked for work
        self._lock = asyncio.Lock()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._last_config = self.config
        node.config_listeners.append(self._config_changed)

    def _config_changed(self) -> None:
        """Kafka restarts its cleaner threads when a log.cleaner.* setting changes (LogCleaner.
        reconfigure): the new backoff, rate and buffers apply now, not after the old backoff."""
        config = self.config
        if config != self._last_config:
            self._last_config = config
            self.wake()

    @property
    def config(self) -> cm.CleanerConfig:
        return cleaner_config(self.node.broker_configs.merged())

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run())

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
            self._task = None

    async def _run(self) -> None:
        while True:
            config = self.config
            self._wake.clear()  # a wake during the pass below brings the next one at once
            cleaned = await self.clean_now() if config.enable else 0
            self.passes += 1
            if not cleaned:
                try:
                    await asyncio.wait_for(self._wake.wait(), config.backoff_ms / 1000)
                except asyncio.TimeoutError:
                    pass

    def wake(self) -> None:
        self._wake.set()

    def candidates(self, now: int) -> list:
        """Compacted logs that qualify, filthiest first (Kafka: grabFilthiestCompactedLog)."""
        found = []
        loading = not self.node.loading.done  # the coordinators' load reads these logs' segments
        for (topic, _), plog in list(self.node.logs.logs.items()):
            if plog.config.compact and not (loading and topic in LOADED_TOPICS):
                ltc = cm.plan(plog, now)
                if cm.should_clean(plog, ltc):
                    found.append((ltc.cleanable_ratio, plog, ltc))
        return sorted(found, key=lambda x: -x[0])

    async def clean_now(self, now_ms: int | None = None) -> int:
        """Clean every log that qualifies now, once each; returns how many were cleaned. ``now_ms``
        (tests) is the time the round takes for the compaction lags and delete horizons."""
        async with self._lock:
            config, cleaned = self.config, 0
            now = int(time.time() * 1000) if now_ms is None else now_ms
            for _, plog, ltc in self.candidates(now):
                if await self._clean_one(plog, ltc, now, config):
                    cleaned += 1
            return cleaned

    async def _clean_one(self, plog, ltc, now: int, config: cm.CleanerConfig) -> bool:
        throttler = Throttler(config.io_max_bytes_per_second)
        try:
            steps = cm.clean(plog, ltc, now, config, self.progress)
            for n in steps:
                await asyncio.sleep(throttler.delay(n))  # the loop runs between chunks
        except (OSError, KafkaError, ValueError) as exc:  # a log deleted or damaged under the round
            log.warning("cleaning %s-%d stopped: %s", plog.topic, plog.partition, exc)
            self.progress.phase = "idle"
            return False
        self.rounds += 1
        stats = self.progress.stats
        log.info("cleaned %s-%d: %d bytes read, %d written, %d batches removed", plog.topic, plog.partition,
                 stats.bytes_read, stats.bytes_written, stats.batches_removed)
        return True
