"""TaskSets: questions with answers, evidence, rubric and oracle, in JSONL or Parquet.

A TaskSet is content-addressed like a snapshot: ``taskset_id`` is a sha256 over the
canonical JSON of its tasks, in order, so a trajectory can name exactly what it ran on.

Task ids follow one rule, checked whenever a task is made or loaded (:func:`check_task_id`):
1 to :data:`MAX_TASK_ID_CHARS` characters, all printable (``str.isprintable``: no control,
format, surrogate, private-use or unassigned character, no line break; the plain space is
the only whitespace allowed) and no space at either end. Ids name episodes in reports and
trajectory files, whose names derive from them safely (:func:`wikigym.envs.replay.file_stem`).
Parquet files store each task as canonical JSON in a ``task`` column (plus flat columns
for browsing: task_id, question, answer, level) so nested fields survive unchanged.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import Annotated, Any

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
)

from wikigym.errors import TaskSetError
from wikigym.jsonl import json_lines

#: The most characters a task id may have.
MAX_TASK_ID_CHARS = 200


def check_task_id(value: str) -> str:
    """``value`` if it is a valid task id (see the module docstring), else ValueError."""
    if not 1 <= len(value) <= MAX_TASK_ID_CHARS:
        raise ValueError(
            f"a task id must have 1 to {MAX_TASK_ID_CHARS} characters, this one has "
            f"{len(value):,}; give the task a shorter id"
        )
    bad = next((c for c in value if not c.isprintable()), None)
    if bad is not None:
        raise ValueError(
            f"a task id must hold printable characters only, this one has U+{ord(bad):04X} "
            f"at {value.index(bad)} ({value[:40]!r}); remove it from the id"
        )
    if value != value.strip():
        raise ValueError(f"a task id must not start or end with a space, got {value[:40]!r}")
    return value


TaskId = Annotated[str, AfterValidator(check_task_id)]


class EvidenceFact(BaseModel):
    """A fact of the snapshot a task rests on.

    ``source`` is where the snapshot read it (``infobox``, ``lead``, ``category``,
    ``wikidata``; left out for a generated world's own facts) and ``statement`` where it is
    stated when no passage states it (``passage_id`` null): the category line or the Wikidata
    statement. Both are left out of the JSON when empty, so other tasks keep their bytes.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    subject_doc_id: int | None = None
    subject: str | None = None
    relation: str
    object: str
    object_doc_id: int | None = None
    passage_id: int | None = None
    source: str | None = None
    statement: str | None = None

    @model_serializer(mode="wrap")
    def _omit_empty(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for key in ("source", "statement"):
            if data.get(key) is None:
                data.pop(key, None)
        return data


class Evidence(BaseModel):
    """Where the answer comes from: pages, passages and facts.

    ``unresolved`` marks an imported task whose source evidence could not be placed in the
    snapshot (one ``"title (sentence N): why"`` per supporting fact); such a task has no
    oracle. It is left out of the canonical JSON when empty, so ids of other tasks keep.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    doc_ids: list[int] = Field(default_factory=list)
    passage_ids: list[int] = Field(default_factory=list)
    titles: list[str] = Field(default_factory=list)
    facts: list[EvidenceFact] = Field(default_factory=list)
    unresolved: list[str] = Field(default_factory=list)

    @model_serializer(mode="wrap")
    def _omit_empty_unresolved(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not data.get("unresolved"):
            data.pop("unresolved", None)
        return data


class RubricEntry(BaseModel):
    """An atomic fact (with hidden-entity placeholders) a good answer is supported by."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    text: str
    passage_ids: list[int] = Field(default_factory=list)
    entities: list[str] = Field(default_factory=list)
    connected_to_answer: bool = True


class OracleCall(BaseModel):
    """One tool call of an oracle trajectory."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    arguments: dict[str, Any] = Field(default_factory=dict)


UNANSWERABLE = "unanswerable"
"""The ``answer_type`` of a task whose query has an empty answer set in its snapshot."""
NO_ANSWER = "(no answer)"
"""The ``answer`` text of an unanswerable task (a placeholder: only abstaining scores)."""


class Task(BaseModel):
    """One question of a TaskSet (the fields of DESIGN.md, "synth")."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: TaskId
    question: str = Field(min_length=1)
    answer: str = Field(min_length=1)
    aliases: list[str] = Field(default_factory=list)
    answer_type: str | None = None
    level: str | None = None
    query: dict[str, Any] | None = Field(default=None, description="formal query")
    evidence: Evidence = Field(default_factory=Evidence)
    rubric: list[RubricEntry] = Field(default_factory=list)
    oracle: list[OracleCall] = Field(default_factory=list)
    difficulty: dict[str, float | int | str] = Field(default_factory=dict)
    snapshot_id: str | None = None
    generator: str | None = None
    seed: int | None = None
    source: str | None = None

    @property
    def unanswerable(self) -> bool:
        """Whether the task's query has no answer (the agent should abstain)."""
        return self.answer_type == UNANSWERABLE

    @property
    def golds(self) -> tuple[str, ...]:
        """The answer and its aliases, without repeats, answer first."""
        seen: dict[str, None] = {}
        for a in (self.answer, *self.aliases):
            if a and a not in seen:
                seen[a] = None
        return tuple(seen)

    def canonical_json(self) -> str:
        return json.dumps(
            self.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False
        )


class TaskSet(Sequence[Task]):
    """An ordered, immutable collection of tasks with a content id.

    Args:
        tasks: The tasks; task_ids must be unique.
        name: Free-form name (not part of the id).
    """

    def __init__(self, tasks: Iterable[Task], name: str = "tasks") -> None:
        self._tasks = tuple(tasks)
        self.name = name
        self._by_id: dict[str, int] = {}
        for i, t in enumerate(self._tasks):
            if t.task_id in self._by_id:
                raise TaskSetError(
                    f"duplicate task_id {t.task_id!r} in {name}; task ids must be unique"
                )
            self._by_id[t.task_id] = i
        h = hashlib.sha256()
        for t in self._tasks:
            h.update(t.canonical_json().encode())
            h.update(b"\n")
        self.taskset_id = h.hexdigest()

    def __len__(self) -> int:
        return len(self._tasks)

    def __getitem__(self, i: int) -> Task:  # type: ignore[override]
        return self._tasks[i]

    def __iter__(self) -> Iterator[Task]:
        return iter(self._tasks)

    def get(self, task_id: str) -> Task:
        """The task with this id.

        Raises:
            TaskSetError: No such task (the message names a few that exist).
        """
        if task_id not in self._by_id:
            some = ", ".join(repr(t.task_id) for t in self._tasks[:3])
            raise TaskSetError(
                f"no task {task_id[:80]!r} in {self.name}; task ids look like {some}"
            )
        return self._tasks[self._by_id[task_id]]

    def snapshot_ids(self) -> set[str]:
        return {t.snapshot_id for t in self._tasks if t.snapshot_id}

    # ---- files --------------------------------------------------------------------
    def save(self, path: str | Path) -> Path:
        """Write ``.jsonl`` or ``.parquet`` (by suffix), atomically."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.tmp")
        if path.suffix == ".parquet":
            table = pa.table(
                {
                    "task_id": [t.task_id for t in self._tasks],
                    "question": [t.question for t in self._tasks],
                    "answer": [t.answer for t in self._tasks],
                    "level": [t.level for t in self._tasks],
                    "task": [t.canonical_json() for t in self._tasks],
                }
            )
            pq.write_table(table, tmp, compression="zstd")
        elif path.suffix == ".jsonl":
            with tmp.open("w", encoding="utf-8") as f:
                for t in self._tasks:
                    f.write(t.canonical_json() + "\n")
        else:
            raise TaskSetError(f"TaskSet files end in .jsonl or .parquet, got {path.name!r}")
        tmp.replace(path)
        return path

    @classmethod
    def load(cls, path: str | Path) -> TaskSet:
        """Read a TaskSet file (``.jsonl`` or ``.parquet``).

        Raises:
            TaskSetError: Missing file, bad JSON, or a task that does not validate (the line
                and the field are named).
        """
        path = Path(path)
        if not path.is_file():
            raise TaskSetError(f"TaskSet file {path} does not exist")
        rows: Iterable[tuple[int, str]]
        if path.suffix == ".parquet":
            column = pq.read_table(path, columns=["task"]).column("task").to_pylist()
            rows = enumerate(column, 1)
        elif path.suffix in (".jsonl", ".json"):
            rows = json_lines(path, TaskSetError, what="a TaskSet file")
        else:
            raise TaskSetError(f"TaskSet files end in .jsonl or .parquet, got {path.name!r}")
        tasks = []
        for i, line in rows:
            if not line.strip():
                continue
            try:
                tasks.append(Task.model_validate_json(line))
            except ValidationError as exc:
                first = exc.errors()[0]
                where = ".".join(str(p) for p in first["loc"]) or "the line"
                raise TaskSetError(
                    f"{path}:{i}: invalid task ({where}: {first['msg']}); "
                    "expected the fields of wikigym.tasks.taskset.Task"
                ) from exc
        if not tasks:
            raise TaskSetError(f"{path} holds no task")
        return cls(tasks, name=path.name)
