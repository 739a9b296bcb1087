"""The component registry and the weights listing of wikigym.envs.rewards."""

from __future__ import annotations

import copy
import dataclasses
import math
import pickle

import gymnasium as gym
import pytest

import wikigym  # noqa: F401  (registers the envs)
from wikigym.envs.rewards import (
    DEFAULT_WEIGHTS,
    EpisodeOutcome,
    LogMetric,
    RewardConfig,
    RewardInput,
    component,
    component_names,
    compute_reward,
    reward_component,
)
from wikigym.errors import RewardConfigError, UnknownRewardComponentError, WikigymError

BUILTINS = ("outcome", "citation", "format", "penalty")


def episode(**overrides: object) -> EpisodeOutcome:
    fields: dict[str, object] = {
        "answer": "Paris",
        "golds": ("Paris",),
        "steps_used": 2,
        "max_steps": 5,
        "citations": ("p1", "p2"),
        "seen_passages": frozenset({"p1"}),
    }
    fields.update(overrides)
    return EpisodeOutcome(**fields)  # type: ignore[arg-type]


# A new component is one function and its registration; the tests below are its test.
@reward_component("test_brevity")
def brevity(inp: RewardInput, log_metric: LogMetric) -> float | None:
    """1.0 for an answer of at most two words, 0.5 otherwise; absent without an answer."""
    if inp.outcome.answer is None:
        return None
    words = len(inp.outcome.answer.split())
    log_metric("answer_words", float(words))
    return 1.0 if words <= 2 else 0.5


def test_builtins_are_registered_in_order() -> None:
    assert component_names()[:4] == BUILTINS
    assert [component(n).kind for n in BUILTINS] == ["score", "score", "score", "penalty"]
    assert tuple(RewardConfig().weights) == BUILTINS == tuple(n for n, _ in DEFAULT_WEIGHTS)


def test_unknown_component_is_a_typed_error_naming_the_known_ones() -> None:
    with pytest.raises(UnknownRewardComponentError) as err:
        RewardConfig(weights={"outcome": 1.0, "outcom": 0.5})
    message = str(err.value)
    assert "'outcom'" in message
    assert all(repr(n) in message for n in BUILTINS)
    assert isinstance(err.value, RewardConfigError)
    assert isinstance(err.value, WikigymError)  # the CLI prints it as one line
    with pytest.raises(UnknownRewardComponentError, match="'judge'"):
        RewardConfig().with_weights(judge=1.0)
    with pytest.raises(UnknownRewardComponentError):
        component("judge")


def test_weights_must_be_a_mapping_of_names_to_numbers() -> None:
    with pytest.raises(TypeError, match="weights must map"):
        RewardConfig(weights=[("outcome", 1.0)])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="str keys"):
        RewardConfig(weights={1: 1.0})  # type: ignore[dict-item]
    with pytest.raises(RewardConfigError, match=r"weights\['penalty'\] must be"):
        RewardConfig(weights={"penalty": math.nan})


def test_duplicate_registration_is_refused() -> None:
    with pytest.raises(ValueError, match="already registered"):
        reward_component("outcome")(brevity)
    with pytest.raises(ValueError, match="kind must be"):
        reward_component("test_other", kind="bonus")  # type: ignore[arg-type]


def test_only_listed_components_run_in_listed_order() -> None:
    cfg = RewardConfig(weights={"penalty": 1.0, "outcome": 1.0})
    b = compute_reward(episode(), cfg)
    assert list(b.components) == ["penalty", "outcome"]
    assert list(b.weights) == ["penalty", "outcome"]
    assert b.total == 1.0
    # The diagnostics do not depend on the listing.
    assert b.metrics["em"] == 1.0 and b.metrics["citation_unseen"] == 1.0
    assert "rubric_support" not in b.metrics


