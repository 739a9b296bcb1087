"""Difficulty levels, defined by measurable properties of a task (checked by ``synth verify``).

Measures (in ``Task.difficulty``):

- ``hops``: longest chain of projections from a constant to the answer (a range filter on a
  literal counts as one hop).
- ``intersections``: intersection nodes with at least two constraints (type filters such as
  "a city" are not constraints).
- ``obfuscated_values``: numbers and dates shown only as ranges ("in the 1920s",
  "between 40,000 and 60,000").
- ``described_entities``: intermediate entities named by a description instead of a name.
- ``distractor_min``: over every intersection, the fewest entities (of the answer's kind) that
  one constraint matches alone; 0 when there is no intersection.
- ``oracle_calls``: tool calls of the oracle trajectory, the answer included.

Levels:

============  ===============================================================================
easy          hops == 1, no intersection
medium        hops == 2, no intersection
hard          hops == 3, or hops == 2 with an intersection; obfuscated_values >= 1
phd           hops >= 4, or hops == 3 with an intersection; at least one intersection;
              obfuscated_values >= 2; distractor_min >= 2 (every constraint of every
              intersection alone matches several entities); oracle_calls >= 6
============  ===============================================================================

Every level also requires a unique answer (proved by evaluation over all facts), no answer
string in the question, and an oracle that solves the task in ``WikiSearch-v0``.
"""

from __future__ import annotations

from collections.abc import Mapping

LEVELS: tuple[str, ...] = ("easy", "medium", "hard", "phd")


def level_problems(level: str, m: Mapping[str, float | int | str]) -> list[str]:
    """What keeps measures ``m`` from meeting ``level`` (empty when they meet it)."""

    def num(key: str) -> int:
        v = m.get(key, 0)
        return int(v) if isinstance(v, int | float) else 0

    h, inter, obf = num("hops"), num("intersections"), num("obfuscated_values")
    out: list[str] = []
    if level == "easy":
        if h != 1:
            out.append(f"easy needs hops == 1, got {h}")
        if inter:
            out.append(f"easy allows no intersection, got {inter}")
    elif level == "medium":
        if h != 2:
            out.append(f"medium needs hops == 2, got {h}")
        if inter:
            out.append(f"medium allows no intersection, got {inter}")
    elif level == "hard":
        if not (h == 3 or (h == 2 and inter >= 1)):
            out.append(f"hard needs hops == 3 or hops == 2 with an intersection, got {h}/{inter}")
        if obf < 1:
            out.append(f"hard needs >= 1 obfuscated value, got {obf}")
    elif level == "phd":
        if not (h >= 4 or (h == 3 and inter >= 1)):
            out.append(f"phd needs hops >= 4 or hops == 3 with an intersection, got {h}/{inter}")
        if inter < 1:
            out.append("phd needs at least one intersection")
        if obf < 2:
            out.append(f"phd needs >= 2 obfuscated values, got {obf}")
        if num("distractor_min") < 2:
            out.append(f"phd needs distractor_min >= 2, got {num('distractor_min')}")
        if num("oracle_calls") < 6:
            out.append(f"phd needs >= 6 oracle calls, got {num('oracle_calls')}")
    else:
        out.append(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    return out
