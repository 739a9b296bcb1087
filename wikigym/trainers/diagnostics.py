"""Training-health diagnostics: per-step episode metrics, alarms, and an end-of-run summary.

:class:`DiagnosticsCallback` (a ``transformers.TrainerCallback``, on by default in
``wikigym train``) drains the adapter's :class:`~wikigym.trainers.episodes.EpisodeSink` at every
logging step and adds to TRL's log line (so the console, TensorBoard and
``OUTPUT_DIR/metrics.jsonl`` all get them):

- ``diag/reward/<component>``: mean of each env reward component;
- ``diag/tool_calls_per_episode``, ``diag/tool_call_validity``: calls through the tool methods
  and the share that ran without an error code; ``diag/valid_tool_calls_per_episode``; ``diag/tool_errors/<code>``: per episode;
- ``diag/masked_share`` (env budget and length-cut episodes), ``diag/answered_share``;
- ``diag/repeat_ngram_share``, ``diag/parse_failure_rate``; TRL's
  ``completions/mean_length`` / ``max_length`` are read for the length alarms;
- ``diag/varying_group_share``: the share of groups whose scored rewards differ;
- ``diag/alarms``: the number of alarms raised this step.

:class:`HealthMonitor` holds the alarm logic (pure, unit-tested on synthetic sequences):

- format collapse: completion length growing (second half of the window over the first
  >= ``length_growth``) while the reward does not (gain < ``reward_gain``); the repeated 4-gram
  share rising; parse failures rising;
- no learning signal: over the last ``signal_window`` logged steps, every group's rewards were
  equal (``diag/varying_group_share`` at 0, from the episodes; TRL's ``frac_reward_zero_std``
  at 1 without an episode sink: all advantages zero, the policy gradient is
  nothing but the KL term), or no episode made a valid tool call (an answer in the
  ``<answer>`` form counts as a call of the answer tool);
- every completion cut or masked: in one logged step, TRL's ``completions/clipped_ratio`` is 1
  (every completion hit ``max_completion_length``), or every episode was masked, or no reward
  was scored (all None/NaN): nothing reaches the loss, so the step's gradient is zero;
- train/inference mismatch (vLLM generation): TRL's
  ``sampling/sampling_logp_difference/mean`` above ``logp_diff_warn`` or the importance-sampling
  ratio leaving [``is_ratio_low``, ``is_ratio_high``].

Each alarm is raised once when its condition starts (re-armed when it clears), printed with what
to check, and listed in ``OUTPUT_DIR/diagnostics_summary.json`` at the end.
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter, deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from wikigym.trainers.episodes import EpisodeRecord, EpisodeSink


@dataclass(frozen=True)
class Alarm:
    """One raised alarm: what happened and what to check."""

    name: str
    step: int
    value: float
    message: str


@dataclass(frozen=True)
class HealthThresholds:
    """When the alarms fire (see the module docstring)."""

    window: int = field(default=20, metadata={"help": "Logged steps the trends are read over."})
    min_points: int = field(default=8, metadata={"help": "Points needed before trends count."})
    length_growth: float = field(
        default=0.3, metadata={"help": "Relative growth of mean length (second half / first)."}
    )
    reward_gain: float = field(
        default=0.02, metadata={"help": "Reward gain below which growth is 'not rewarded'."}
    )
    repeat_rise: float = field(default=0.1, metadata={"help": "Rise of repeated 4-gram share."})
    repeat_level: float = field(default=0.2, metadata={"help": "Level the share must reach."})
    parse_rise: float = field(default=0.1, metadata={"help": "Rise of the parse failure rate."})
    logp_diff_warn: float = field(
        default=0.05, metadata={"help": "Mean |logp_vllm - logp_trainer| per token that warns."}
    )
    is_ratio_low: float = field(default=0.5, metadata={"help": "Lowest acceptable IS ratio."})
    is_ratio_high: float = field(default=2.0, metadata={"help": "Highest acceptable IS ratio."})
    signal_window: int = field(
        default=4, metadata={"help": "Logged steps in a row with no learning signal that warn."}
    )


_CHECKS: dict[str, str] = {
    "length_without_reward": (
        "completion length grows while the reward does not: possible format collapse. Check "
        "sampled completions for loops or garbage, the reward (is it gameable?), and that "
        "truncated episodes are masked; lower the learning rate or raise beta if it goes on."
    ),
    "repetition_rising": (
        "the share of repeated 4-grams in completions is rising: the policy is looping. Read "
        "sampled completions; check the KL (beta, reference refresh) and the learning rate."
    ),
    "parse_failures_rising": (
        "tool-call parse failures are rising: the call format is degrading. Check the chat "
        "template and response parser match the model, compare with the SFT cold start, and "
        "check that malformed episodes are not rewarded."
    ),
    "no_learning_signal": (
        "GRPO has nothing to learn from: a group whose rewards are all equal has zero "
        "advantages. Check the cold start (a model that never calls the tools in the env's "
        "format, or never solves a task, needs SFT on oracle trajectories first: `wikigym export "
        "sft`, `wikigym train sft`), the reward (binary outcome: are the tasks solvable at this "
        "level and step budget? is everything masked?), and the prompt format (the chat "
        "template renders the tools; sampled completions hold <tool_call> JSON the env parses)."
    ),
    "all_completions_cut": (
        "nothing in this step reached the loss, so its gradient is zero. If completions hit the "
        "length limit, raise max_completion_length (--overrides "
        "'{\"max_completion_length\": N}') or cap each turn with max_turn_tokens (--overrides "
        "'{\"max_turn_tokens\": N}'), so that turns end and reach the env; check that the chat "
        "template's end-of-turn token stops generation. If the env masked every episode (step "
        "budget spent without an answer), raise --max-env-steps or start from an SFT cold start."
    ),
    "logprob_mismatch": (
        "vLLM and trainer log-probs differ: train/inference mismatch. Check dtype (bf16 both "
        "sides), the vLLM version and kernels, MoE routing determinism, and that weights are "
        "synced every step; keep vllm_importance_sampling_correction on."
    ),
}


def _halves(values: list[float]) -> tuple[float, float]:
    mid = len(values) // 2
    first, second = values[:mid], values[mid:]
    return sum(first) / len(first), sum(second) / len(second)


class HealthMonitor:
    """Trend alarms over a sliding window of logged metrics.

    Feed one dict per logged step to :meth:`update`; keys read: ``reward``,
    ``completions/mean_length``, ``diag/repeat_ngram_share``, ``diag/parse_failure_rate``,
    ``diag/varying_group_share`` (else ``frac_reward_zero_std``),
    ``diag/valid_tool_calls_per_episode``,
    ``diag/answered_share``, ``sampling/sampling_logp_difference/mean``, ``sampling/importance_sampling_ratio/min``
    and ``/max``. Missing or non-finite values are skipped.
    """

    def __init__(self, thresholds: HealthThresholds | None = None) -> None:
        self.t = thresholds or HealthThresholds()
        self._series: dict[str, deque[float]] = {}
        self._active: set[str] = set()
        self.alarms: list[Alarm] = []
        # The no-signal conditions count consecutive steps (not a trend over a window).
        self._flat_groups = 0
        self._no_valid_call = 0

    def _push(self, key: str, metrics: Mapping[str, Any]) -> None:
        value = metrics.get(key)
        if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
            self._series.setdefault(key, deque(maxlen=self.t.window)).append(float(value))

    def _trend(self, key: str) -> tuple[float, float] | None:
        values = list(self._series.get(key, ()))
        if len(values) < self.t.min_points:
            return None
        return _halves(values)

    def update(self, step: int, metrics: Mapping[str, Any]) -> list[Alarm]:
        """Add one step's metrics; returns the alarms that start at this step."""
        for key in (
            "reward",
            "completions/mean_length",
            "diag/repeat_ngram_share",
            "diag/parse_failure_rate",
        ):
            self._push(key, metrics)
        conditions: dict[str, float | None] = {
            "length_without_reward": self._length_without_reward(),
            "repetition_rising": self._rising(
                "diag/repeat_ngram_share", self.t.repeat_rise, self.t.repeat_level
            ),
            "parse_failures_rising": self._rising(
                "diag/parse_failure_rate", self.t.parse_rise, 0.0
            ),
            "no_learning_signal": self._no_signal(metrics),
            "all_completions_cut": self._all_cut(metrics),
            "logprob_mismatch": self._mismatch(metrics),
        }
        new: list[Alarm] = []
        for name, value in conditions.items():
            if value is None:
                self._active.discard(name)
                continue
            if name in self._active:
                continue
            self._active.add(name)
            message = _CHECKS[name]
            if name == "no_learning_signal":
                message = f"{self._no_signal_cause()}. {message}"
            elif name == "all_completions_cut":
                message = f"{_cut_cause(metrics)}: {message}"
            alarm = Alarm(name=name, step=step, value=round(value, 6), message=message)
            new.append(alarm)
            self.alarms.append(alarm)
        return new

    def _length_without_reward(self) -> float | None:
        lengths = self._trend("completions/mean_length")
        rewards = self._trend("reward")
        if lengths is None or rewards is None or lengths[0] <= 0:
            return None
        growth = lengths[1] / lengths[0] - 1.0
        if growth >= self.t.length_growth and rewards[1] - rewards[0] < self.t.reward_gain:
            return growth
        return None

    def _rising(self, key: str, rise: float, level: float) -> float | None:
        trend = self._trend(key)
        if trend is None:
            return None
        delta = trend[1] - trend[0]
        latest = self._series[key][-1]
        return delta if delta >= rise and latest >= level else None

    def _no_signal(self, metrics: Mapping[str, Any]) -> float | None:
        """Count the steps in a row with flat groups / no valid call; the value is the longer
        run once one reaches the window. A step that does not report a metric leaves its
        count as it is (not every logging step carries every key)."""
        varying = _finite(metrics.get("diag/varying_group_share"))
        if varying is None:  # no episode sink: TRL's count (NaN groups count as varying)
            zero_std = _finite(metrics.get("frac_reward_zero_std"))
            varying = None if zero_std is None else 1.0 - zero_std
        if varying is not None:
            self._flat_groups = self._flat_groups + 1 if varying <= 0.0 else 0
        valid = _finite(metrics.get("diag/valid_tool_calls_per_episode"))
        if valid is not None:
            answered = _finite(metrics.get("diag/answered_share")) or 0.0
            self._no_valid_call = self._no_valid_call + 1 if valid == 0 and answered == 0 else 0
        run = max(self._flat_groups, self._no_valid_call)
        return float(run) if run >= self.t.signal_window else None

    def _no_signal_cause(self) -> str:
        causes = []
        if self._no_valid_call >= self.t.signal_window:
            causes.append(f"no valid tool call for {self._no_valid_call} logged steps")
        if self._flat_groups >= self.t.signal_window:
            causes.append(
                f"every group's rewards were equal (zero advantages) for {self._flat_groups} "
                "logged steps"
            )
        return "; ".join(causes)

    def _all_cut(self, metrics: Mapping[str, Any]) -> float | None:
        """1.0 when nothing of this step can reach the loss (see :func:`_cut_cause`): every
        completion clipped, every episode masked, or a generation step with no finite reward."""
        clipped = _finite(metrics.get("completions/clipped_ratio"))
        masked = _finite(metrics.get("diag/masked_share"))
        generated = bool(_finite(metrics.get("diag/episodes"))) or (
            _finite(metrics.get("completions/mean_length")) is not None
        )
        unscored = generated and "reward" in metrics and _finite(metrics["reward"]) is None
        if (clipped is not None and clipped >= 1.0) or (masked is not None and masked >= 1.0):
            return 1.0
        return 1.0 if unscored else None

    def _mismatch(self, metrics: Mapping[str, Any]) -> float | None:
        diff = metrics.get("sampling/sampling_logp_difference/mean")
        low = metrics.get("sampling/importance_sampling_ratio/min")
        high = metrics.get("sampling/importance_sampling_ratio/max")
        if isinstance(diff, int | float) and math.isfinite(diff) and diff > self.t.logp_diff_warn:
            return float(diff)
        if isinstance(low, int | float) and math.isfinite(low) and 0 < low < self.t.is_ratio_low:
            return float(low)
        if isinstance(high, int | float) and math.isfinite(high) and high > self.t.is_ratio_high:
            return float(high)
        return None


