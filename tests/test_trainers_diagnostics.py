"""Diagnostics: alarm logic on synthetic metric sequences, episode metrics."""

from __future__ import annotations

import io

import pytest

pytest.importorskip("transformers")

from wikigym.trainers.diagnostics import (
    DiagnosticsCallback,
    HealthMonitor,
    HealthThresholds,
    episode_metrics,
    varying_group_share,
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
    assert m["diag/valid_tool_calls_per_episode"] == 1.5
    assert m["diag/tool_errors/not_found"] == 0.5
    assert m["diag/masked_share"] == 0.5 and m["diag/masked_env_share"] == 0.5
    assert m["diag/parse_failure_rate"] == 0.5
    assert episode_metrics([]) == {}


def test_repeat_ngram_share() -> None:
    assert repeat_ngram_share("the answer is Paris because p12 says so") == 0.0
    looping = " ".join(["search the page again"] * 20)
    assert repeat_ngram_share(looping) > 0.8
    assert repeat_ngram_share("") == 0.0


def test_all_groups_flat_over_the_window_raises_no_learning_signal() -> None:
    # Valid tool calls, but every group's rewards are equal: zero advantages for 4 steps.
    rows = [
        {"frac_reward_zero_std": 1.0, "diag/valid_tool_calls_per_episode": 2.0} for _ in range(6)
    ]
    m = HealthMonitor(HealthThresholds(signal_window=4))
    assert feed(m, rows) == ["no_learning_signal"]  # raised once, at the 4th step
    alarm = m.alarms[0]
    assert alarm.step == 4 and alarm.value == 4.0
    assert "zero advantages" in alarm.message and "cold start" in alarm.message
    assert "no valid tool call" not in alarm.message


def test_no_valid_tool_call_over_the_window_raises_no_learning_signal() -> None:
    rows = [
        {
            "frac_reward_zero_std": 0.5,
            "diag/valid_tool_calls_per_episode": 0.0,
            "diag/answered_share": 0.0,
        }
        for _ in range(4)
    ]
    m = HealthMonitor(HealthThresholds(signal_window=4))
    assert feed(m, rows) == ["no_learning_signal"]
    assert "no valid tool call for 4 logged steps" in m.alarms[0].message
    assert "prompt format" in m.alarms[0].message


def test_learning_signal_breaks_the_run_and_rearms() -> None:
    flat = {"frac_reward_zero_std": 1.0, "diag/valid_tool_calls_per_episode": 1.0}
    varied = {"frac_reward_zero_std": 0.75, "diag/valid_tool_calls_per_episode": 1.0}
    # Three flat steps, one varied one, three flat: never 4 in a row.
    assert (
        feed(HealthMonitor(HealthThresholds(signal_window=4)), [flat] * 3 + [varied] + [flat] * 3)
        == []
    )
    # Raised, cleared by a varied step, raised again after 4 more flat steps.
    m = HealthMonitor(HealthThresholds(signal_window=4))
    assert feed(m, [flat] * 4 + [varied] + [flat] * 4) == ["no_learning_signal"] * 2
    assert [a.step for a in m.alarms] == [4, 9]


def test_answers_in_text_form_count_as_valid_calls() -> None:
    # Calc-v0 style: no tool method called, but every episode answers (<answer>N</answer>).
    rows = [
        {
            "frac_reward_zero_std": 0.5,
            "diag/valid_tool_calls_per_episode": 0.0,
            "diag/answered_share": 1.0,
        }
        for _ in range(10)
    ]
    assert feed(HealthMonitor(HealthThresholds(signal_window=4)), rows) == []


def test_steps_without_the_metrics_do_not_break_or_extend_the_run() -> None:
    flat = {"frac_reward_zero_std": 1.0}
    rows = [flat, {}, flat, {"reward": 0.0}, flat, flat]
    names = feed(HealthMonitor(HealthThresholds(signal_window=4)), rows)
    assert names == ["no_learning_signal"]


def test_summary_reports_the_learning_signal(tmp_path) -> None:
    from types import SimpleNamespace

    cb = DiagnosticsCallback(None, output_dir=tmp_path, stream=io.StringIO())
    for step, (flat, norm) in enumerate([(1.0, 0.0), (0.5, 0.25), (0.0, 0.75)], 1):
        state = SimpleNamespace(is_world_process_zero=True, global_step=step, log_history=[])
        logs = {"loss": 0.0, "reward": 0.5, "frac_reward_zero_std": flat, "grad_norm": norm}
        cb.on_log(None, state, None, logs=logs)
    s = cb.summary()
    assert s["varying_group_share"] == 0.5  # 1 - mean(1.0, 0.5, 0.0)
    assert s["steps_with_varying_groups"] == 2
    assert s["grad_norm_mean"] == pytest.approx(1 / 3) and s["grad_norm_max"] == 0.75
    assert s["nonzero_grad_steps"] == 2


def _ep(task_id: str, reward: float | None) -> EpisodeRecord:
    return EpisodeRecord(task_id=task_id, reward=reward, masked=reward is None)


def test_varying_groups_come_from_the_episodes_and_masked_ones_do_not_vary() -> None:
    """A group varies only if two of its scored rewards differ; a masked episode (TRL: NaN
    reward, counted as varying by frac_reward_zero_std) makes no group vary."""
    records = [
        *(_ep("a", r) for r in (0.0, 1.0, 0.0, 0.0)),  # varies
        *(_ep("b", r) for r in (0.0, 0.0, 0.0, 0.0)),  # flat
        *(_ep("c", r) for r in (1.0, None, None, None)),  # one scored reward: flat
        *(_ep("d", r) for r in (None, None, None, None)),  # all masked: flat
    ]
    assert varying_group_share(records) == 0.25
    assert episode_metrics(records)["diag/varying_group_share"] == 0.25
    assert varying_group_share([]) == 0.0


def test_masked_groups_that_trl_counts_as_varying_still_raise_no_learning_signal(
    tmp_path,
) -> None:
    """Every group flat or masked in the episodes: the alarm fires and the summary says no
    group varied, although TRL's frac_reward_zero_std (NaN groups) says half did."""
    from types import SimpleNamespace

    sink = EpisodeSink()
    stream = io.StringIO()
    cb = DiagnosticsCallback(sink, output_dir=tmp_path, stream=stream)
    for step in range(1, 6):
        for r in (0.0, 0.0, None, None):
            sink.add(
                EpisodeRecord(
                    task_id=f"t{step}", reward=r, masked=r is None, tool_calls=1, valid_tool_calls=1
                )
            )
        state = SimpleNamespace(is_world_process_zero=True, global_step=step, log_history=[])
        logs = {"loss": 0.0, "reward": 0.0, "frac_reward_zero_std": 0.5, "grad_norm": 0.0}
        cb.on_log(None, state, None, logs=logs)
    s = cb.summary()
    assert s["varying_group_share"] == 0.0 and s["steps_with_varying_groups"] == 0
    assert [a["name"] for a in s["alarms"]] == ["no_learning_signal"]
    assert "no_learning_signal" in stream.getvalue()


def test_a_step_whose_completions_are_all_cut_raises_an_alarm_with_the_remedy() -> None:
    """Every completion at the length limit (TRL masks them all): zero gradient. The alarm
    names the case and the remedy, once, and re-arms after a step that reaches the loss."""
    cut = {"reward": 0.0, "completions/mean_length": 768.0, "completions/clipped_ratio": 1.0}
    fine = {**cut, "completions/clipped_ratio": 0.25}
    m = HealthMonitor()
    assert feed(m, [fine, cut, cut, fine, cut]) == ["all_completions_cut"] * 2
    first = m.alarms[0]
    assert first.step == 2 and "length limit" in first.message
    assert "max_completion_length" in first.message and "max_turn_tokens" in first.message


def test_a_step_with_every_episode_masked_or_unscored_raises_the_alarm() -> None:
    env_masked = {"diag/episodes": 4.0, "diag/masked_share": 1.0, "diag/masked_env_share": 1.0}
    m = HealthMonitor()
    assert feed(m, [env_masked]) == ["all_completions_cut"]
    assert "step budget" in m.alarms[0].message
    unscored = {"reward": float("nan"), "completions/mean_length": 40.0}
    assert feed(HealthMonitor(), [unscored]) == ["all_completions_cut"]
    some_scored = {"diag/episodes": 4.0, "diag/masked_share": 0.75, "reward": 0.0}
    assert feed(HealthMonitor(), [some_scored] * 5) == []


def test_the_callback_prints_and_records_the_cut_alarm(tmp_path) -> None:
    from types import SimpleNamespace

    stream = io.StringIO()
    sink = EpisodeSink()
    cb = DiagnosticsCallback(sink, output_dir=tmp_path, stream=stream)
    for _ in range(4):
        sink.add(
            EpisodeRecord(task_id="t", reward=None, masked=True, mask_reason="length_truncated")
        )
    state = SimpleNamespace(is_world_process_zero=True, global_step=1, log_history=[])
    logs = {"loss": 0.0, "reward": float("nan"), "completions/clipped_ratio": 1.0}
    cb.on_log(None, state, None, logs=logs)
    assert "ALARM step 1: all_completions_cut" in stream.getvalue()
    assert [a["name"] for a in cb.summary()["alarms"]] == ["all_completions_cut"]
