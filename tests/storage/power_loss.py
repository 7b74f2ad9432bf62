"""A disk that can lose power (imported by the tests as ``power_loss``).

:class:`PowerLossDisk` replaces shim.storage.fs.disk. The real files under the data directory play
the page cache: the broker reads and writes them as usual. Beside them the disk keeps what a power
loss would leave: for every file the bytes of its last fsync, for every directory the names of its
last fsync (a file or directory is identified by its creation, not its inode number, which the
file system may reuse). :meth:`PowerLossDisk.survivors` builds that state in another directory:

- a directory holds the names it held at its last fsync (one never fsynced holds none), or, when
  the choice says the names reached the disk anyway, the names it holds now;
- a file holds the bytes of its last fsync (none if it never was), plus, when the choice says
  so, any prefix of what was appended since (a torn write, cut at any byte).

So everything not fsynced may be lost, torn, or kept, file by file and directory by directory,
which covers what POSIX allows after a power loss for appends and renames. ``cut_after`` makes
the n-th change to the disk raise :class:`PowerCut` instead of happening (a power cut in the
middle of a request); the broker's memory is then abandoned.
"""

from __future__ import annotations

import itertools
import os
import random
import shutil
from pathlib import Path

from shim.storage import fs


class PowerCut(BaseException):
    """The power went: not an error any broker code may catch (hence BaseException)."""


FILE, DIR = "f", "d"


class PowerLossDisk(fs.Disk):
    parallel = False  # the n-th change must be the same one on every run

    def __init__(self, root: Path, cut_after: int | None = None) -> None:
        self.root = root
        self.cut_after = cut_after
        self.changes = 0  # changes made so far: what ``cut_after`` counts
        self._ids = itertools.count()
        self._id_of: dict[int, int] = {}  # inode number -> id of the file or directory living there
        self.synced_bytes: dict[int, bytes] = {}  # file id -> bytes at its last fsync
        self.synced_names: dict[int, dict[str, tuple[str, int]]] = {}  # dir id -> name -> (kind, id)
        root.mkdir(parents=True, exist_ok=True)
        self.root_id = self._baseline(root)

    # -- the model ----------------------------------------------------------------------------

    def _new_id(self, path: Path) -> int:
        ident = next(self._ids)
        self._id_of[os.stat(path).st_ino] = ident
        return ident

    def _id(self, path: Path) -> int:
        ino = os.stat(path).st_ino
        if ino not in self._id_of:  # made by something other than the broker: count it as durable
            raise AssertionError(f"{path} was created behind the disk's back")
        return self._id_of[ino]

    def _baseline(self, directory: Path) -> int:
        """What exists before the broker starts is durable."""
        ident = self._new_id(directory)
        self.synced_names[ident] = {}
        for p in directory.iterdir():
            if p.is_dir():
                self.synced_names[ident][p.name] = (DIR, self._baseline(p))
            else:
                child = self._new_id(p)
                self.synced_bytes[child] = p.read_bytes()
                self.synced_names[ident][p.name] = (FILE, child)
        return ident

    def _names_now(self, directory: Path) -> dict[str, tuple[str, int]]:
        return {p.name: (DIR if p.is_dir() else FILE, self._id(p)) for p in directory.iterdir()}

    def _change(self) -> None:
        self.changes += 1
        if self.cut_after is not None and self.changes > self.cut_after:
            raise PowerCut(f"power cut before change {self.changes}")

    # -- fs.Disk ------------------------------------------------------------------------------

    def open(self, path: Path, flags: int, mode: int = 0o644) -> int:
        if not flags & os.O_CREAT:
            return os.open(path, flags, mode)
        self._change()
        existed = os.path.exists(path)
        fd = os.open(path, flags, mode)
        if not existed:
            self.synced_bytes[self._new_id(path)] = b""
        return fd

    def writev(self, fd: int, chunks) -> int:
        self._change()
        return os.writev(fd, chunks)

    def write(self, fd: int, data) -> int:
        self._change()
        return os.write(fd, data)

    def fsync(self, fd: int) -> None:
        self._change()
        ident = self._id_of[os.fstat(fd).st_ino]
        with open(f"/proc/self/fd/{fd}", "rb") as f:  # the descriptor may be write-only
            self.synced_bytes[ident] = f.read()

    def ftruncate(self, fd: int, size: int) -> None:
        self._change()
        os.ftruncate(fd, size)

    def replace(self, src: Path, dst: Path) -> None:
        self._change()
        os.replace(src, dst)

    def unlink(self, path: Path) -> None:
        self._change()
        super().unlink(path)

    def mkdir(self, path: Path) -> None:
        self._change()
        os.mkdir(path)
        self.synced_names[self._new_id(path)] = {}

    def rmtree(self, path: Path) -> None:
        self._change()
        shutil.rmtree(path, ignore_errors=True)

    def fsync_dir(self, path: Path) -> None:
        self._change()
        self.synced_names[self._id(path)] = self._names_now(path)

    # -- after the power cut ------------------------------------------------------------------

    def survivors(self, target: Path, seed: int | None = None) -> Path:
        """Build in ``target`` what the disk holds after a power cut now. ``seed`` None loses
        everything not fsynced; otherwise each file and directory decides at random whether
        unsynced names stay and how much of an unsynced tail does (Random(seed))."""
        rng = None if seed is None else random.Random(seed)
        current = self._current_files()
        self._build(target, self.root_id, self.root if self.root.is_dir() else None, rng, current)
        return target

    def _current_files(self) -> dict[int, Path]:
        out = {}
        for dirpath, _, files in os.walk(self.root):
            for name in files:
                p = Path(dirpath, name)
                out[self._id_of.get(os.stat(p).st_ino, -1)] = p
        return out

    def _build(self, target: Path, dir_id: int, now: Path | None, rng, current: dict[int, Path]) -> None:
        target.mkdir()
        names = self.synced_names.get(dir_id, {})
        if now is not None and (not now.is_dir() or self._id_of.get(os.stat(now).st_ino) != dir_id):
            now = None  # removed, or another directory of the same name since
        if rng is not None and now is not None and rng.random() < 0.5:
            names = self._names_now(now)  # the directory's changes reached the disk without an fsync
        for name, (kind, ident) in names.items():
            if kind == DIR:
                sub = now / name if now is not None and (now / name).is_dir() else None
                self._build(target / name, ident, sub, rng, current)
            else:
                (target / name).write_bytes(self._file_bytes(ident, rng, current))

    def _file_bytes(self, ident: int, rng, current: dict[int, Path]) -> bytes:
        synced = self.synced_bytes.get(ident, b"")
        if rng is None or ident not in current:
            return synced
        now = current[ident].read_bytes()
        if len(now) <= len(synced) or not now.startswith(synced):
            return synced if rng.random() < 0.5 else now  # a rewrite reached the disk whole or not at all
        return now[:rng.randint(len(synced), len(now))]  # an unsynced tail, torn at any byte


def install(disk: PowerLossDisk):
    """Route storage's writes through ``disk``; returns a function that undoes it."""
    previous = fs.use(disk)
    return lambda: fs.use(previous)
