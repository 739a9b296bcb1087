"""The order levels are listed in: reports, plots, the viewer, retrieval evaluation."""

from __future__ import annotations

from collections.abc import Iterable

LEVEL_ORDER: tuple[str, ...] = ("easy", "medium", "hard", "phd")


def ordered_levels(levels: Iterable[str]) -> list[str]:
    """Known levels in difficulty order, then the others alphabetically."""
    present = set(levels)
    known = [lv for lv in LEVEL_ORDER if lv in present]
    return known + sorted(present - set(LEVEL_ORDER))
