"""The built-in reward components (formulas in the package docstring).

Adding one: a function ``fn(inp: RewardInput, log_metric: LogMetric) -> float | None`` here
(or in any module imported before configs name it), decorated with
``@reward_component("name")``, and its test. List it in a config's ``weights`` to use it.
"""

from __future__ import annotations

import math

from wikigym.envs.rewards.inputs import INVALID_ARGUMENTS, PARSE_ERROR, UNKNOWN_TOOL, RewardInput
from wikigym.envs.rewards.registry import LogMetric, reward_component

__all__ = ["abstention", "citation", "format_ok", "outcome", "penalty"]


@reward_component("outcome")
def outcome(inp: RewardInput, log_metric: LogMetric) -> float:
    """The answer's score under the config's outcome kind, times the step decay."""
    return inp.match.score * inp.decay


@reward_component("citation")
def citation(inp: RewardInput, log_metric: LogMetric) -> float | None:
    """Rubric support by valid citations (gated on the outcome score when configured);
    absent when no rubric entry is connected to the answer. Logs ``rubric_support``."""
    support = inp.rubric_support.share
    if support is None:
        return None
    log_metric("rubric_support", support)
    return support * inp.match.score if inp.settings.citation_gate else support


@reward_component("format")
def format_ok(inp: RewardInput, log_metric: LogMetric) -> float:
    """1.0 when the episode ended with a non-blank answer and no action failed to parse."""
    answer = inp.outcome.answer
    answered = answer is not None and bool(answer.strip())
    return 1.0 if answered and inp.outcome.tool_errors.get(PARSE_ERROR, 0) == 0 else 0.0


@reward_component("penalty", kind="penalty")
def penalty(inp: RewardInput, log_metric: LogMetric) -> float:
    """Minus the per-event penalties (unknown tool, invalid arguments, bad citation), capped."""
    cfg, errors, cites = inp.settings, inp.outcome.tool_errors, inp.citations
    raw = math.fsum(
        (
            cfg.penalty_unknown_tool * errors.get(UNKNOWN_TOOL, 0),
            cfg.penalty_invalid_arguments * errors.get(INVALID_ARGUMENTS, 0),
            cfg.penalty_bad_citation * (cites.nonexistent + cites.unseen),
        )
    )
    return 0.0 - min(raw, cfg.penalty_cap)  # never -0.0


@reward_component("abstention")
def abstention(inp: RewardInput, log_metric: LogMetric) -> float | None:
    """Honesty about missing answers: on an unanswerable task 1.0 for abstaining and 0.0 for
    any concrete answer (or none); on an answerable one 0.0 for abstaining, else absent (nothing
    to score). Logs ``abstained``."""
    out = inp.outcome
    abstained = out.answer is not None and out.abstained
    if not (out.unanswerable or abstained):
        return None
    log_metric("abstained", float(abstained))
    return 1.0 if abstained and out.unanswerable else 0.0
