"""What the episode viewer shows, read from an eval report as data.

A report folder (``wikigym eval``) holds ``summary.json``, ``episodes.jsonl`` and one
replayable trajectory per episode. A report may come from elsewhere, so every file is read as
untrusted data: JSON only (trajectories through the bounded, strict reader of
:mod:`wikigym.envs.trajectory_file`), values type-checked before use, nothing executed; the page
puts every string into the DOM as text. The TaskSet and the snapshot named in the trajectories
are used (for the question, the gold answer's aliases, the task's proof and the text of every
passage shown) only when they are there and their ids are the report's; ``--tasks`` and
``--corpus`` name them explicitly.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.actions import parse_action
from wikigym.envs.trajectory_file import load_header_and_steps
from wikigym.errors import EvalError, SnapshotError, TrajectoryError, WikigymError
from wikigym.tasks.taskset import Task, TaskSet

#: A passage id as observations and citations write it (``[p123]``, ``p123``).
PASSAGE_REF = re.compile(r"(?<![\w-])p(\d{1,12})(?![\w-])")
#: Passages shown per episode at most (an episode that opened a thousand pages stays small).
MAX_PASSAGES_PER_EPISODE = 200
#: Characters of an answer or gold shown in the list (the transcript shows them whole).
LIST_CHARS = 120
_MAX_EPISODES_LINE = 1 << 20


@dataclass
class Report:
    """An eval report read for viewing: its summary, its episodes' list rows and where each
    episode's trajectory is."""

    path: Path
    summary: dict[str, Any]
    rows: list[dict[str, Any]]
    trajectories: list[Path | None]
    snapshot_id: str
    taskset_id: str
    corpus_path: str | None = None
    tasks_path: str | None = None
    notes: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        agent = self.summary.get("agent")
        return f"{agent}" if isinstance(agent, str) else self.path.name


def _str(value: Any, default: str = "") -> str:
    return value if isinstance(value, str) else default


