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
- ``oracle_calls``: tool calls of the oracle trajectory, the answer included (at most 12,
  WikiSearch-v1's default step budget).
- ``effective_hops``: hops once redundant constraints are dropped; every task is minimal
  (:mod:`wikigym.synth.minimal`), so it equals ``hops``.
- ``forms``: the question forms the query uses (:func:`wikigym.synth.query.forms_of`).
- ``unsurfaced``: descriptions (layers) of the question whose entity no search for their
  clues surfaces (:mod:`wikigym.synth.surfacing`): reached only by testing candidates or
  following links, which is what makes search hard (since ``wikigym.synth/6``).
- ``fuzzy_clues``: clues a search cannot take literally: open or century-part ranges,
  times relative to another event, partial names.

Levels:

============  ===============================================================================
easy          hops == 1, no intersection
medium        hops == 2, no intersection
hard          hops == 3, or hops == 2 with an intersection; obfuscated_values >= 1
phd           hops >= 4, or hops == 3 with an intersection; at least one intersection;
              obfuscated_values >= 2; distractor_min >= 2 (every constraint of every
              intersection alone matches several entities); oracle_calls >= 6;
              unsurfaced >= 1 (a hop through an entity a search does not surface)
============  ===============================================================================

Every level also requires a unique answer (proved by evaluation over all facts), a minimal
query (no constraint of any intersection can be dropped with the same answer), no answer
string in the question, and an oracle that solves the task in ``WikiSearch-v1``. Hard and
phd tasks also have no anchor-page shortcut (a named constant's page naming the answer with
an asked attribute).

Mix of forms drafted per level (weights of ``generate.FORM_MIX``; ``--yes-no`` adds yes/no
at 0.15, its answers alternating so they stay 50/50; ``--forms`` adds other forms at their
opt-in weights, e.g. ``total`` at medium). Each task slot first drafts the form
a quota cycle in these proportions schedules (``generate.form_cycle``, 30 drafts), then draws
by weight; a drafted form that cannot meet the level is rejected, so the shares of made tasks
differ somewhat (``synth stats`` shows them; measured in ``benchmarks/results/synth_v3.md``):

============  ===============================================================================
easy          entity .50, literal .30, count .10, comparison of named entities .05,
              arithmetic on named entities .05
medium        entity .40, literal .25, count .10, comparison .10, superlative .10,
              arithmetic .05
hard          entity .25, literal .15, superlative .10, fuzz .10, union .07, negation .07,
              wide .06, count, comparison, arithmetic, same .05 each
phd           entity .20, literal .10, superlative .10, fuzz .10, wide .10, union .09,
              negation .09, arithmetic .08, comparison .07, same .07
============  ===============================================================================

Easy and medium allow no intersection, so the forms that live in one (union, negation, same,
fuzz, wide) start at hard. Literal answers from a tiny closed set (a text relation with
under 30 values, each shared by three subjects or more on average: occupations, genres) are
drafted at easy only.
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
        # Measured since wikigym.synth/6: a task of an older generator carries no such key.
        if "unsurfaced" in m and num("unsurfaced") < 1:
            out.append("phd needs a description no search surfaces (unsurfaced >= 1), got 0")
    else:
        out.append(f"unknown level {level!r}; expected one of {', '.join(LEVELS)}")
    return out


# What each level needs of the three structural measures, as lower bounds: hops,
# intersections, obfuscated values (see :func:`level_problems`).
_STRUCTURE_FLOOR: dict[str, tuple[int, int, int]] = {
    "easy": (1, 0, 0),
    "medium": (2, 0, 0),
    "hard": (2, 0, 1),
    "phd": (3, 1, 2),
}


def structure_can_meet(level: str, m: Mapping[str, float | int | str]) -> bool:
    """Whether a query with structural measures ``m`` (hops, intersections, obfuscated
    values), or any query made from it by dropping constraints, can still meet ``level``.

    Dropping a constraint never raises any of the three, and every level needs at least
    its floor of each, so a query below a floor is rejected before it is minimised or
    proved: none of its reductions can make a task of that level."""
    floor = _STRUCTURE_FLOOR.get(level)
    if floor is None:
        return True
    got = (m.get("hops", 0), m.get("intersections", 0), m.get("obfuscated_values", 0))
    return all(isinstance(v, int | float) and v >= f for v, f in zip(got, floor, strict=True))
