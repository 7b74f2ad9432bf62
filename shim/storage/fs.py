"""Every change storage makes to the disk, in one place (Kafka: Utils.atomicMoveWithFallback,
Utils.flushDir, LogFileUtils).

Storage never calls ``os`` to write, create, rename or delete: it calls :data:`disk` (a
:class:`Disk`), and the helpers below. That is the seam a test uses to model a power loss: a
substitute ``Disk`` records what was fsynced and builds the directory a machine would find after
losing power (tests/storage/power_loss.py). Reads go straight to ``os``: they change nothing.

What survives a power loss on a POSIX file system is what was fsynced: a file's bytes by
``fsync(file)``, a name created, renamed or removed in a directory by ``fsync(directory)``.
:func:`atomic_write` therefore writes a temporary file, fsyncs it, renames it over the target and
fsyncs the directory: after a power loss the target holds either all of the old bytes or all of
the new ones, never a torn or empty file.
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path

TMP_SUFFIX = ".tmp"  # the one suffix of files being written; loading a partition removes those it finds


class Disk:
    """The file system calls of storage that change something (the real ones).

    The calls on the append path are the ``os`` functions themselves, so the seam costs no Python
    frame per batch; a substitute overrides them with methods. ``parallel``: calls may come from several
    threads at once (a clean shutdown closes partitions in a pool); a substitute that models their
    order says no.
    """

    parallel = True

    writev = staticmethod(os.writev)
    write = staticmethod(os.write)
    fsync = staticmethod(os.fsync)
    ftruncate = staticmethod(os.ftruncate)
    close = staticmethod(os.close)
    replace = staticmethod(os.replace)
    mkdir = staticmethod(os.mkdir)

    def open(self, path: Path, flags: int, mode: int = 0o644) -> int:
        return os.open(path, flags, mode)

    def unlink(self, path: Path) -> None:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass

    def rmtree(self, path: Path) -> None:
        shutil.rmtree(path, ignore_errors=True)

    def fsync_dir(self, path: Path) -> None:
        """Make the names in ``path`` durable (files created, renamed or removed in it)."""
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
        try:
            os.fsync(fd)
        except OSError as e:
            if e.errno != errno.EINVAL:  # a file system that cannot sync a directory has nothing to sync
                raise
        finally:
            os.close(fd)


disk = Disk()


def use(replacement: Disk) -> Disk:
    """Route storage's writes through ``replacement``; returns the one it replaces (tests only)."""
    global disk
    previous, disk = disk, replacement
    return previous


def write_all(fd: int, data) -> None:
    view = memoryview(data)
    while view:
        view = view[disk.write(fd, view):]


def atomic_write(path: Path, data: bytes, sync_dir: bool = True, sync: bool = True) -> None:
    """Replace ``path`` by ``data`` so that a crash or power loss leaves the old or the new bytes
    (Kafka: Utils.atomicMoveWithFallback after a forced write). ``sync_dir=False`` leaves the
    rename to a later ``disk.fsync_dir`` of the parent: several files written, one directory sync.
    ``sync=False`` (neither fsync): the old or the new bytes after a kill -9 only, for files that
    describe a log that is itself not fsynced (the recovery points under fsync "never")."""
    tmp = path.with_name(path.name + TMP_SUFFIX)
    fd = disk.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    try:
        write_all(fd, data)
        if sync:
            disk.fsync(fd)
    finally:
        disk.close(fd)
    disk.replace(tmp, path)
    if sync_dir and sync:
        disk.fsync_dir(path.parent)


def append(path: Path, data: bytes, sync: bool) -> None:
    """Append ``data`` to ``path`` (created if missing); with ``sync``, durable on return."""
    created = not path.exists()
    fd = disk.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    try:
        write_all(fd, data)
        if sync:
            disk.fsync(fd)
    finally:
        disk.close(fd)
    if sync and created:
        disk.fsync_dir(path.parent)


def make_dirs(path: Path, sync: bool) -> None:
    """Create ``path`` and missing parents; with ``sync`` each new name is made durable in its parent
    (Kafka: LogManager.createLogDirectory flushes the parent of a new partition directory)."""
    if path.is_dir():
        return
    make_dirs(path.parent, sync)
    try:
        disk.mkdir(path)
    except FileExistsError:
        return
    if sync:
        disk.fsync_dir(path.parent)


def remove(path: Path, sync: bool) -> None:
    """Remove a file; with ``sync`` the removal is durable."""
    disk.unlink(path)
    if sync:
        disk.fsync_dir(path.parent)


def remove_tree(path: Path, sync: bool) -> None:
    """Remove a directory and everything in it; with ``sync`` the removal is durable."""
    disk.rmtree(path)
    if sync:
        disk.fsync_dir(path.parent)


def numbered(names, suffix: str) -> list[int]:
    """The numbers of the files named ``<digits><suffix>`` among ``names``, in order (segment bases,
    snapshot offsets): one directory listing read several ways instead of one glob each."""
    cut = len(suffix)
    return sorted(int(n[:-cut]) for n in names if n.endswith(suffix) and n[:-cut].isdigit())
