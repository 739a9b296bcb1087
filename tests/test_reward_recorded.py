"""Rewards are bit-identical to those recorded from the closed ``compute_reward``.

``tests/data/reward_cases.json.gz`` holds 600 seeded outcomes and configs (flat fields of the
old config: ``w_outcome``, ``w_citation``, ``w_format``, penalty weight fixed at 1.0) with the
breakdowns the old code computed (``tests/data/record_reward_cases.py``). Every float is
compared by its bits, key order included.
"""

from __future__ import annotations

import gzip
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from wikigym.envs.rewards import EpisodeOutcome, RewardConfig, compute_reward
from wikigym.envs.tasks import RubricEntry

CASES = Path(__file__).parent / "data" / "reward_cases.json.gz"
OLD_WEIGHTS = {"w_outcome": "outcome", "w_citation": "citation", "w_format": "format"}


def config_of(flat: dict[str, Any]) -> RewardConfig:
    """The components config equal to an old flat config."""
    weights = {"outcome": 1.0, "citation": 0.0, "format": 0.0, "penalty": 1.0}
    rest = {}
    for key, value in flat.items():
        if key in OLD_WEIGHTS:
            weights[OLD_WEIGHTS[key]] = value
        else:
            rest[key] = value
    return RewardConfig(weights=weights, **rest)


def outcome_of(case: dict[str, Any]) -> EpisodeOutcome:
    existing, texts = case["existing"], case["passage_text"]
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


def bits(value: float) -> str:
    return struct.pack(">d", value).hex()


def bit_items(values: dict[str, float]) -> list[tuple[str, str]]:
    return [(k, bits(v)) for k, v in values.items()]


def load_cases() -> list[dict[str, Any]]:
    return json.loads(gzip.decompress(CASES.read_bytes()).decode("utf-8"))["cases"]


def test_fixture_covers_every_branch() -> None:
    """The recorded cases reach every component state, so the comparison below means much."""
    cases = load_cases()
    assert len(cases) == 600
    expected = [c["expected"] for c in cases]
    assert sum(e["mask"] for e in expected) > 50
    assert sum(e["step_rewards"] is not None for e in expected) > 50
    assert sum("citation" in e["components"] for e in expected) > 200
    assert sum("citation" not in e["components"] for e in expected) > 200
    assert sum(0.0 < e["components"].get("citation", 0.0) < 1.0 for e in expected) > 30
    assert sum(e["components"]["penalty"] < 0.0 for e in expected) > 100
    assert sum(0.0 < e["components"]["outcome"] < 1.0 for e in expected) > 50
    assert sum(e["total"] < 0.0 for e in expected) > 50
    assert {c["config"].get("outcome", "binary") for c in cases} == {"binary", "f1", "threshold"}


@pytest.mark.parametrize("chunk", range(6))
def test_new_components_match_recorded_old_rewards(chunk: int) -> None:
    cases = load_cases()[chunk * 100 : (chunk + 1) * 100]
    for i, case in enumerate(cases):
        b = compute_reward(outcome_of(case["outcome"]), config_of(case["config"]))
        want = case["expected"]
        where = f"case {chunk * 100 + i}"
        assert bits(b.total) == bits(want["total"]), where
        assert bit_items(b.components) == bit_items(want["components"]), where
        assert bit_items(b.weights) == bit_items(want["weights"]), where
        assert bit_items(b.metrics) == bit_items(want["metrics"]), where
        assert b.mask is want["mask"], where
        if want["step_rewards"] is None:
            assert b.step_rewards is None, where
        else:
            assert b.step_rewards is not None, where
            assert [bits(r) for r in b.step_rewards] == [bits(r) for r in want["step_rewards"]]
