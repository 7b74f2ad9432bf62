"""SIGKILL the broker under a steady acks=all idempotent produce, restart it on the same data
directory and port, and check that nothing acknowledged moved or vanished and that the same
producer carries on without sequence errors or duplicates."""

from __future__ import annotations

import signal
import threading
import time

import confluent_kafka as ck
import pytest
from kafka_codecs import iter_batches

pytestmark = pytest.mark.shim_only("kills the broker with SIGKILL and restarts it")

TOPIC = "kill9"
TOTAL = 8_000
KILL_AFTER_ACKS = 2_000


def value(i: int) -> bytes:
    return b"record-%06d" % i


class Tracker:
    """Delivery reports: exactly which record was acknowledged at which offset."""

    def __init__(self) -> None:
        self.acked: dict[int, int] = {}
        self.failed: list[tuple[int, ck.KafkaError]] = []
        self.client_errors: list[ck.KafkaError] = []

    def on_delivery(self, err, msg) -> None:
        i = int(msg.key())
        if err is not None:
            self.failed.append((i, err))
        else:
            assert i not in self.acked, f"record {i} acknowledged twice"
            self.acked[i] = msg.offset()

    def on_error(self, err) -> None:
        self.client_errors.append(err)


def batches_on_disk(data_dir):
    raw = b"".join(p.read_bytes() for p in sorted((data_dir / f"{TOPIC}-0").glob("*.log")))
    return [h for _, h in iter_batches(raw)]


def records_on_disk(data_dir) -> int:
    return sum(h.records_count for h in batches_on_disk(data_dir))


def read_partition(bootstrap: str, end: int) -> list[tuple[int, bytes, bytes]]:
    consumer = ck.Consumer({
        "bootstrap.servers": bootstrap, "group.id": "kill9-check", "enable.auto.commit": False,
        "isolation.level": "read_uncommitted", "auto.offset.reset": "earliest",
    })  # fmt: skip
    got = []
    try:
        consumer.assign([ck.TopicPartition(TOPIC, 0, ck.OFFSET_BEGINNING)])
        deadline = time.monotonic() + 60
        while len(got) < end and time.monotonic() < deadline:
            for m in consumer.consume(1000, 0.5):
                assert m.error() is None, m.error()
                got.append((m.offset(), m.key(), m.value()))
    finally:
        consumer.close()
    return got


def idempotent_producer(bootstrap: str, t: Tracker, **settings) -> ck.Producer:
    """acks=all, idempotent, patient: retries through a broker that is down for a while."""
    return ck.Producer({
        "bootstrap.servers": bootstrap, "enable.idempotence": True, "acks": "all", "message.timeout.ms": 120_000,
        "retry.backoff.ms": 50, "reconnect.backoff.ms": 20, "reconnect.backoff.max.ms": 200,
        "error_cb": t.on_error, **settings,
    })  # fmt: skip


class SteadyStream:
    """A steady stream from its own thread: 20 records every 3 ms until TOTAL, whatever the broker
    does. Delivery reports are served by this thread's poll() calls, until :meth:`stop`."""

    def __init__(self, producer: ck.Producer, t: Tracker) -> None:
        self.producer, self.t = producer, t
        self.produced = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="steady-producer")
        self._thread.start()

    def _run(self) -> None:
        for i in range(TOTAL):
            self.producer.produce(TOPIC, key=b"%d" % i, value=value(i), partition=0, on_delivery=self.t.on_delivery)
            self.produced = i + 1
            if i % 20 == 19:
                self.producer.poll(0)
                time.sleep(0.003)
        while not self._stop.is_set():
            self.producer.poll(0.01)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(60)


def assert_sequences_contiguous(batches) -> None:
    """On disk: sequences contiguous from 0 within each producer id and epoch."""
    expected = {}
    for h in batches:
        key = (h.producer_id, h.producer_epoch)
        assert h.base_sequence == expected.get(key, 0), f"sequence gap or repeat in {key}"
        expected[key] = h.base_sequence + h.records_count


def assert_log_holds_acknowledged(bootstrap: str, acked: dict[int, int], acked_at_kill: dict[int, int]) -> None:
    """Every record acknowledged before the kill kept its offset; all offsets are contiguous and
    every record is in the log exactly once, at the offset it was acknowledged with, in the order
    it was produced (per-producer ordering holds across the restart)."""
    log = read_partition(bootstrap, TOTAL)
    assert [o for o, _, _ in log] == list(range(TOTAL))
    by_offset = {o: (k, v) for o, k, v in log}
    for i, offset in acked_at_kill.items():
        assert acked[i] == offset
    for i, offset in acked.items():
        assert by_offset[offset] == (b"%d" % i, value(i)), f"record {i} acknowledged at {offset}"
    assert [int(k) for _, k, _ in log] == list(range(TOTAL))


