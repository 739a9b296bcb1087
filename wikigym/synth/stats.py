"""Counts over a TaskSet (``synth stats``): levels, hops, constraint types, answers, relations."""

from __future__ import annotations

from collections import Counter
from typing import Any

from wikigym.errors import SynthError
from wikigym.synth.query import Intersect, IsA, Project, Range, relations_of, unwrap, walk
from wikigym.tasks.stats import count_values
from wikigym.tasks.taskset import TaskSet


def taskset_stats(tasks: TaskSet) -> dict[str, Any]:
    """Counters (sorted by key) of the tasks' properties."""
    c: dict[str, Counter[str]] = {
        k: Counter() for k in ("hops", "constraint_type", "form", "relation")
    }
    oracle_calls: list[int] = []
    for t in tasks:
        c["form"][str(t.difficulty.get("form", "?"))] += 1
        c["hops"][str(t.difficulty.get("hops", "?"))] += 1
        oracle_calls.append(len(t.oracle))
        try:
            root = unwrap(t.query)
        except SynthError:
            c["constraint_type"]["(no synth query)"] += 1
            continue
        for n in walk(root):
            if isinstance(n, Range):
                c["constraint_type"]["range"] += 1
            elif isinstance(n, Project):
                kind = "inverse" if n.inverse else "forward"
                c["constraint_type"][f"project-{kind}"] += 1
            elif isinstance(n, Intersect) and sum(not isinstance(a, IsA) for a in n.args) > 1:
                c["constraint_type"]["intersection"] += 1
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
    out["oracle_calls_mean"] = round(sum(oracle_calls) / len(oracle_calls), 3) if tasks else 0.0
    return out


def format_stats(stats: dict[str, Any]) -> str:
    """A plain text table of :func:`taskset_stats`."""
    lines = [f"tasks {stats['tasks']}  taskset {stats['taskset_id'][:16]}"]
    lines.append(f"oracle calls (mean) {stats['oracle_calls_mean']}")
    for key in ("level", "hops", "form", "answer_type", "constraint_type", "relation"):
        lines.append(f"\n{key.replace('_', ' ')}")
        for name, n in stats[key].items():
            lines.append(f"  {name:<28} {n:>6}")
    return "\n".join(lines)
