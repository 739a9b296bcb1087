"""Rewards are bit-identical to those recorded from the closed ``compute_reward``.

``tests/data/reward_cases.json.gz`` holds 600 seeded outcomes and configs with the breakdowns
the old code computed (generated and built by ``tests/reward_cases.py``). Every float is
compared by its bits, key order included.
"""

from __future__ import annotations

import struct

import pytest
from reward_cases import build_config, build_outcome, load_cases

from wikigym.envs.rewards import compute_reward


def bits(value: float) -> str:
    return struct.pack(">d", value).hex()


def bit_items(values: dict[str, float]) -> list[tuple[str, str]]:
    return [(k, bits(v)) for k, v in values.items()]


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
        b = compute_reward(build_outcome(case["outcome"]), build_config(case["config"]))
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