@pytest.mark.parametrize("event_loop", ["asyncio", "uvloop"])
def test_kill9_mid_stream_loses_nothing_acknowledged(tmp_path, shim_process, free_port, poll, event_loop):
    data_dir = tmp_path / "data"
    port = free_port()
    broker = shim_process(data_dir, port, args=("--event-loop", event_loop))
    bootstrap = broker.wait_ready()
    assert broker.event_loop() == event_loop
    assert bootstrap.split(",")[0] == f"127.0.0.1:{port}"

    t = Tracker()
    producer = idempotent_producer(bootstrap, t, **{"linger.ms": 2, "batch.num.messages": 50,
                                                    "max.in.flight.requests.per.connection": 5})
    stream = SteadyStream(producer, t)
    try:
        # Kill once enough is acknowledged while more is in flight or queued.
        poll(lambda: len(t.acked) >= KILL_AFTER_ACKS and stream.produced > len(t.acked), 30,
             message="acknowledgements before the kill, with records still in flight")
        broker.kill9()
        acked_at_kill, produced_at_kill = dict(t.acked), stream.produced
        poll(lambda: stream.produced >= produced_at_kill + 200 or stream.produced == TOTAL, 30,
             message="records queued while down")
        broker = shim_process(data_dir, port, args=("--event-loop", event_loop))
        assert broker.wait_ready() == bootstrap
        poll(lambda: stream.produced == TOTAL, 30, message="the whole stream handed to the producer")
    finally:
        stream.stop()
    remaining = producer.flush(90)

    assert remaining == 0, f"{remaining} records never delivered"
    assert t.failed == [], t.failed[:5]
    assert [e for e in t.client_errors if e.fatal()] == []
    assert not any(e.code() == ck.KafkaError.OUT_OF_ORDER_SEQUENCE_NUMBER for e in t.client_errors)
    assert len(t.acked) == TOTAL
    assert len(t.acked) > len(acked_at_kill)
    assert sorted(t.acked.values()) == list(range(TOTAL)), "acknowledged offsets repeat or leave gaps"

    assert_log_holds_acknowledged(bootstrap, t.acked, acked_at_kill)

    batches = batches_on_disk(data_dir)
    assert sum(h.records_count for h in batches) == TOTAL
    assert_sequences_contiguous(batches)

    broker.send_signal(signal.SIGTERM)
    assert broker.wait() == 0


def test_kill9_between_append_and_acknowledgement(tmp_path, shim_process, free_port, dropping_proxy, poll):
    """The batch is in the log but its acknowledgement never left: after the restart the producer
    retries it and the broker, with producer state rebuilt from the log, answers with the original
    offset instead of appending it again."""
    data_dir = tmp_path / "data"
    port = free_port()
    first = shim_process(data_dir, port)
    first.wait_ready()
    killed = []

    def kill_broker():  # on the proxy's thread, with the response in hand and not yet forwarded
        first.proc.send_signal(signal.SIGKILL)
        killed.append(True)

    proxy = dropping_proxy(port, {6}, advertise=True, on_drop=kill_broker)
    bootstrap = f"127.0.0.1:{proxy.port}"

    t = Tracker()
    producer = idempotent_producer(bootstrap, t, **{"linger.ms": 5, "batch.num.messages": 100,
                                                    "max.in.flight.requests.per.connection": 1})
    total = 2_000
    for i in range(total):
        producer.produce(TOPIC, key=b"%d" % i, value=value(i), partition=0, on_delivery=t.on_delivery)
        if i % 100 == 99:
            producer.poll(0.01)

    poll(lambda: killed, 30, message="the sixth Produce request")
    assert first.wait(10) == -signal.SIGKILL
    on_disk = records_on_disk(data_dir)
    acked = dict(t.acked)
    producer.poll(0.1)
    assert on_disk > len(t.acked), "the killed request's batch is not in the log"

    broker = shim_process(data_dir, port)
    broker.wait_ready()
    assert producer.flush(60) == 0
    assert t.failed == [] and [e for e in t.client_errors if e.fatal()] == []
    assert len(t.acked) == total
    assert all(t.acked[i] == o for i, o in acked.items())

    # The batch sent before the kill was sent again after the restart, and stored once.
    resent = len(proxy.produced_batches) - len(set(proxy.produced_batches))
    assert resent >= 1
    assert records_on_disk(data_dir) == total
    log = read_partition(bootstrap, total)
    assert [(o, int(k)) for o, k, _ in log] == [(i, i) for i in range(total)]
    assert all(t.acked[i] == i for i in range(total))
