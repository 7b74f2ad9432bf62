"""What the numbers were measured on."""

from __future__ import annotations

import importlib.metadata
import os
import platform


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _mem_total_bytes() -> int | None:
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return None


def _os_name() -> str:
    try:
        with open("/etc/os-release") as f:
            for line in f:
                if line.startswith("PRETTY_NAME="):
                    return line.split("=", 1)[1].strip().strip('"')
    except OSError:
        pass
    return platform.system()


def machine_info() -> dict:
    import confluent_kafka

    try:
        usable = len(os.sched_getaffinity(0))
    except AttributeError:
        usable = os.cpu_count()
    return {
        "cpu_model": _cpu_model(),
        "cpu_count": os.cpu_count(),
        "cpus_usable": usable,
        "mem_total_bytes": _mem_total_bytes(),
        "os": _os_name(),
        "kernel": platform.release(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "confluent_kafka": importlib.metadata.version("confluent-kafka"),
        "librdkafka": confluent_kafka.libversion()[0],
    }


def describe(m: dict) -> str:
    mem = f"{m['mem_total_bytes'] / 2**30:.1f} GiB RAM" if m.get("mem_total_bytes") else "RAM unknown"
    return (f"{m['cpu_model']}, {m['cpus_usable']} cores usable ({m['cpu_count']} online), {mem}; "
            f"{m['os']} (Linux {m['kernel']}); {m['python']}; "
            f"confluent-kafka {m['confluent_kafka']} / librdkafka {m['librdkafka']}")


def loadavg() -> list[float] | None:
    """1, 5 and 15 minute load averages: other work on the machine shows up here."""
    try:
        with open("/proc/loadavg") as f:
            return [float(x) for x in f.read().split()[:3]]
    except (OSError, ValueError):
        return None
