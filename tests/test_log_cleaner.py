"""The log cleaner's asyncio shell (shim.log_cleaner): log.cleaner.* read from the broker's
properties, the I/O bound, the background task cleaning by itself and letting the loop run between
chunks, and log.cleaner.enable=false."""

from __future__ import annotations

import asyncio

from kafka_codecs import encode_batch, parse_header
from shim.broker import Broker
from shim.log_cleaner import Throttler, cleaner_config
from shim.storage.producer_state import Origin

COMPACT = {"cleanup.policy": "compact", "segment.bytes": "300", "min.cleanable.dirty.ratio": "0.01"}


def test_broker_properties_become_the_cleaner_config():
    c = cleaner_config({"log.cleaner.backoff.ms": "20", "log.cleaner.io.max.bytes.per.second": "1000.5",
                        "log.cleaner.dedupe.buffer.size": "1000000", "log.cleaner.enable": "false",
                        "log.retention.ms": "5"})
    assert (c.backoff_ms, c.io_max_bytes_per_second, c.dedupe_buffer_size, c.enable) == (20, 1000.5, 1000000, False)
    assert c.map_memory == 900000  # x log.cleaner.io.buffer.load.factor 0.9
    assert cleaner_config({}).io_max_bytes_per_second == float("inf")


def test_the_throttler_waits_as_long_as_the_rate_asks():
    now = [0.0]
    t = Throttler(1000.0, clock=lambda: now[0])
    assert t.delay(500) == 0.5  # 500 bytes at 1000 B/s take 0.5 s; none of it has passed
    now[0] = 0.5
    assert t.delay(250) == 0.25
    assert Throttler(float("inf"), clock=lambda: 0.0).delay(10**9) == 0.0


def _fill(node, topic, n):
    plog = node.logs.get(topic, 0)
    for i in range(n):
        batch = encode_batch([(b"k%d" % (i % 3), b"value-%d" % i, (), 1_700_000_000_000)])
        plog.append(batch, parse_header(batch), 1_700_000_000_000, origin=Origin.CLIENT)
    return plog


async def _until(condition, what):
    for _ in range(20_000):  # each turn yields to the loop; the condition is the state itself
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError(f"never: {what}")


async def test_the_background_cleaner_cleans_by_itself_and_the_loop_runs_between_chunks(tmp_path):
    extra = {"log.cleaner.backoff.ms": "10", "log.cleaner.io.buffer.size": "200"}
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", extra=extra) as broker:
        broker.node.logs.create_topic("c", 1, COMPACT)
        plog = _fill(broker.node, "c", 60)
        ticks = 0

        async def ticker():
            nonlocal ticks
            while True:
                if broker.cleaner.progress.phase != "idle":  # a round is under way
                    ticks += 1
                await asyncio.sleep(0)

        task = asyncio.create_task(ticker())
        try:
            broker.cleaner.wake()
            await _until(lambda: broker.cleaner.rounds >= 1, "a round")
        finally:
            task.cancel()
        segments = sum(1 for s in plog.segments[:-1] for _ in s.iter_headers())
        assert segments <= 3  # the latest of each key (the active segment aside)
        assert ticks > 3  # other tasks ran while the round worked through its chunks


async def test_log_cleaner_enable_false_leaves_logs_alone_but_clean_logs_still_runs(tmp_path):
    extra = {"log.cleaner.backoff.ms": "10", "log.cleaner.enable": "false"}
    async with Broker(data_dir=tmp_path / "d", listen="127.0.0.1:0", extra=extra) as broker:
        broker.node.logs.create_topic("c", 1, COMPACT)
        _fill(broker.node, "c", 60)
        await _until(lambda: broker.cleaner.passes >= 3, "passes of the background task")
        assert broker.cleaner.rounds == 0
        assert await broker.clean_logs() == 1 and broker.cleaner.rounds == 1


def test_log_cleaner_settings_come_from_override_and_config_file(tmp_path):
    from shim.cli import _parser as parser, config_from_args
    from shim.node import Node

    props = tmp_path / "server.properties"
    props.write_text("log.cleaner.io.max.bytes.per.second=2048\nlog.cleaner.backoff.ms=99\n")
    args = parser().parse_args(["serve", "--data-dir", str(tmp_path / "d"), "--config", str(props),
                                "--override", "log.cleaner.backoff.ms=25"])
    node = Node(config_from_args(args))
    try:
        c = cleaner_config(node.broker_configs.merged())
        assert (c.backoff_ms, c.io_max_bytes_per_second) == (25, 2048.0)  # --override over the file
    finally:
        node.close()
