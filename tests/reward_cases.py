"""Seeded reward cases: generate them, build them, record what the reward code makes of them.

``tests/data/reward_cases.json.gz`` holds seeded episode outcomes and reward configs as plain
JSON and, for each, the breakdown the reward code computed. ``tests/test_reward_recorded.py``
builds the same cases with :func:`build_outcome` and :func:`build_config` and compares bit for
bit, so a refactoring of the rewards cannot change a reward unnoticed. Rerun only on a
deliberate change of the formulas (the test then fails until the file is recorded again)::

    PYTHONPATH=$PWD python3 tests/reward_cases.py

The file was recorded with the closed ``compute_reward`` that preceded the reward components
(commit "Record reward cases of the closed compute_reward"), so configs are in its flat form:
``w_outcome``, ``w_citation``, ``w_format`` (penalty weight 1.0) and the components' settings.
"""

from __future__ import annotations

import gzip
import json
import math
import random
import sys
from pathlib import Path
from typing import Any

from wikigym.envs.rewards import DEFAULT_WEIGHTS, EpisodeOutcome, RewardConfig, compute_reward
from wikigym.tasks.taskset import RubricEntry

SEED = 20261201
CASES = 600
PATH = Path(__file__).parent / "data" / "reward_cases.json.gz"
FLAT_WEIGHTS = {"w_outcome": "outcome", "w_citation": "citation", "w_format": "format"}

GOLDS = (
    ["Eiffel Tower", "La tour Eiffel"],
    ["Zürich"],
    ["1889"],
    ["Gustave Eiffel", "Eiffel"],
    ["東京"],
    ["x z"],
    ["yes"],
)
WORDS = (
    *("the", "Eiffel", "Tower", "Paris", "France", "Gustave", "1889", "tour", "la", "a", "an"),
    *("of", "in", "Zürich", "Zurich", "東京", "x", "y", "z", "yes", "no", "iron", "lattice"),
    *("built", "World's", "Fair", "Champ", "de", "Mars"),
)
IDS = ("p0", "p1", "p2", "p3", "p4", "p5", "d1", "d2", "ghost", "q1")
ENTITIES = ("Eiffel Tower", "Paris", "1889", "Gustave Eiffel", "The", "Zürich", "Mars", "x")
WEIGHTS = (0.0, 0.0, 0.5, 1.0, 1.0, 2.0, 5e-324, 1e-300, 1e300)


def _uniform(rng: random.Random, low: float, high: float) -> float:
    # Four decimals keep the file small; the arithmetic on them is as general.
    return round(rng.uniform(low, high), 4)


def _weight(rng: random.Random) -> float:
    return rng.choice(WEIGHTS) if rng.random() < 0.6 else _uniform(rng, 0.0, 5.0)


def random_config(rng: random.Random) -> dict[str, Any]:
    """Flat reward config fields (those of the closed ``compute_reward``), defaults left out."""
    fields = {
        "outcome": rng.choice(["binary", "f1", "threshold"]),
        "f1_threshold": rng.choice(
            [0.0, 0.5, math.nextafter(0.5, 1.0), 1.0, round(rng.random(), 4)]
        ),
        "gamma": rng.choice([1.0, 0.9, 0.5, 1e-3, _uniform(rng, 1e-3, 1.0)]),
        "per_step": rng.random() < 0.3,
        "w_outcome": _weight(rng),
        "w_citation": _weight(rng),
        "w_format": _weight(rng),
        "citation_gate": rng.random() < 0.5,
        "penalty_unknown_tool": rng.choice([0.0, 0.1, _uniform(rng, 0.0, 2.0)]),
        "penalty_invalid_arguments": rng.choice([0.0, 0.05, _uniform(rng, 0.0, 2.0)]),
        "penalty_bad_citation": rng.choice([0.0, 0.2, _uniform(rng, 0.0, 2.0)]),
        "penalty_cap": rng.choice([0.0, 0.5, 1.0, _uniform(rng, 0.0, 10.0)]),
    }
    defaults = {"w_outcome": 1.0, "w_citation": 0.0, "w_format": 0.0}
    defaults |= {k: getattr(RewardConfig(), k) for k in fields if k not in defaults}
    return {k: v for k, v in fields.items() if defaults[k] != v}


def _answer(rng: random.Random, golds: list[str]) -> str | None:
    roll = rng.random()
    if roll < 0.1:
        return None
    if roll < 0.15:
        return rng.choice(["", "  "])
    if roll < 0.45:
        gold = rng.choice(golds)
        return rng.choice([gold, gold.upper(), f"the {gold}!", f" {gold.lower()} "])
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 5)))


