"""Disk space reserved past the end of a file, without changing its size (Linux only).

``fallocate(fd, FALLOC_FL_KEEP_SIZE, offset, length)`` allocates blocks beyond the end of file:
``st_size`` stays what was written, so readers, crash recovery and everything sent to clients see
nothing of it. An append into blocks allocated this way skips the filesystem's per-write block
reservation (ext4's delayed allocation: ``ext4_da_get_block_prep``, the extent status tree and the
quota), which on ext4 makes a 1 MB buffered write about a third cheaper. ``release`` gives back
what was not written: a truncate to the file's own size, which Linux filesystems take as the
request to drop the blocks past the end (ext4 ignores a hole punched beyond the end).

Where the call does not exist or the filesystem refuses it, ``reserve`` answers False and
nothing else happens: reserving is an optimisation, never a requirement.
"""

from __future__ import annotations

import logging
import os
import sys

log = logging.getLogger(__name__)

FALLOC_FL_KEEP_SIZE = 0x01

_fallocate = None
_loaded = False


def _load():
    global _fallocate, _loaded
    _loaded = True
    if not sys.platform.startswith("linux"):
        return None
    import ctypes  # only when a segment first grows large enough to reserve: keeps it off the start

    try:
        libc = ctypes.CDLL(None, use_errno=True)
        fn = getattr(libc, "fallocate64", None) or libc.fallocate
    except (OSError, AttributeError):
        return None
    fn.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_int64, ctypes.c_int64]
    fn.restype = ctypes.c_int
    _fallocate = fn
    return fn


def reserve(fd: int, offset: int, length: int) -> bool:
    """Allocate ``[offset, offset + length)`` of ``fd`` beyond its end, keeping its size."""
    fn = _fallocate if _loaded else _load()
    if fn is None or length <= 0:
        return False
    if fn(fd, FALLOC_FL_KEEP_SIZE, offset, length) == 0:
        return True
    import ctypes

    log.debug("fallocate(KEEP_SIZE, %d, %d) failed: %s", offset, length, os.strerror(ctypes.get_errno()))
    return False


def release(fd: int, size: int) -> None:
    """Free whatever ``fd`` holds past ``size``, its end."""
    os.ftruncate(fd, size)


def allocated_past_end(fd: int) -> bool:
    """Whether the file holds blocks beyond its size (a reservation left by a crash, say)."""
    if not sys.platform.startswith("linux"):
        return False
    st = os.fstat(fd)
    block = getattr(st, "st_blksize", 4096) or 4096
    return st.st_blocks * 512 > -(-st.st_size // block) * block
