"""RSS and CPU time of a process and all its descendants, from /proc."""

from __future__ import annotations

import os
import threading
import time

_TICK = os.sysconf("SC_CLK_TCK")


def tree(pid: int) -> list[int]:
    """``pid`` and every live descendant."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for tid in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{tid}/children") as f:
                    todo.extend(int(c) for c in f.read().split())
        except OSError:
            continue
    return out


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def rss_bytes(pid: int) -> int:
    """VmRSS of ``pid`` plus its descendants."""
    return sum(_rss(p) for p in tree(pid))


def cpu_seconds(pid: int) -> float:
    """user+system CPU time consumed so far by ``pid`` and its live descendants."""
    total = 0
    for p in tree(pid):
        try:
            with open(f"/proc/{p}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime, stime
        except (OSError, IndexError, ValueError):
            continue
    return total / _TICK


def _schedstat_seconds(pid: int, field: int) -> float:
    """One field of /proc/<tid>/schedstat (nanoseconds), summed over the threads of ``pid`` and its
    live descendants."""
    total = 0
    for p in tree(pid):
        try:
            tids = os.listdir(f"/proc/{p}/task")
        except OSError:
            continue
        for tid in tids:
            try:
                with open(f"/proc/{p}/task/{tid}/schedstat") as f:
                    total += int(f.read().split()[field])
            except (OSError, IndexError, ValueError):
                continue
    return total / 1e9


def oncpu_seconds(pid: int) -> float | None:
    """user+system CPU time of ``pid`` and its live descendants to the nanosecond: the kernel's
    count of their threads' time on a CPU, ended threads included (the process CPU clock of each,
    clock_gettime with Linux's clock id for another process; the sum the utime and stime of
    /proc/<pid>/stat are taken from). cpu_seconds reads those two in clock ticks of 10 ms, a tenth
    of a 0.1 s produce run, too coarse to compare the runs. None where the clock cannot be read
    (not Linux, or another user's process)."""
    total = 0.0
    for p in tree(pid):
        try:
            total += time.clock_gettime(_process_cpu_clock(p))
        except OSError:
            if p == pid:
                return None
    return total


def _process_cpu_clock(pid: int) -> int:
    """Linux's MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED) (include/linux/posix-timers.h)."""
    return ((~pid) << 3) | 2


def threads_cpu(pid: int) -> dict[int, tuple[str, float]]:
    """Each live thread of ``pid`` (not its descendants): its name and CPU seconds so far, to the
    nanosecond (/proc/<pid>/task/<tid>/schedstat)."""
    out = {}
    try:
        tids = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"/proc/{pid}/task/{tid}/schedstat") as f:
                ns = int(f.read().split()[0])
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                out[int(tid)] = (f.read().strip(), ns / 1e9)
        except (OSError, IndexError, ValueError):
            continue
    return out


def threads_delta(before: dict[int, tuple[str, float]], after: dict[int, tuple[str, float]]) -> list[dict]:
    """Each thread's CPU between two threads_cpu readings (a thread started in between from zero);
    threads that ended in between are missing, as from rdproduce's ``threads``."""
    return [{"name": name, "cpu_s": s - before.get(tid, ("", 0.0))[1]} for tid, (name, s) in after.items()]


def runqueue_wait_seconds(pid: int) -> float:
    """Time the threads of ``pid`` and its descendants spent runnable but waiting for a CPU
    (/proc/<tid>/schedstat): how much other load on the machine held the process back."""
    return _schedstat_seconds(pid, 1)


class RssSampler:
    """Samples rss_bytes(pid) every ``interval`` seconds in a thread; ``peak()`` since the last reset."""

    def __init__(self, pid: int, interval: float = 0.1) -> None:
        self.pid = pid
        self.interval = interval
        self._peak = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rss-sampler", daemon=True)

    def __enter__(self) -> "RssSampler":
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.sample()
            self._stop.wait(self.interval)

    def sample(self) -> int:
        value = rss_bytes(self.pid)
        with self._lock:
            self._peak = max(self._peak, value)
        return value

    def reset(self) -> None:
        with self._lock:
            self._peak = 0
        self.sample()

    def peak(self) -> int:
        self.sample()
        with self._lock:
            return self._peak


def _cpu_totals() -> tuple[int, int]:
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return sum(fields[:8]), idle


def machine_busy(interval: float = 0.5) -> float:
    """Share of all CPUs busy over ``interval`` seconds (0..1), whoever is using them."""
    t0, i0 = _cpu_totals()
    time.sleep(interval)
    t1, i1 = _cpu_totals()
    return 0.0 if t1 == t0 else 1 - (i1 - i0) / (t1 - t0)


def wait_until_quiet(threshold: float, timeout: float) -> tuple[float, float]:
    """Wait until the machine is less than ``threshold`` busy (or ``timeout`` passes); returns the
    last busy share measured and the seconds waited."""
    start = time.monotonic()
    busy = machine_busy()
    while busy >= threshold and time.monotonic() - start < timeout:
        busy = machine_busy()
    return busy, time.monotonic() - start