def test_new_component_is_listed_weighted_and_logs() -> None:
    cfg = RewardConfig().with_weights(test_brevity=2.0)
    assert list(cfg.weights) == [*BUILTINS, "test_brevity"]
    assert cfg.max_total == 3.0
    b = compute_reward(episode(answer="the city of Paris"), cfg)
    assert b.components["test_brevity"] == 0.5
    assert b.metrics["answer_words"] == 4.0
    assert b.total == 0.0 + 2.0 * 0.5  # wrong answer: outcome 0
    assert "test_brevity" not in compute_reward(episode(), RewardConfig()).components


def test_absent_score_shares_its_weight_among_present_scores() -> None:
    cfg = RewardConfig(weights={"outcome": 1.0, "test_brevity": 3.0, "penalty": 1.0})
    b = compute_reward(episode(answer=None), cfg)
    assert "test_brevity" not in b.components
    assert b.weights == {"outcome": 4.0, "penalty": 1.0}
    assert b.total == 0.0
    answered = compute_reward(episode(), cfg)
    assert answered.weights == {"outcome": 1.0, "test_brevity": 3.0, "penalty": 1.0}
    assert answered.total == 4.0 == cfg.max_total


@reward_component("test_out_of_range")
def out_of_range(inp: RewardInput, log_metric: LogMetric) -> float:
    return 1.5


@reward_component("test_nan")
def not_a_number(inp: RewardInput, log_metric: LogMetric) -> float:
    return math.nan


@reward_component("test_absent_penalty", kind="penalty")
def absent_penalty(inp: RewardInput, log_metric: LogMetric) -> float | None:
    return None


@reward_component("test_clashing_metric")
def clashing_metric(inp: RewardInput, log_metric: LogMetric) -> float:
    log_metric("em", 0.0)
    return 0.0


@pytest.mark.parametrize(
    ("name", "message"),
    [
        ("test_out_of_range", r"outside \[0.0, 1.0\]"),
        ("test_nan", "not a finite float"),
        ("test_absent_penalty", "not a finite float"),
        ("test_clashing_metric", "'em' is logged twice"),
    ],
)
def test_a_component_that_breaks_its_contract_fails_loudly(name: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        compute_reward(episode(), RewardConfig().with_weights(**{name: 1.0}))


def test_penalty_weight_scales_the_range() -> None:
    cfg = RewardConfig(penalty_unknown_tool=1.0, penalty_cap=0.5).with_weights(penalty=2.0)
    assert cfg.min_total == -1.0
    b = compute_reward(episode(answer=None, tool_errors={"unknown_tool": 3}), cfg)
    assert b.components["penalty"] == -0.5
    assert b.total == -1.0 == cfg.min_total


def test_config_is_a_value() -> None:
    a = RewardConfig.shaped()
    b = RewardConfig.shaped()
    assert a == b and hash(a) == hash(b)
    reordered = dataclasses.replace(a, weights=dict(reversed(list(a.weights.items()))))
    assert reordered == a and hash(reordered) == hash(a)
    assert pickle.loads(pickle.dumps(a)) == a
    assert copy.deepcopy(a) == a
    source = {"outcome": 1.0}
    cfg = RewardConfig(weights=source)
    source["format"] = 1.0  # the config keeps its own copy
    assert dict(cfg.weights) == {"outcome": 1.0}
    assert RewardConfig().with_weights(outcome=0.5) != RewardConfig()


def test_an_env_reports_a_registered_component_by_its_name() -> None:
    cfg = RewardConfig(weights={"outcome": 1.0, "test_brevity": 0.5, "penalty": 1.0})
    env = gym.make("Calc-v0", reward=cfg)
    env.reset(seed=1)
    _, _, _, _, info = env.step("<answer>nope</answer>")
    env.reset(seed=1)
    _, reward, _, _, info = env.step(f"<answer>{info['gold']}</answer>")
    assert list(info["reward_components"]) == ["outcome", "test_brevity", "penalty"]
    assert info["reward_components"]["test_brevity"] == 1.0
    assert info["reward_metrics"]["answer_words"] == 1.0
    assert reward == 1.5
    env.close()
