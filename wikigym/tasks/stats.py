"""Counts over a TaskSet: what ``wikigym tasks info`` prints, and the base of ``synth stats``;
the Wilson interval of a success rate (eval's reports, synth's calibration)."""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable
from typing import Any

from wikigym.tasks.taskset import TaskSet


def count_values(values: Iterable[str | None], missing: str = "(none)") -> dict[str, int]:
    """How often each value occurs (None counted as ``missing``), sorted by value."""
    c = Counter(missing if v is None else v for v in values)
    return dict(sorted(c.items()))


def taskset_info(taskset: TaskSet) -> dict[str, Any]:
    """Counts that describe any TaskSet (what ``tasks info`` prints)."""
    return {
        "tasks": len(taskset),
        "taskset_id": taskset.taskset_id,
        "snapshot_ids": sorted(taskset.snapshot_ids()),
        "levels": count_values(t.level for t in taskset),
        "answer_types": count_values(t.answer_type for t in taskset),
        "sources": count_values(t.source for t in taskset),
        "with_oracle": sum(1 for t in taskset if t.oracle),
        "with_rubric": sum(1 for t in taskset if t.rubric),
    }


Z95 = 1.959963984540054


def wilson(k: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of ``k`` successes in ``n`` trials ((0, 1) for ``n == 0``)."""
    if n <= 0:
        return (0.0, 1.0)
    p = k / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    # The bound at an end is the end itself, exactly (floating point gives 0.9999999999999999
    # for k == n, an interval that leaves out the observed rate).
    low = 0.0 if k <= 0 else max(0.0, centre - half)
    high = 1.0 if k >= n else min(1.0, centre + half)
    return (low, high)