def random_outcome(rng: random.Random) -> dict[str, Any]:
    """A plain-JSON episode outcome; rubric passage ids are passage numbers (``p<n>``)."""
    golds = list(rng.choice(GOLDS))
    max_steps = rng.randint(1, 30)
    texts = {
        ref: " ".join(rng.choice(WORDS + ENTITIES) for _ in range(rng.randint(0, 6)))
        for ref in IDS
        if ref != "ghost" and rng.random() < 0.8
    }
    rubric = [
        {
            "text": f"fact {i}",
            "passage_ids": rng.sample(range(7), rng.randint(0, 2)),
            "entities": rng.sample(ENTITIES, rng.randint(0, 2)),
            "connected_to_answer": rng.random() < 0.8,
        }
        for i in range(rng.choice([0, 0, 1, 2, 3, 4]))
    ]
    errors = {
        code: rng.randint(0, 50) if rng.random() < 0.5 else rng.randint(0, 3)
        for code in ("unknown_tool", "invalid_arguments", "parse_error", "not_found")
        if rng.random() < 0.4
    }
    citations = [rng.choice(IDS) for _ in range(rng.randint(0, 6))]
    # Mostly cite what was seen, so that rubric support is often partial or full.
    seen = {c for c in citations if rng.random() < 0.8}
    seen |= {rng.choice(IDS) for _ in range(rng.randint(0, 3))}
    return {
        "answer": _answer(rng, golds),
        "golds": golds,
        "steps_used": rng.randint(0, max_steps),
        "max_steps": max_steps,
        "truncated": rng.random() < 0.2,
        "citations": citations,
        "seen_passages": sorted(seen),
        "existing": None if rng.random() < 0.2 else sorted(texts),
        "rubric": rubric,
        "passage_text": None if rng.random() < 0.2 else texts,
        "tool_errors": errors,
    }


def build_config(flat: dict[str, Any]) -> RewardConfig:
    """The :class:`RewardConfig` of flat config fields (see the module docstring)."""
    weights = dict(DEFAULT_WEIGHTS)
    settings = {}
    for key, value in flat.items():
        if key in FLAT_WEIGHTS:
            weights[FLAT_WEIGHTS[key]] = value
        else:
            settings[key] = value
    return RewardConfig(weights=weights, **settings)


def build_outcome(case: dict[str, Any]) -> EpisodeOutcome:
    """The :class:`EpisodeOutcome` of a plain-JSON outcome."""
    existing = case["existing"]
    texts = case["passage_text"]
    return EpisodeOutcome(
        answer=case["answer"],
        golds=tuple(case["golds"]),
        steps_used=case["steps_used"],
        max_steps=case["max_steps"],
        truncated=case["truncated"],
        citations=tuple(case["citations"]),
        seen_passages=frozenset(case["seen_passages"]),
        existing=None if existing is None else frozenset(existing).__contains__,
        rubric=tuple(RubricEntry(**r) for r in case["rubric"]),
        passage_text=None if texts is None else dict(texts).get,
        tool_errors=dict(case["tool_errors"]),
    )


def load_cases() -> list[dict[str, Any]]:
    """The recorded cases: ``config``, ``outcome`` and ``expected`` of each."""
    cases: list[dict[str, Any]] = json.loads(gzip.decompress(PATH.read_bytes()))["cases"]
    return cases


def main() -> int:
    rng = random.Random(SEED)
    cases = []
    for _ in range(CASES):
        config, outcome = random_config(rng), random_outcome(rng)
        b = compute_reward(build_outcome(outcome), build_config(config))
        # JSON floats round-trip exactly (repr), -0.0 included.
        expected = {
            "total": b.total,
            "components": b.components,
            "weights": b.weights,
            "mask": b.mask,
            "metrics": b.metrics,
            "step_rewards": None if b.step_rewards is None else list(b.step_rewards),
        }
        cases.append({"config": config, "outcome": outcome, "expected": expected})
    text = json.dumps({"seed": SEED, "cases": cases}, ensure_ascii=False, separators=(",", ":"))
    tmp = PATH.with_name(PATH.name + ".tmp")
    # mtime=0: the same cases give the same bytes.
    tmp.write_bytes(gzip.compress((text + "\n").encode("utf-8"), compresslevel=9, mtime=0))
    tmp.replace(PATH)
    print(f"wrote {len(cases)} cases to {PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
