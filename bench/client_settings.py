"""What every bench client shares: the record size, the librdkafka producer and consumer settings,
and the CPU accounting read around a timed window."""

from __future__ import annotations

import uuid

RECORD_SIZE = 1024


def broker_cpu(pid: int | None) -> float:
    """CPU seconds the broker (and its children) have used so far; read around the timed window."""
    from .procs import cpu_seconds

    return cpu_seconds(pid) if pid else 0.0


def broker_oncpu(pid: int | None) -> float | None:
    """The same CPU seconds to the nanosecond (procs.oncpu_seconds); None where they cannot be read."""
    from .procs import oncpu_seconds

    return oncpu_seconds(pid) if pid else None


def broker_wait(pid: int | None) -> float:
    from .procs import runqueue_wait_seconds

    return runqueue_wait_seconds(pid) if pid else 0.0


def own_cpu() -> float:
    """CPU seconds of this client process, all threads (librdkafka's included)."""
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def producer_config(bootstrap: str, queue_messages: int, **extra) -> dict:
    conf = {
        "bootstrap.servers": bootstrap,
        "acks": "all",
        "compression.type": "none",
        "linger.ms": 5,
        "batch.size": 1_000_000,
        "batch.num.messages": 10_000,
        "queue.buffering.max.messages": queue_messages,
        "queue.buffering.max.kbytes": 1_048_576,
        "message.timeout.ms": 60_000,  # <= transaction.timeout.ms (60 s default)
        "delivery.report.only.error": True,
        "log_level": 3,
    }
    conf.update(extra)
    return conf


def consumer_config(bootstrap: str, isolation: str, **extra) -> dict:
    conf = {
        "bootstrap.servers": bootstrap,
        "group.id": f"bench-{uuid.uuid4().hex}",  # required by the client; only assign() is used
        "enable.auto.commit": False,
        "enable.auto.offset.store": False,
        "isolation.level": isolation,
        "fetch.max.bytes": 64 * 2**20,
        "max.partition.fetch.bytes": 16 * 2**20,
        # Above fetch.max.bytes: a broker that ignores the fetch limits (noida-db answers a whole
        # partition, ~100 MB for 100,000 records) is then measured rather than refused.
        "receive.message.max.bytes": 1_000_000_000,
        "queued.max.messages.kbytes": 512 * 1024,
        "queued.min.messages": 1_000_000,
        "log_level": 3,
    }
    conf.update(extra)
    return conf