def _num(value: Any, default: float = 0.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return default
    return float(value)


def _counts(value: Any) -> dict[str, int]:
    """A ``{name: count}`` dict of positive integer counts (anything else dropped)."""
    if not isinstance(value, dict):
        return {}
    return {
        str(k): int(v)
        for k, v in sorted(value.items())
        if isinstance(v, int) and not isinstance(v, bool) and v > 0
    }


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise EvalError(
            f"{path} not found: pass the folder `wikigym eval --report` wrote"
        ) from None
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise EvalError(f"{path} is not a JSON report file ({exc})") from None


def _episode_lines(path: Path) -> Iterator[dict[str, Any]]:
    try:
        f = path.open("rb")
    except FileNotFoundError:
        raise EvalError(
            f"{path} not found: pass the folder `wikigym eval --report` wrote"
        ) from None
    with f:
        for n, raw in enumerate(f, 1):
            if len(raw) > _MAX_EPISODES_LINE:
                raise EvalError(f"{path}:{n}: line longer than {_MAX_EPISODES_LINE} bytes")
            try:
                value = json.loads(raw)
            except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
                raise EvalError(f"{path}:{n}: not a JSON object ({exc})") from None
            if not isinstance(value, dict):
                raise EvalError(f"{path}:{n}: not a JSON object")
            yield value


def _inside(root: Path, relative: str) -> Path | None:
    """``root / relative`` when it stays inside ``root`` (a report never points outside)."""
    if not relative or relative.startswith(("/", "\\")):
        return None
    path = (root / relative).resolve()
    try:
        path.relative_to(root.resolve())
    except ValueError:
        return None
    return path


def read_report(path: str | Path) -> Report:
    """Read ``summary.json`` and ``episodes.jsonl`` of the report folder ``path``.

    Raises:
        EvalError: The folder is not an eval report (one line: what is missing or malformed).
    """
    root = Path(path)
    if not root.is_dir():
        raise EvalError(f"{root} is not a folder; pass the folder `wikigym eval --report` wrote")
    summary = _read_json(root / "summary.json")
    if not isinstance(summary, dict) or summary.get("format") != "wikigym.eval/1":
        raise EvalError(f"{root / 'summary.json'} is not a wikigym eval summary (wikigym.eval/1)")
    rows: list[dict[str, Any]] = []
    trajectories: list[Path | None] = []
    for record in _episode_lines(root / "episodes.jsonl"):
        golds = [g for g in record.get("golds", []) if isinstance(g, str)]
        rows.append(
            {
                "i": len(rows),
                "task_id": _str(record.get("task_id"), f"episode-{len(rows)}"),
                "level": _str(record.get("level"), "unknown"),
                "seed": int(_num(record.get("seed"))),
                "success": record.get("success") is True,
                "f1": _num(record.get("f1")),
                "reward": _num(record.get("reward")),
                "steps": int(_num(record.get("steps"))),
                "truncated": record.get("truncated") is True,
                "answer": record.get("answer") if isinstance(record.get("answer"), str) else None,
                "golds": golds,
                "tool_errors": _counts(record.get("tool_errors")),
                "hallucinations": _counts(record.get("hallucinations")),
            }
        )
        trajectories.append(_inside(root, _str(record.get("trajectory"))))
    return Report(
        path=root,
        summary=summary,
        rows=rows,
        trajectories=trajectories,
        snapshot_id=_str(summary.get("snapshot_id")),
        taskset_id=_str(summary.get("taskset_id")),
    )


@dataclass
class Sources:
    """The TaskSet and snapshot a report's episodes ran on, where they could be opened."""

    tasks: TaskSet | None = None
    snapshot: Snapshot | None = None

    def task(self, task_id: str) -> Task | None:
        if self.tasks is None:
            return None
        try:
            return self.tasks.get(task_id)
        except KeyError:
            return None


def open_sources(
    report: Report, *, corpus: str | Path | None = None, tasks: str | Path | None = None
) -> Sources:
    """The TaskSet and snapshot of ``report``: the ones given, else the ones its first
    trajectory names, each used only when its id is the report's (a note says why not)."""
    header_paths: dict[str, Any] = {}
    for path in report.trajectories:
        if path is not None and path.is_file():
            try:
                header, _ = load_header_and_steps(path)
            except TrajectoryError:
                continue
            header_paths = header.env_kwargs
            break
    sources = Sources()
    tasks_path = tasks if tasks is not None else header_paths.get("tasks")
    if isinstance(tasks_path, str | Path):
        try:
            taskset = TaskSet.load(tasks_path)
        except (WikigymError, OSError, ValueError) as exc:
            report.notes.append(f"tasks not shown: {tasks_path} could not be read ({exc})")
        else:
            if report.taskset_id and taskset.taskset_id != report.taskset_id:
                report.notes.append(
                    f"tasks not shown: {tasks_path} is TaskSet {taskset.taskset_id[:12]}, "
                    f"not the report's {report.taskset_id[:12]}"
                )
            else:
                sources.tasks = taskset
                report.tasks_path = str(tasks_path)
    corpus_path = corpus if corpus is not None else header_paths.get("corpus")
    if isinstance(corpus_path, str | Path):
        try:
            snapshot = Snapshot.open(corpus_path)
        except (SnapshotError, OSError) as exc:
            report.notes.append(f"passage texts not shown: {corpus_path} ({exc})")
        else:
            if report.snapshot_id and snapshot.snapshot_id != report.snapshot_id:
                report.notes.append(
                    f"passage texts not shown: {corpus_path} is snapshot "
                    f"{snapshot.snapshot_id[:12]}, not the report's {report.snapshot_id[:12]}"
                )
            else:
                sources.snapshot = snapshot
                report.corpus_path = str(corpus_path)
    return sources


def _question(task: Task | None, first_observation: str) -> str:
    if task is not None:
        return task.question
    marker = "\nQuestion: "
    at = first_observation.rfind(marker)
    return first_observation[at + len(marker) :].strip() if at >= 0 else ""


def _calls(action: str) -> tuple[list[dict[str, Any]], list[dict[str, str]]]:
    parsed = parse_action(action, max_calls=64)
    calls = [
        {"name": c.name, "args": c.args.model_dump(mode="json", exclude_none=True)}
        for c in parsed.calls
    ]
    errors = [{"code": str(e.code.value), "message": e.message} for e in parsed.errors]
    return calls, errors


def _task_proof(task: Task) -> dict[str, Any]:
    evidence = task.evidence.model_dump(mode="json")
    return {
        "level": task.level,
        "answer": task.answer,
        "aliases": list(task.aliases),
        "answer_type": task.answer_type,
        "query": task.query,
        "evidence": evidence,
        "oracle": [{"name": c.name, "args": dict(c.arguments)} for c in task.oracle],
        "rubric": [r.model_dump(mode="json") for r in task.rubric],
        "difficulty": dict(task.difficulty),
        "generator": task.generator,
        "source": task.source,
    }


def _passage_ids(*texts: str) -> list[int]:
    seen: dict[int, None] = {}
    for text in texts:
        for m in PASSAGE_REF.finditer(text):
            seen.setdefault(int(m.group(1)), None)
    return list(seen)


def episode_detail(
    report: Report, index: int, sources: Sources, passages: dict[str, dict[str, Any]]
) -> dict[str, Any]:
    """Episode ``index`` whole: the transcript (each action, its parsed calls and errors, the
    observation), the answer and citations, reward components, mask, the task's proof; the
    passages it shows or cites are added to ``passages`` (id -> title, text)."""
    row = report.rows[index]
    task = sources.task(row["task_id"])
    detail: dict[str, Any] = {
        "i": index,
        "answer": row["answer"],
        "golds": row["golds"],
        "steps": [],
        "problem": None,
    }
    path = report.trajectories[index]
    first_observation = ""
    wanted: list[int] = []
    if path is None or not path.is_file():
        detail["problem"] = "trajectory file missing"
    else:
        try:
            header, steps = load_header_and_steps(path)
        except TrajectoryError as exc:
            detail["problem"] = str(exc)
        else:
            first_observation = header.observation
            last_info: dict[str, Any] = {}
            for step in steps:
                calls, errors = _calls(step.action)
                info = step.info
                detail["steps"].append(
                    {
                        "action": step.action,
                        "calls": calls,
                        "errors": errors,
                        "observation": step.observation,
                        "reward": step.reward,
                        "tool_error": _str(info.get("tool_error")) or None,
                    }
                )
                wanted += _passage_ids(step.observation)
                last_info = info
            citations = [c for c in last_info.get("citations", []) if isinstance(c, str)]
            detail["citations"] = citations
            detail["mask"] = last_info.get("mask") is True
            components = last_info.get("reward_components")
            detail["components"] = (
                {str(k): _num(v) for k, v in sorted(components.items())}
                if isinstance(components, dict)
                else {}
            )
            wanted += _passage_ids(" ".join(citations))
    detail["question"] = _question(task, first_observation)
    detail["first_observation"] = first_observation
    if task is not None:
        detail["task"] = _task_proof(task)
        wanted += list(task.evidence.passage_ids)
    shown: list[int] = []
    if sources.snapshot is not None:
        for pid in dict.fromkeys(wanted):
            if len(shown) >= MAX_PASSAGES_PER_EPISODE:
                break
            key = str(pid)
            if key not in passages:
                passage = sources.snapshot.passage(pid)
                if passage is None:
                    continue
                passages[key] = {
                    "title": passage.title,
                    "doc_id": passage.doc_id,
                    "section": " / ".join(passage.section),
                    "text": passage.text,
                }
            shown.append(pid)
    detail["passage_ids"] = shown
    return detail


def list_row(row: dict[str, Any], chunk: int) -> dict[str, Any]:
    """The compact line of an episode in the page's list (the whole list is loaded at once)."""
    return {
        "i": row["i"],
        "id": row["task_id"],
        "lv": row["level"],
        "ok": row["success"],
        "f1": round(row["f1"], 4),
        "r": round(row["reward"], 4),
        "n": row["steps"],
        "tr": row["truncated"],
        "te": row["tool_errors"],
        "h": row["hallucinations"],
        "a": (row["answer"] or "")[:LIST_CHARS] if row["answer"] is not None else None,
        "g": (row["golds"][0] if row["golds"] else "")[:LIST_CHARS],
        "c": chunk,
    }


def transcript(report: Report, index: int) -> list[tuple[str, str]]:
    """Episode ``index``'s (action, observation) pairs, step by step (empty when its
    trajectory is missing or unreadable)."""
    path = report.trajectories[index]
    if path is None or not path.is_file():
        return []
    try:
        _, steps = load_header_and_steps(path)
    except TrajectoryError:
        return []
    return [(s.action, s.observation) for s in steps]
