"""Process-wide sharing of snapshots and TaskSets between environments.

Thousands of environments in one process must not each open (and verify) the snapshot:
they share one read-only :class:`Snapshot` per path, and one TaskSet per file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.tasks import TaskSet

_LOCK = threading.Lock()
_SNAPSHOTS: dict[Path, Snapshot] = {}
_TASKSETS: dict[tuple[Path, int, int], TaskSet] = {}


def shared_snapshot(path: str | Path) -> Snapshot:
    """The process's open snapshot for ``path`` (opened and verified on first use)."""
    key = Path(path).resolve()
    with _LOCK:
        snap = _SNAPSHOTS.get(key)
        if snap is None:
            snap = Snapshot.open(key)
            _SNAPSHOTS[key] = snap
        return snap


def shared_taskset(path: str | Path) -> TaskSet:
    """The process's TaskSet for ``path`` (reloaded if the file changed)."""
    key = Path(path).resolve()
    stat = key.stat()
    cache_key = (key, stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        tasks = _TASKSETS.get(cache_key)
        if tasks is None:
            tasks = TaskSet.load(key)
            _TASKSETS[cache_key] = tasks
        return tasks


_ONE_HOP: dict[Path, TaskSet] = {}


def shared_one_hop_tasks(snapshot: Snapshot) -> TaskSet:
    """The default one-hop TaskSet of a snapshot, computed once per process."""
    from wikigym.envs.default_tasks import one_hop_tasks

    key = Path(snapshot.path).resolve()
    with _LOCK:
        tasks = _ONE_HOP.get(key)
        if tasks is None:
            tasks = one_hop_tasks(snapshot)
            _ONE_HOP[key] = tasks
        return tasks


def default_resources(progress: bool = True) -> tuple[Snapshot, TaskSet]:
    """The embedded default: the generated-world snapshot and its TaskSet (built once)."""
    from wikigym.corpora.default import ensure_default_snapshot
    from wikigym.envs.default_tasks import one_hop_tasks

    path = ensure_default_snapshot(progress=progress)
    snap = shared_snapshot(path)
    tasks_file = path.parent / f"{path.name}.tasks.jsonl"
    if not tasks_file.is_file():
        one_hop_tasks(snap).save(tasks_file)
    return snap, shared_taskset(tasks_file)
