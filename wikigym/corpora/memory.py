"""Giving freed memory back to the system, for builds that must stay flat as inputs grow."""

from __future__ import annotations

import ctypes

import pyarrow as pa


def give_back_freed_memory() -> None:
    """Return the pages freed so far to the system: Arrow's pool and the C heap (glibc's
    ``malloc_trim``; elsewhere only Arrow's).

    glibc keeps what a thread frees in its arena, and a later allocation of another size or
    thread does not always reuse it: an index written in runs kept ~13 MB per 60k-passage
    run otherwise (``benchmarks/results/scale.md``), and DuckDB, which allocates with its
    own allocator, never reuses it.
    """
    pa.default_memory_pool().release_unused()
    try:
        libc = ctypes.CDLL("libc.so.6")
    except OSError:  # not glibc
        return
    libc.malloc_trim(0)
