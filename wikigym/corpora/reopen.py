"""Pickling a :class:`Snapshot` by reference: its path and ``snapshot_id``.

A snapshot holds open files (the Tantivy index, DuckDB), which cannot be pickled, and is
meant to be shared. So a pickle names it by its absolute path and id; loading opens the
snapshot at that path (verified as :meth:`Snapshot.open` does), checks the id, and shares
one open snapshot per ``(path, snapshot_id)`` in the process, including the one pickled
there (so a round trip in one process gives back the same object).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable
from pathlib import Path

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SnapshotMismatchError

_LOCK = threading.Lock()
_OPEN: weakref.WeakValueDictionary[tuple[str, str], Snapshot] = weakref.WeakValueDictionary()


def reduce_snapshot(snapshot: Snapshot) -> tuple[Callable[[str, str], Snapshot], tuple[str, str]]:
    """The ``__reduce__`` value of ``snapshot``: :func:`reopen_snapshot` of its path and id."""
    key = (str(Path(snapshot.path).resolve()), snapshot.snapshot_id)
    with _LOCK:
        _OPEN.setdefault(key, snapshot)
    return reopen_snapshot, key


def reopen_snapshot(path: str, snapshot_id: str) -> Snapshot:
    """The open snapshot at ``path``, which must have ``snapshot_id``.

    Raises:
        SnapshotError: Nothing readable at ``path`` (the message says what is missing).
        SnapshotCorruptedError: Its files differ from its manifest.
        SnapshotMismatchError: The snapshot there has another id.
    """
    key = (path, snapshot_id)
    with _LOCK:
        snapshot = _OPEN.get(key)
        if snapshot is None:
            snapshot = Snapshot.open(path)
            if snapshot.snapshot_id != snapshot_id:
                found = snapshot.snapshot_id
                snapshot.close()
                raise SnapshotMismatchError(
                    f"the pickled snapshot {snapshot_id[:16]}... was expected at {path}, but the "
                    f"snapshot there is {found[:16]}...; copy the same snapshot to that path "
                    "on this machine before loading"
                )
            _OPEN[key] = snapshot
        return snapshot


__all__ = ["reduce_snapshot", "reopen_snapshot"]
