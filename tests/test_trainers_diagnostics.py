"""Diagnostics: alarm logic on synthetic metric sequences, episode metrics."""

from __future__ import annotations

import pytest

pytest.importorskip("transformers")

from wikigym.trainers.diagnostics import (
    HealthMonitor,
    HealthThresholds,
    episode_metrics,
)
from wikigym.trainers.episodes import EpisodeRecord, EpisodeSink, repeat_ngram_share


def feed(monitor: HealthMonitor, rows: list[dict[str, float]]) -> list[str]:
    names = []
    for step, row in enumerate(rows, 1):
        names += [a.name for a in monitor.update(step, row)]
    return names


def test_rising_length_with_flat_reward_raises_format_alarm() -> None:
    rows = [{"reward": 0.3, "completions/mean_length": 100.0 + 15 * i} for i in range(20)]
    names = feed(HealthMonitor(), rows)
    assert names == ["length_without_reward"]  # raised once, not every step


def test_healthy_run_raises_nothing() -> None:
    # Length grows, but so does the reward; repetition and parse failures stay low and flat.
    rows = [
        {
            "reward": 0.1 + 0.03 * i,
            "completions/mean_length": 100.0 + 15 * i,
            "diag/repeat_ngram_share": 0.05,
            "diag/parse_failure_rate": 0.1,
            "sampling/sampling_logp_difference/mean": 0.01,
            "sampling/importance_sampling_ratio/min": 0.9,
            "sampling/importance_sampling_ratio/max": 1.1,
        }
        for i in range(30)
    ]
    assert feed(HealthMonitor(), rows) == []


def test_flat_length_flat_reward_is_not_an_alarm() -> None:
    rows = [{"reward": 0.0, "completions/mean_length": 200.0} for _ in range(30)]
    assert feed(HealthMonitor(), rows) == []


def test_repetition_and_parse_failures_rising() -> None:
    rows = [
        {"diag/repeat_ngram_share": 0.02 * i, "diag/parse_failure_rate": 0.03 * i}
        for i in range(20)
    ]
    names = feed(HealthMonitor(), rows)
    assert sorted(names) == ["parse_failures_rising", "repetition_rising"]


def test_logprob_mismatch_warns_and_rearms() -> None:
    m = HealthMonitor(HealthThresholds(logp_diff_warn=0.05))
    seq = [0.01, 0.2, 0.3, 0.01, 0.2]
    names = feed(m, [{"sampling/sampling_logp_difference/mean": v} for v in seq])
    assert names == ["logprob_mismatch", "logprob_mismatch"]  # re-armed after it cleared
    assert m.alarms[0].step == 2 and "dtype" in m.alarms[0].message
    assert feed(HealthMonitor(), [{"sampling/importance_sampling_ratio/max": 5.0}]) == [
        "logprob_mismatch"
    ]


def test_too_few_points_and_bad_values_are_ignored() -> None:
    rows = [{"reward": float("nan"), "completions/mean_length": None}] * 3
    assert feed(HealthMonitor(), rows) == []  # type: ignore[arg-type]


def test_episode_metrics_and_sink() -> None:
    sink = EpisodeSink()
    sink.add(
        EpisodeRecord(
            task_id="a",
            reward=1.0,
            answered=True,
            tool_calls=3,
            valid_tool_calls=2,
            tool_errors={"not_found": 1},
            components={"outcome": 1.0},
        )
    )
    sink.add(
        EpisodeRecord(
            task_id="b",
            masked=True,
            mask_reason="env_truncated",
            tool_calls=1,
            valid_tool_calls=1,
            parse_failures=1,
            components={"outcome": 0.0},
        )
    )
    records = sink.drain()
    assert sink.drain() == [] and sink.total == 2
    m = episode_metrics(records)
    assert m["diag/episodes"] == 2
    assert m["diag/reward/outcome"] == 1.0  # masked episodes are left out of the reward means
    assert m["diag/tool_calls_per_episode"] == 2.0
    assert m["diag/tool_call_validity"] == 0.75
    assert m["diag/tool_errors/not_found"] == 0.5
    assert m["diag/masked_share"] == 0.5 and m["diag/masked_env_share"] == 0.5
    assert m["diag/parse_failure_rate"] == 0.5
    assert episode_metrics([]) == {}


def test_repeat_ngram_share() -> None:
    assert repeat_ngram_share("the answer is Paris because p12 says so") == 0.0
    looping = " ".join(["search the page again"] * 20)
    assert repeat_ngram_share(looping) > 0.8
    assert repeat_ngram_share("") == 0.0
