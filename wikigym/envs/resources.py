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


def default_tasks_path() -> Path:
    """Where the default TaskSet lives: beside the default snapshot, named by generator."""
    from wikigym.corpora.default import default_snapshot_path
    from wikigym.synth.generate import GENERATOR

    path = default_snapshot_path()
    tag = GENERATOR.replace("/", "-").replace(".", "-")
    return path.parent / f"{path.name}.{tag}.tasks.jsonl"


def default_resources(progress: bool = True) -> tuple[Snapshot, TaskSet]:
    """The embedded default: the generated-world snapshot and synth's mixed-difficulty
    TaskSet (50 tasks per level), both built once into the user cache."""
    from wikigym.corpora.default import ensure_default_snapshot
    from wikigym.synth.default import default_taskset

    path = ensure_default_snapshot(progress=progress)
    snap = shared_snapshot(path)
    tasks_file = default_tasks_path()
    if not tasks_file.is_file():
        default_taskset(snap).save(tasks_file)  # written atomically by TaskSet.save
    return snap, shared_taskset(tasks_file)
