"""The crash soak's second client: kafka-python's idempotent producer (acks=all) on a topic of its
own, values numbered in send order, checked as the confluent-kafka one is: every acknowledged record
at its offset, once, in send order."""

from __future__ import annotations

import logging
import threading
import time
from dataclasses import dataclass, field

import kafka
import kafka.errors

TOPIC, PARTITIONS = "soak-idem-kp", 2


@dataclass
class KafkaPythonProducer:
    acked: dict = field(default_factory=dict)  # (partition, value) -> offset
    sent: dict = field(default_factory=dict)  # partition -> values sent, in order
    lock: threading.Lock = field(default_factory=threading.Lock)

    def run(self, bootstrap: str, halt: threading.Event, cycle: int) -> None:
        logging.getLogger("kafka").setLevel(logging.CRITICAL)  # its reconnect noise after each kill
        producer = kafka.KafkaProducer(bootstrap_servers=bootstrap, acks="all", enable_idempotence=True,
                                       linger_ms=2, request_timeout_ms=5000, reconnect_backoff_ms=20,
                                       reconnect_backoff_max_ms=200, retry_backoff_ms=50,
                                       delivery_timeout_ms=20_000)  # fmt: skip

        def acked(value: bytes):
            def on_success(metadata) -> None:
                with self.lock:
                    self.acked[(metadata.partition, value)] = metadata.offset
            return on_success

        i = 0
        try:
            while not halt.is_set():
                p = i % PARTITIONS
                value = b"kp%d-%d" % (cycle, i)
                with self.lock:
                    self.sent.setdefault(p, []).append(value)
                try:
                    producer.send(TOPIC, value=value, partition=p).add_callback(acked(value))
                except kafka.errors.KafkaTimeoutError:  # its buffer is full while the broker is down
                    time.sleep(0.05)
                if i % 20 == 0:
                    time.sleep(0.01)  # about as fast as the confluent-kafka producer
                i += 1
            producer.flush(timeout=25)
        finally:
            producer.close(timeout=5)
