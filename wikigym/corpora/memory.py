"""Giving freed memory back to the system, for builds that must stay flat as inputs grow;
capping what a block of work may take on top of what the process holds."""

from __future__ import annotations

import contextlib
import ctypes
import resource
import sys
from collections.abc import Iterator

import pyarrow as pa

_MIB = 1024 * 1024


def _data_bytes() -> int | None:
    """The process's data memory now (``VmData``: heap, anonymous and private mappings)."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmData:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError):
        return None
    return None


@contextlib.contextmanager
def data_limit(extra_mb: int) -> Iterator[None]:
    """While the block runs, this process may take at most ``extra_mb`` MiB more data memory
    than it holds on entry (``RLIMIT_DATA``, Linux): past it an allocation fails (DuckDB's
    ``OutOfMemoryException``, Python's ``MemoryError``) instead of taking the machine. The
    limit is process-wide: only for a process that runs one untrusted job at a time (the
    ``wikigym corpus sql`` command). Elsewhere, or where the data size is unknown, nothing
    is capped."""
    held = _data_bytes() if sys.platform.startswith("linux") else None
    if held is None:
        yield
        return
    soft, hard = resource.getrlimit(resource.RLIMIT_DATA)
    cap = held + extra_mb * _MIB
    for bound in (soft, hard):
        if bound != resource.RLIM_INFINITY:
            cap = min(cap, bound)
    resource.setrlimit(resource.RLIMIT_DATA, (cap, hard))
    try:
        yield
    finally:
        resource.setrlimit(resource.RLIMIT_DATA, (soft, hard))


def give_back_freed_memory() -> None:
    """Return the pages freed so far to the system: Arrow's pool and the C heap (glibc's
    ``malloc_trim``; elsewhere only Arrow's).

    glibc keeps what a thread frees in its arena, and a later allocation of another size or
    thread does not always reuse it: an index written in runs kept ~13 MB per 60k-passage
    run otherwise (``benchmarks/results/scale.md``), and DuckDB, which allocates with its
    own allocator, never reuses it.
    """
    pa.default_memory_pool().release_unused()
    libc = _glibc()
    if libc is not None:
        libc.malloc_trim(0)


# glibc's mallopt parameter and the threshold it starts with (128 KiB).
_M_MMAP_THRESHOLD = -3
MMAP_THRESHOLD = 128 * 1024


def keep_large_blocks_mapped() -> bool:
    """Keep glibc's mmap threshold at its initial 128 KiB for the rest of the process.

    glibc serves a block of at least the threshold with its own ``mmap``, unmapped when
    freed. But when such a block is freed, glibc raises the threshold to its size (up to
    32 MB), so later blocks of that size come from the heaps instead, between small
    long-lived blocks, and from per-thread arenas that ``malloc_trim`` does not shrink.
    Tantivy's writer takes its memory in 1 MB pages: from the second run of a build on
    they came from the heaps, and each run left ~30 MB that no trim gave back (the main
    process after 2^19-passage runs, trimmed: 135, 202, 213, 265, 269, 272, 275 MB;
    pinned: flat). Setting the threshold turns the raising off (``mallopt(3)``).

    Returns:
        Whether the threshold was set (False where the C library is not glibc).
    """
    libc = _glibc()
    return libc is not None and bool(libc.mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD))


def _glibc() -> ctypes.CDLL | None:
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return None
    return libc if hasattr(libc, "malloc_trim") and hasattr(libc, "mallopt") else None
