"""Run one workload function in a fresh spawned process and bring back its result or its error."""

from __future__ import annotations

import multiprocessing as mp
import traceback

_CTX = mp.get_context("spawn")


class PhaseError(RuntimeError):
    """A workload failed; the message is the child's error text."""


def _child(conn, name: str, kwargs: dict) -> None:
    """``name`` is a function of bench.workloads, or ``module.function`` of another bench module."""
    import importlib

    module, _, func = name.rpartition(".")
    try:
        result = getattr(importlib.import_module(f"bench.{module or 'workloads'}"), func)(**kwargs)
    except BaseException as e:  # noqa: BLE001 - everything goes back as text
        last = traceback.extract_tb(e.__traceback__)[-1:]
        where = f" ({last[0].name}:{last[0].lineno})" if last else ""
        conn.send(("error", f"{type(e).__name__}: {e}{where}"))
    else:
        conn.send(("ok", result))
    finally:
        conn.close()


class Child:
    def __init__(self, name: str, **kwargs) -> None:
        self.name = name
        self._recv, send = _CTX.Pipe(duplex=False)
        self._proc = _CTX.Process(target=_child, args=(send, name, kwargs), daemon=True)
        self._proc.start()
        send.close()

    def result(self, timeout: float) -> dict:
        try:
            if not self._recv.poll(timeout):
                raise PhaseError(f"{self.name} did not finish within {timeout:.0f} s")
            status, value = self._recv.recv()
        except EOFError:
            self._proc.join(5)
            raise PhaseError(f"{self.name} process died (exit code {self._proc.exitcode})") from None
        finally:
            if self._proc.is_alive():
                self._proc.join(2)
            if self._proc.is_alive():
                self._proc.kill()
                self._proc.join()
        if status != "ok":
            raise PhaseError(value)
        return value

    def kill(self) -> None:
        if self._proc.is_alive():
            self._proc.kill()
            self._proc.join()


def run(name: str, timeout: float, **kwargs) -> dict:
    return Child(name, **kwargs).result(timeout)


def event():
    return _CTX.Event()
