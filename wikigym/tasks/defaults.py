"""The defaults resolver: which snapshot and TaskSet a run uses, opened once per process.

Every consumer that turns ``corpus=``/``tasks=`` arguments (or their absence) into an open
:class:`Snapshot` and :class:`TaskSet` calls :func:`resolve_resources`: the env, eval,
trainers, replay and the CLI. With neither given it is the embedded default: the generated
world and its default TaskSet, which the package root resolves (:mod:`wikigym.defaults`,
through :mod:`wikigym.tasks.hooks`); an env id pins which embedded default it means
(:class:`EmbeddedPin`). With a corpus only, the default questions of that snapshot: synth's
(typed relations, cached by snapshot id and generator), or, for an id that pins them
(``WikiSearch-v0``), the one-hop questions of its raw facts.

Thousands of environments in one process must not each open (and verify) the snapshot:
they share one read-only :class:`Snapshot` per path, and one TaskSet per file.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from wikigym.corpora.default import default_snapshot_path
from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SnapshotError, TaskSetError, WikigymError
from wikigym.tasks.hooks import root_services
from wikigym.tasks.one_hop import GENERATOR as ONE_HOP_GENERATOR
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import TaskSet


@dataclass(frozen=True)
class EmbeddedPin:
    """The embedded default an env id stands for: the generator of its default TaskSet, and the
    ids of the world snapshot and of that TaskSet. Built data that differs is refused (the id
    would otherwise produce something else under the same name), unless a cached copy of the
    pinned data is found.

    Attributes:
        env_id: The id that pins it (named in errors).
        generator: The default TaskSet's generator (``wikigym.synth/5``).
        snapshot_id: The default world's snapshot id.
        taskset_id: The default TaskSet's id.
        corpus_tasks: The generator of the default questions of a corpus given without tasks
            (synth's name and version, or ``wikigym.one-hop/1``: what ids pinned before it
            was a field asked).
        world_version: The world generator's version of the default world (``"1"``: what
            ids pinned before it was a field mean). The world generator still makes every
            version it had, so the pinned world is rebuilt on a fresh machine.
    """

    env_id: str
    generator: str
    snapshot_id: str
    taskset_id: str
    corpus_tasks: str = ONE_HOP_GENERATOR
    world_version: str = "1"

    @classmethod
    def from_value(cls, value: EmbeddedPin | Mapping[str, str] | None) -> EmbeddedPin | None:
        """A pin from an instance, its fields as a mapping (env kwargs), or None (no pin)."""
        if value is None or isinstance(value, EmbeddedPin):
            return value
        return cls(**dict(value))


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


def shared_one_hop_tasks(snapshot: Snapshot) -> TaskSet:
    """The default one-hop TaskSet of a snapshot, computed once per process."""
    key = Path(snapshot.path).resolve()
    with _LOCK:
        tasks = _ONE_HOP.get(key)
        if tasks is None:
            tasks = one_hop_tasks(snapshot)
            _ONE_HOP[key] = tasks
        return tasks


def corpus_tasks_path(snapshot: Snapshot, generator: str | None = None) -> Path:
    """Where the default questions of a corpus are cached: by snapshot id and the generator
    that made them (default: today's)."""
    tag = (generator or root_services().task_generator()).replace("/", "-").replace(".", "-")
    return cache_dir() / "tasks" / f"{snapshot.snapshot_id[:16]}.{tag}.tasks.jsonl"


def shared_corpus_tasks(snapshot: Snapshot, generator: str | None = None) -> TaskSet:
    """The default questions of a corpus given without tasks, made by ``generator`` (default:
    today's synth), built once into the cache (:func:`corpus_tasks_path`) and loaded once per
    process; ``wikigym.one-hop/1`` names the one-hop questions of the snapshot's raw facts.

    Raises:
        TaskSetError: The corpus cannot make them, or they were made by a generator this
            wikigym is not and the cache does not hold them (one line: why, what to pass).
    """
    services = root_services()
    if generator == ONE_HOP_GENERATOR:
        tasks = shared_one_hop_tasks(snapshot)
        if not len(tasks):
            raise TaskSetError(
                f"snapshot {snapshot.path} has no facts to draw default questions from; "
                "pass tasks=FILE"
            )
        return tasks
    path = corpus_tasks_path(snapshot, generator)
    if not path.is_file():
        if generator is not None and generator != services.task_generator():
            raise TaskSetError(
                f"the env pins the default questions of {generator} for a corpus, which this "
                f"wikigym cannot make (its generator is {services.task_generator()}) and the "
                f"cache does not hold ({path}); use the env id of this version, or pass tasks=FILE"
            )
        try:
            made = services.build_corpus_taskset(snapshot)
        except WikigymError as exc:
            raise TaskSetError(
                f"no default questions for {snapshot.path}: {exc} (or pass tasks=FILE)"
            ) from exc
        made.save(path)  # atomic
    return shared_taskset(path)


def cache_dir() -> Path:
    """The cache folder defaults are built in (see :mod:`wikigym.defaults`)."""
    return root_services().cache_dir()


def default_snapshot(progress: bool = True, world_version: str | None = None) -> Snapshot:
    """The embedded default world, built once into the cache, opened once per process
    (``world_version``: the world generator's version an env id pins; None: today's)."""
    services = root_services()
    return shared_snapshot(
        services.embedded_snapshot(progress=progress, world_version=world_version)
    )


#: TaskSets that env ids pin but today's synth no longer makes, shipped with the package
#: (``pinned/<first 16 hex digits of the TaskSet id>.parquet``) and checked by id on load.
PINNED_TASKSETS = Path(__file__).parent / "pinned"


def pinned_taskset_file(taskset_id: str) -> Path | None:
    """The shipped file of the pinned TaskSet ``taskset_id``, if the package has one."""
    path = PINNED_TASKSETS / f"{taskset_id[:16]}.parquet"
    return path if path.is_file() else None


def default_tasks_path(generator: str | None = None, snapshot: Path | None = None) -> Path:
    """Where a default TaskSet lives: beside its snapshot (default: the embedded world's, by
    its usual path), named by the generator that made it (default: today's)."""
    services = root_services()
    if snapshot is None:
        snapshot = default_snapshot_path(services.cache_dir())
    tag = (generator or services.task_generator()).replace("/", "-").replace(".", "-")
    return snapshot.parent / f"{snapshot.name}.{tag}.tasks.jsonl"


def default_resources(
    progress: bool = True, pin: EmbeddedPin | None = None
) -> tuple[Snapshot, TaskSet]:
    """The embedded default: the generated-world snapshot and its default TaskSet (synth's
    mixed-difficulty set, 50 tasks per level), both built once into the user cache.

    Args:
        progress: Show the build's progress.
        pin: The embedded default an env id stands for; None: whatever this wikigym builds.

    Raises:
        SnapshotError: The world built here is not the pinned one, and no cached copy is.
        TaskSetError: The default TaskSet is not the pinned one (or cannot be made here).
    """
    services = root_services()
    snap = default_snapshot(progress, None if pin is None else pin.world_version)
    if pin is not None and snap.snapshot_id != pin.snapshot_id:
        snap = _pinned_snapshot(pin, built=snap)
    generator = services.task_generator() if pin is None else pin.generator
    tasks_file = default_tasks_path(generator, snap.path)
    shipped = None if pin is None else pinned_taskset_file(pin.taskset_id)
    if not tasks_file.is_file() and shipped is not None and generator != services.task_generator():
        tasks_file = shipped  # an older synth's TaskSet, as the id pinned it
    elif not tasks_file.is_file():
        if generator != services.task_generator():
            raise TaskSetError(
                f"{pin.env_id if pin else 'the env'} pins the default TaskSet of {generator}, "
                f"which this wikigym cannot make (its generator is "
                f"{services.task_generator()}) and the cache does not hold ({tasks_file}); use "
                "the env id of this version, or pass tasks=FILE of that TaskSet"
            )
        # Written atomically by TaskSet.save.
        services.build_default_taskset(snap).save(tasks_file)
    tasks = shared_taskset(tasks_file)
    if pin is not None and tasks.taskset_id != pin.taskset_id:
        raise TaskSetError(
            f"{pin.env_id} pins the default TaskSet {pin.taskset_id[:12]} ({pin.generator}), but "
            f"{tasks_file} is {tasks.taskset_id[:12]}: the generator's output changed under the "
            "same name (a bug: bump its version), or the file was edited; delete the file to "
            "rebuild it, or pass tasks=FILE"
        )
    return snap, tasks


def _pinned_snapshot(pin: EmbeddedPin, *, built: Snapshot) -> Snapshot:
    """A cached snapshot with the pinned id (an older wikigym built it), else an error."""
    folder = built.path.parent
    for candidate in sorted(folder.iterdir()) if folder.is_dir() else ():
        manifest = candidate / "manifest.json"
        try:
            found = json.loads(manifest.read_text(encoding="utf-8")).get("snapshot_id")
        except (OSError, ValueError, AttributeError):
            continue
        if found == pin.snapshot_id:
            return shared_snapshot(candidate)
    raise SnapshotError(
        f"{pin.env_id} pins the embedded default world {pin.snapshot_id[:12]}, but this wikigym "
        f"builds {built.snapshot_id[:12]} ({built.path}) and the cache holds no copy of the "
        "pinned one; use the env id of this version, or pass corpus=DIR and tasks=FILE"
    )


def resolve_resources(
    corpus: str | Path | Snapshot | None,
    tasks: str | Path | TaskSet | None,
    *,
    pin: EmbeddedPin | None = None,
) -> tuple[Snapshot, TaskSet]:
    """The snapshot and TaskSet that ``corpus=``/``tasks=`` name (open, shared, checked).

    Args:
        corpus: A snapshot directory or an open snapshot; None for the default world.
        tasks: A TaskSet file or a TaskSet; None for the default TaskSet (of the default
            world), or the default questions of ``corpus`` (:func:`shared_corpus_tasks`).
        pin: The embedded default an env id stands for (used when both are None), and the
            generator of a corpus's default questions it pins.

    Raises:
        SnapshotError: ``corpus`` is not a snapshot.
        TaskSetError: ``tasks`` is not a TaskSet, the snapshot has no facts for default
            questions, or the TaskSet was made for another snapshot.
    """
    if corpus is None and tasks is None:
        return default_resources(pin=pin)
    # A TaskSet file is read first: a wrong path fails before the default world is built.
    taskset = tasks if tasks is None or isinstance(tasks, TaskSet) else shared_taskset(tasks)
    if corpus is None:
        snapshot = default_snapshot()
    elif isinstance(corpus, Snapshot):
        snapshot = corpus
    else:
        snapshot = shared_snapshot(corpus)
    if taskset is None:
        taskset = shared_corpus_tasks(snapshot, None if pin is None else pin.corpus_tasks)
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
