"""What the numbers were measured on."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import time


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


def _proc_cpu() -> dict[int, tuple[str, int]]:
    """pid -> (command name, user+system clock ticks so far) of every process readable now."""
    out = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                text = f.read()
        except OSError:
            continue
        comm = text[text.find("(") + 1:text.rfind(")")]
        fields = text[text.rfind(")") + 2:].split()
        try:
            out[int(name)] = (comm, int(fields[11]) + int(fields[12]))
        except (IndexError, ValueError):
            continue
    return out


def _cpu_fields() -> list[int]:
    """The machine's CPU time so far by kind (/proc/stat: user nice system idle iowait irq softirq steal)."""
    with open("/proc/stat") as f:
        return [int(x) for x in f.readline().split()[1:]]


def load_snapshot(interval: float = 1.0, exclude: set[int] | None = None, top: int = 5) -> dict:
    """What else the machine was doing over ``interval`` seconds: load averages, the share of all
    CPUs busy (whoever used them), and the CPU of the busiest processes other than ``exclude``
    (the harness and its children), summed by command name. Names only: never command lines."""
    import datetime as dt

    tick = os.sysconf("SC_CLK_TCK")
    c0 = _cpu_fields()
    before = _proc_cpu()
    start = time.monotonic()
    time.sleep(interval)
    after = _proc_cpu()
    c1 = _cpu_fields()
    wall = time.monotonic() - start
    d = [b - a for a, b in zip(c0, c1)]
    total = sum(d[:8]) or 1
    exclude = exclude or set()
    by_name: dict[str, float] = {}
    for pid, (comm, ticks) in after.items():
        if pid in exclude or pid not in before or before[pid][0] != comm:
            continue
        cores = (ticks - before[pid][1]) / tick / wall
        if cores > 0:
            by_name[comm] = by_name.get(comm, 0.0) + cores
    busiest = sorted(by_name.items(), key=lambda kv: -kv[1])[:top]
    return {
        "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "loadavg": loadavg(),
        "busy": round(1 - (d[3] + d[4]) / total, 3),  # idle + iowait
        "steal": round(d[7] / total, 3) if len(d) > 7 else None,
        "cores_busy": round((1 - (d[3] + d[4]) / total) * (os.cpu_count() or 1), 2),
        # processes this one can see (a container sees only its own): the rest of "busy" is work
        # outside its view, other containers' or the host's
        "others_cores": round(sum(by_name.values()), 2),
        "top": [[name, round(cores, 2)] for name, cores in busiest],
    }


def describe_load(snap: dict, cores: int | None = None) -> str:
    la = snap.get("loadavg") or []
    load = "/".join(f"{x:.2f}" for x in la) if la else "?"
    top = ", ".join(f"{n} {c:.2f}" for n, c in snap.get("top", []) if c >= 0.01) or "none"
    of = f" of {cores}" if cores else ""
    steal = f", {100 * snap['steal']:.0f}% stolen by the host" if snap.get("steal") else ""
    return (f"load average (1/5/15 min) {load}; CPUs {100 * snap['busy']:.0f}% busy ({snap.get('cores_busy', 0):.2f}"
            f"{of} cores{steal}); other processes visible here {snap['others_cores']:.2f} cores (busiest: {top}), "
            "the rest is processes that began or ended within the second, or outside this view")
