"""Counts over a TaskSet (``synth stats``): levels, hops, constraint types, answers, relations,
and the mix of question forms per level (:func:`wikigym.synth.query.forms_of`)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth.query import forms_of, relations_of, unwrap, walk
from wikigym.tasks.stats import count_values
from wikigym.tasks.taskset import TaskSet


def taskset_stats(tasks: TaskSet) -> dict[str, Any]:
    """Counters (sorted by key) of the tasks' properties."""
    c: dict[str, Counter[str]] = {
        k: Counter() for k in ("hops", "constraint_type", "form", "relation")
    }
    oracle_calls: list[int] = []
    by_level: dict[str, Counter[str]] = {}
    for t in tasks:
        c["form"][str(t.difficulty.get("form", "?"))] += 1
        c["hops"][str(t.difficulty.get("hops", "?"))] += 1
        oracle_calls.append(len(t.oracle))
        try:
            root = unwrap(t.query)
        except SynthError:
            c["constraint_type"]["(no synth query)"] += 1
            continue
        level_forms = by_level.setdefault(t.level or "?", Counter())
        level_forms["(tasks)"] += 1
        for f in forms_of(root):
            level_forms[f] += 1
        for n in walk(root):
            if (kind := n.constraint_type()) is not None:
                c["constraint_type"][kind] += 1
        for r in relations_of(root):
            c["relation"][r] += 1
    out: dict[str, Any] = {
        "tasks": len(tasks),
        "taskset_id": tasks.taskset_id,
        "level": count_values((t.level or None for t in tasks), missing="?"),
        "answer_type": count_values((t.answer_type or None for t in tasks), missing="?"),
    }
    for k, counter in c.items():
        out[k] = dict(sorted(counter.items()))
    out["forms_by_level"] = {lv: dict(sorted(cnt.items())) for lv, cnt in sorted(by_level.items())}
    out["open_world_by_level"] = open_world_stats(tasks)
    out["oracle_calls_mean"] = round(sum(oracle_calls) / len(oracle_calls), 3) if tasks else 0.0
    return out


# Per-task measures of wikigym.synth/6 averaged per level by ``synth stats`` (a TaskSet of an
# older generator has none of them, and shows none).
LEVEL_MEANS = ("closed_world", "unsurfaced", "fuzzy_clues", "indefinite_descriptions")


def open_world_stats(tasks: TaskSet) -> dict[str, dict[str, float]]:
    """Per level, the mean of each of :data:`LEVEL_MEANS` over the tasks that carry it (the
    share of ``closed_world`` tasks: unique only inside the snapshot)."""
    sums: dict[str, dict[str, list[float]]] = {}
    for t in tasks:
        level = sums.setdefault(t.level or "?", {})
        for key in LEVEL_MEANS:
            v = t.difficulty.get(key)
            if isinstance(v, int | float):
                level.setdefault(key, []).append(float(v))
    return {
        lv: {k: round(sum(v) / len(v), 3) for k, v in sorted(ms.items())}
        for lv, ms in sorted(sums.items())
        if ms
    }


def format_stats(stats: dict[str, Any]) -> str:
    """A plain text table of :func:`taskset_stats`."""
    lines = [f"tasks {stats['tasks']}  taskset {stats['taskset_id'][:16]}"]
    lines.append(f"oracle calls (mean) {stats['oracle_calls_mean']}")
    for key in ("level", "hops", "form", "answer_type", "constraint_type", "relation"):
        lines.append(f"\n{key.replace('_', ' ')}")
        for name, n in stats[key].items():
            lines.append(f"  {name:<28} {n:>6}")
    # A task has several forms (a fuzz range inside a comparison): shares need not sum to 1.
    lines.append("\nforms per level (share of the level's tasks)")
    for level, counts in stats.get("forms_by_level", {}).items():
        total = counts.get("(tasks)", 0) or 1
        shown = ", ".join(f"{f} {n / total:.0%}" for f, n in counts.items() if f != "(tasks)")
        lines.append(f"  {level:<8} {shown}")
    if stats.get("open_world_by_level"):
        lines.append("\nper level (means; closed_world: the share unique only inside the snapshot)")
        for level, means in stats["open_world_by_level"].items():
            shown = ", ".join(f"{k} {v}" for k, v in means.items())
            lines.append(f"  {level:<8} {shown}")
    return "\n".join(lines)