def _cut_cause(metrics: Mapping[str, Any]) -> str:
    """What cut a step off from the loss, in words (see ``HealthMonitor._all_cut``)."""
    clipped = _finite(metrics.get("completions/clipped_ratio"))
    if clipped is not None and clipped >= 1.0:
        return (
            "every completion hit the length limit (completions/clipped_ratio 1.0; TRL masks "
            "truncated completions)"
        )
    env = _finite(metrics.get("diag/masked_env_share"))
    if env is not None and env >= 1.0:
        return "every episode was masked: the env's step budget was spent without an answer"
    masked = _finite(metrics.get("diag/masked_share"))
    if masked is not None and masked >= 1.0:
        return "every episode was masked (cut at the completion budget or the env's step budget)"
    return "no completion of this step got a reward (all None or NaN: every episode masked)"


def _finite(value: Any) -> float | None:
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


def episode_metrics(records: Iterable[EpisodeRecord]) -> dict[str, float]:
    """The ``diag/...`` metrics of a batch of episodes (empty dict for no episodes)."""
    records = list(records)
    if not records:
        return {}
    n = len(records)
    out: dict[str, float] = {"diag/episodes": float(n)}
    scored = [r for r in records if not r.masked]
    components: dict[str, list[float]] = {}
    for r in scored:
        for name, value in r.components.items():
            components.setdefault(name, []).append(value)
    for name in sorted(components):
        out[f"diag/reward/{name}"] = sum(components[name]) / len(components[name])
    if scored:
        out["diag/reward/total"] = sum(r.reward or 0.0 for r in scored) / len(scored)
    calls = sum(r.tool_calls for r in records)
    out["diag/tool_calls_per_episode"] = calls / n
    out["diag/valid_tool_calls_per_episode"] = sum(r.valid_tool_calls for r in records) / n
    out["diag/tool_call_validity"] = (
        sum(r.valid_tool_calls for r in records) / calls if calls else 0.0
    )
    errors: Counter[str] = Counter()
    for r in records:
        errors.update(r.tool_errors)
    for code in sorted(errors):
        out[f"diag/tool_errors/{code}"] = errors[code] / n
    out["diag/masked_share"] = sum(r.masked for r in records) / n
    out["diag/masked_env_share"] = sum(r.mask_reason == "env_truncated" for r in records) / n
    out["diag/answered_share"] = sum(r.answered for r in records) / n
    out["diag/repeat_ngram_share"] = sum(r.repeat_ngram_share for r in records) / n
    out["diag/parse_failure_rate"] = sum(r.parse_failures > 0 for r in records) / n
    out["diag/completion_chars/mean"] = sum(r.completion_chars for r in records) / n
    out["diag/completion_chars/max"] = float(max(r.completion_chars for r in records))
    out["diag/varying_group_share"] = varying_group_share(records)
    return out


