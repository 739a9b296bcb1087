"""The defaults resolver: which snapshot and TaskSet a run uses, opened once per process.

Every consumer that turns ``corpus=``/``tasks=`` arguments (or their absence) into an open
:class:`Snapshot` and :class:`TaskSet` calls :func:`resolve_resources`: the env, eval,
trainers, replay and the CLI. With neither given it is the embedded default (the generated
world and the default TaskSet its provider builds, see :mod:`wikigym.tasks.provider`); with a
corpus only, the one-hop questions of that snapshot.

Thousands of environments in one process must not each open (and verify) the snapshot:
they share one read-only :class:`Snapshot` per path, and one TaskSet per file.
"""

from __future__ import annotations

import threading
from pathlib import Path

from wikigym.corpora.default import cache_dir, default_snapshot_path, ensure_default_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SnapshotError, TaskSetError, WikigymError
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.provider import default_taskset_provider
from wikigym.tasks.taskset import TaskSet

_LOCK = threading.Lock()
_SNAPSHOTS: dict[Path, Snapshot] = {}
_TASKSETS: dict[tuple[Path, int, int], TaskSet] = {}
_ONE_HOP: dict[Path, TaskSet] = {}


def shared_snapshot(path: str | Path) -> Snapshot:
    """The process's open snapshot for ``path`` (opened and verified on first use).

    Raises:
        SnapshotError: ``path`` is not a snapshot directory (the message says what to pass).
    """
    key = Path(path).resolve()
    if not key.is_dir():
        raise SnapshotError(
            f"corpus {str(path)!r} is not a snapshot directory (no such directory); pass "
            "corpus=DIR of a snapshot built with `wikigym corpus build SOURCE --out DIR`, "
            "or leave corpus out for the default world"
        )
    with _LOCK:
        snap = _SNAPSHOTS.get(key)
        if snap is None:
            snap = Snapshot.open(key)
            _SNAPSHOTS[key] = snap
        return snap


def shared_taskset(path: str | Path) -> TaskSet:
    """The process's TaskSet for ``path`` (reloaded if the file changed).

    Raises:
        TaskSetError: ``path`` is not a TaskSet file, or it does not load.
    """
    key = Path(path).resolve()
    if not key.is_file():
        raise TaskSetError(
            f"tasks {str(path)!r} is not a TaskSet file (no such file); pass tasks=FILE of a "
            "TaskSet (.jsonl or .parquet, from `synth generate` or `wikigym tasks import`), "
            "or leave tasks out for the default questions"
        )
    stat = key.stat()
    cache_key = (key, stat.st_size, stat.st_mtime_ns)
    with _LOCK:
        tasks = _TASKSETS.get(cache_key)
        if tasks is None:
            tasks = TaskSet.load(key)
            _TASKSETS[cache_key] = tasks
        return tasks


def corpus_tasks_path(snapshot: Snapshot) -> Path:
    """Where the default questions of a corpus are cached: by snapshot id and generator."""
    tag = default_taskset_provider().generator().replace("/", "-").replace(".", "-")
    return cache_dir() / "tasks" / f"{snapshot.snapshot_id[:16]}.{tag}.tasks.jsonl"


def shared_corpus_tasks(snapshot: Snapshot) -> TaskSet:
    """synth's default questions of a corpus given without tasks, made once into the cache
    (:func:`corpus_tasks_path`) and loaded once per process.

    Raises:
        TaskSetError: The corpus cannot make them (one line: why, and what to pass).
    """
    path = corpus_tasks_path(snapshot)
    if not path.is_file():
        try:
            tasks = default_taskset_provider().build_for_corpus(snapshot)
        except WikigymError as exc:
            raise TaskSetError(
                f"no default questions for {snapshot.path}: {exc} (or pass tasks=FILE)"
            ) from exc
        tasks.save(path)  # atomic
    return shared_taskset(path)


def shared_one_hop_tasks(snapshot: Snapshot) -> TaskSet:
    """The default one-hop TaskSet of a snapshot, computed once per process (the raw-key
    questions of earlier versions, kept for the env ids that pin them)."""
    key = Path(snapshot.path).resolve()
    with _LOCK:
        tasks = _ONE_HOP.get(key)
        if tasks is None:
            tasks = one_hop_tasks(snapshot)
            _ONE_HOP[key] = tasks
        return tasks


def default_tasks_path() -> Path:
    """Where the default TaskSet lives: beside the default snapshot, named by generator."""
    path = default_snapshot_path()
    tag = default_taskset_provider().generator().replace("/", "-").replace(".", "-")
    return path.parent / f"{path.name}.{tag}.tasks.jsonl"


def default_resources(progress: bool = True) -> tuple[Snapshot, TaskSet]:
    """The embedded default: the generated-world snapshot and its default TaskSet (synth's
    mixed-difficulty set, 50 tasks per level), both built once into the user cache."""
    path = ensure_default_snapshot(progress=progress)
    snap = shared_snapshot(path)
    tasks_file = default_tasks_path()
    if not tasks_file.is_file():
        # Written atomically by TaskSet.save.
        default_taskset_provider().build(snap).save(tasks_file)
    return snap, shared_taskset(tasks_file)


def resolve_resources(
    corpus: str | Path | Snapshot | None, tasks: str | Path | TaskSet | None
) -> tuple[Snapshot, TaskSet]:
    """The snapshot and TaskSet that ``corpus=``/``tasks=`` name (open, shared, checked).

    Args:
        corpus: A snapshot directory or an open snapshot; None for the default world.
        tasks: A TaskSet file or a TaskSet; None for the default TaskSet (of the default
            world), or synth's default questions of ``corpus`` (:func:`shared_corpus_tasks`).

    Raises:
        SnapshotError: ``corpus`` is not a snapshot.
        TaskSetError: ``tasks`` is not a TaskSet, the snapshot has no facts for default
            questions, or the TaskSet was made for another snapshot.
    """
    if corpus is None and tasks is None:
        return default_resources()
    # A TaskSet file is read first: a wrong path fails before the default world is built.
    taskset = tasks if tasks is None or isinstance(tasks, TaskSet) else shared_taskset(tasks)
    if corpus is None:
        snapshot, _ = default_resources()
    elif isinstance(corpus, Snapshot):
        snapshot = corpus
    else:
        snapshot = shared_snapshot(corpus)
    if taskset is None:
        taskset = shared_corpus_tasks(snapshot)
    check_tasks_fit_snapshot(taskset, snapshot, default_world=corpus is None)
    return snapshot, taskset


def check_tasks_fit_snapshot(taskset: TaskSet, snapshot: Snapshot, *, default_world: bool) -> None:
    """Refuse, up front, tasks made for another snapshot than the one they would run on.

    The one check of the task's ``snapshot_id`` against the corpus: the env, eval, the
    trainers and replay all resolve their resources through :func:`resolve_resources`.

    Raises:
        TaskSetError: Some task names another snapshot_id (both ids and a task are named).
    """
    for task in taskset:
        if task.snapshot_id and task.snapshot_id != snapshot.snapshot_id:
            others = sorted(taskset.snapshot_ids() - {snapshot.snapshot_id})
            count = sum(t.snapshot_id in others for t in taskset)
            corpus = "the default world" if default_world else str(snapshot.path)
            raise TaskSetError(
                f"TaskSet {taskset.name} was made for snapshot {task.snapshot_id} ({count} of "
                f"{len(taskset)} tasks, e.g. {task.task_id!r}), but the corpus ({corpus}) is "
                f"snapshot {snapshot.snapshot_id}; pass the corpus the tasks were made for "
                "(`wikigym corpus info DIR` shows a snapshot's id)"
            )