def varying_group_share(records: Iterable[EpisodeRecord]) -> float:
    """The share of groups (episodes of one task) whose scored rewards differ: the groups
    that give GRPO a nonzero advantage. Masked episodes carry no reward, so a group with
    fewer than two scored episodes is flat (TRL's ``frac_reward_zero_std`` counts a group
    with a NaN reward as varying). 0.0 for no episodes."""
    groups: dict[str, list[float]] = {}
    for r in records:
        rewards = groups.setdefault(r.task_id, [])
        if not r.masked and r.reward is not None:
            rewards.append(float(r.reward))
    if not groups:
        return 0.0
    varying = sum(len(v) >= 2 and max(v) > min(v) for v in groups.values())
    return varying / len(groups)


class DiagnosticsCallback(TrainerCallback):
    """Adds the diagnostics to every log line, writes ``metrics.jsonl``, raises alarms.

    Args:
        sink: The adapter's episode sink (None: only TRL's own metrics and the mismatch alarm).
        output_dir: Where ``metrics.jsonl`` and ``diagnostics_summary.json`` go (None: no
            files).
        thresholds: Alarm thresholds.
        stream: Where alarms and the summary are printed.
    """

    def __init__(
        self,
        sink: EpisodeSink | None,
        output_dir: str | Path | None = None,
        thresholds: HealthThresholds | None = None,
        stream: Any = None,
    ) -> None:
        self.sink = sink
        self.output_dir = None if output_dir is None else Path(output_dir)
        self.monitor = HealthMonitor(thresholds)
        self.stream = stream or sys.stderr
        self.history: list[dict[str, Any]] = []
        self._totals: Counter[str] = Counter()
        self._episodes = 0
        self._masked = 0

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if logs is None or not state.is_world_process_zero:
            return
        records = self.sink.drain() if self.sink is not None else []
        diag = episode_metrics(records)
        self._episodes += len(records)
        self._masked += sum(r.masked for r in records)
        for r in records:
            self._totals.update({f"tool_errors/{k}": v for k, v in r.tool_errors.items()})
            self._totals["tool_calls"] += r.tool_calls
            self._totals["valid_tool_calls"] += r.valid_tool_calls
        step = int(state.global_step)
        alarms = self.monitor.update(step, {**logs, **diag})
        diag["diag/alarms"] = float(len(alarms))
        logs.update(diag)
        if state.log_history and state.log_history[-1].get("step") == step:
            state.log_history[-1].update(diag)
        for alarm in alarms:
            print(
                f"[wikigym] ALARM step {step}: {alarm.name} ({alarm.value}): {alarm.message}",
                file=self.stream,
            )
        row = {"step": step, **{k: _jsonable(v) for k, v in sorted(logs.items())}}
        self.history.append(row)
        if self.output_dir is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            with (self.output_dir / "metrics.jsonl").open("a", encoding="utf-8") as f:
                f.write(json.dumps(row, sort_keys=True) + "\n")

    def summary(self) -> dict[str, Any]:
        """End-of-run numbers: episodes, masked share, tool validity, errors, alarms, first and
        last reward, and the learning signal: the share of groups whose rewards varied (nonzero
        advantages; from the episodes, :func:`varying_group_share`) and the gradient norms."""
        rewards = [h["reward"] for h in self.history if isinstance(h.get("reward"), float)]
        calls = self._totals.get("tool_calls", 0)
        shares = [
            v for h in self.history if (v := _finite(h.get("diag/varying_group_share"))) is not None
        ]
        if not shares:  # no episode sink: TRL's count
            shares = [
                1.0 - v
                for h in self.history
                if (v := _finite(h.get("frac_reward_zero_std"))) is not None
            ]
        norms = [v for h in self.history if (v := _finite(h.get("grad_norm"))) is not None]
        return {
            "varying_group_share": sum(shares) / len(shares) if shares else None,
            "steps_with_varying_groups": sum(v > 0.0 for v in shares),
            "grad_norm_mean": sum(norms) / len(norms) if norms else None,
            "grad_norm_max": max(norms) if norms else None,
            "nonzero_grad_steps": sum(v > 0 for v in norms),
            "episodes": self._episodes,
            "masked_share": self._masked / self._episodes if self._episodes else 0.0,
            "tool_calls": calls,
            "tool_call_validity": self._totals.get("valid_tool_calls", 0) / calls if calls else 0.0,
            "tool_errors": {
                k.split("/", 1)[1]: v
                for k, v in sorted(self._totals.items())
                if k.startswith("tool_errors/")
            },
            "reward_first": rewards[0] if rewards else None,
            "reward_last": rewards[-1] if rewards else None,
            "alarms": [asdict(a) for a in self.monitor.alarms],
        }

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if not state.is_world_process_zero:
            return
        summary = self.summary()
        if self.output_dir is not None:
            self.output_dir.mkdir(parents=True, exist_ok=True)
            (self.output_dir / "diagnostics_summary.json").write_text(
                json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8"
            )
        print(
            f"[wikigym] diagnostics: {summary['episodes']} episodes, masked "
            f"{summary['masked_share']:.1%}, tool calls {summary['tool_calls']} "
            f"(valid {summary['tool_call_validity']:.1%}), reward "
            f"{summary['reward_first']} -> {summary['reward_last']}, groups with varying "
            f"rewards {_share(summary['varying_group_share'])}, grad norm mean "
            f"{_num(summary['grad_norm_mean'])}, {len(summary['alarms'])} alarm(s)",
            file=self.stream,
        )
        for alarm in summary["alarms"]:
            print(
                f"[wikigym]   step {alarm['step']}: {alarm['name']}: {alarm['message']}",
                file=self.stream,
            )


def _share(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def _num(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.4g}"


def _jsonable(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, int | float | str | bool) or value is None:
        return value
    return str(value)
