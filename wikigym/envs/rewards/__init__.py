"""Episode rewards: named components over the episode outcome, and one documented total.

At the end of an episode the env builds an :class:`EpisodeOutcome`; a :class:`RewardConfig`
lists the components to run with their weights (``weights``, in order) and holds their
settings; :func:`compute_reward` returns a :class:`RewardBreakdown` whose ``components`` go to
``info["reward_components"]`` and ``metrics`` to ``info["reward_metrics"]``.

A component is a plain function over a :class:`RewardInput` (the outcome, the components'
settings and the facts they share, computed once), registered by name with :func:`reward_component`; it
returns a float and may log metrics, like a TRL reward function. Adding one is that function,
its registration and its test; a config then lists it by name (an unregistered name raises
:class:`~wikigym.errors.UnknownRewardComponentError`, which names the known ones)::

    @reward_component("brevity")  # kind="score" (in [0, 1], None if absent) or "penalty"
    def brevity(inp: RewardInput, log_metric: LogMetric) -> float | None:
        words = len((inp.outcome.answer or "").split())
        log_metric("answer_words", float(words))
        return 1.0 if words <= 3 else 0.0

    config = RewardConfig.binary().with_weights(brevity=0.2)

Components (each unweighted, as reported in ``components``):

``outcome`` (score) in [0, 1]
    The answer against the gold answer and its aliases (:func:`~wikigym.envs.metrics.best_match`,
    HotpotQA normalisation). ``binary``: 1.0 on exact match; ``f1``: the best token F1;
    ``threshold``: 1.0 when the best F1 is ``>= f1_threshold``. A missing answer scores 0.
    Gamma-decay (``per_step=False``): the score is multiplied by
    ``gamma ** (steps_used - 1)``, so an answer given on the first step keeps the full score and
    each further step costs a factor ``gamma``. With ``per_step=True`` the outcome is not decayed;
    the decay goes into ``step_rewards`` instead (see :func:`per_step_rewards`).
``citation`` (score) in [0, 1], absent when the task has no rubric entry connected to the answer
    CaRR-style rubric support without a judge model. Valid citations are the cited ids that
    tools returned to the agent during the episode (cited and seen). A rubric entry
    (:class:`~wikigym.tasks.taskset.RubricEntry`, the task's own type) is supported when one of its
    ``passage_ids`` (cited as ``p<id>``) is a valid citation or, as a fallback, when every one
    of its ``entities`` occurs (normalised, on word boundaries) in the text of one valid
    citation. Only entries with ``connected_to_answer=True`` count; the component is
    ``supported / counted``. With ``citation_gate=True`` it is multiplied by the undecayed
    outcome score, so well-cited wrong answers earn nothing (it logs ``rubric_support``, the
    ungated share).
``format`` (score) in {0, 1}
    1.0 when the episode ended with a non-blank answer and no action failed to parse.
``penalty`` (penalty) in [-penalty_cap, 0]
    Minus the sum of per-event penalties: ``penalty_unknown_tool`` per call of an unknown tool,
    ``penalty_invalid_arguments`` per call with invalid arguments, ``penalty_bad_citation`` per
    distinct cited id that does not exist or was never shown to the agent. The sum is capped at
    ``penalty_cap`` so that the total stays in a fixed range however long the episode.

Total:
    ``total = sum over present components c of w'_c * value_c`` (``math.fsum``, so the result
    does not depend on order). A *score* may be absent (the component returned None:
    ``citation`` without a rubric). When every listed score is present, ``w'`` is the
    configured weight. When one is absent, each present score's weight becomes
    ``W * (w_c / P)``, with ``W`` the sum of all listed score weights and ``P`` that of the
    present ones (0 when ``P`` is 0), so every task has the same range
    ``[RewardConfig.min_total, RewardConfig.max_total]``: ``max_total = W`` and
    ``min_total = -penalty_cap * (sum of the penalty weights)`` (0 when no penalty rate is
    set). Penalties keep their weight. The weights actually used are in
    ``RewardBreakdown.weights``.

Truncated episodes (step budget spent without an answer):
    ``mask=True`` and ``total=0.0`` whatever the components say (they are still computed, for
    logging). Trainers should drop masked episodes from the loss (conservative negative
    filtering): punishing a long but reasonable trajectory for being cut off teaches the model
    to stop using tools.

Metrics: ``em``, ``f1``, ``decay``, the hallucination counts (``unknown_tool``,
``invalid_arguments``, ``citation_nonexistent``, ``citation_unseen``), ``parse_error``,
``citations``, ``citations_valid``, ``rubric_items``, ``rubric_supported`` for every episode,
then what the components log.

Presets list ``outcome``, ``citation``, ``format`` and ``penalty`` (weights 1, 0, 0, 1 unless
said). The default, :meth:`RewardConfig.binary`, scores the binary outcome alone, the setting
practice found most stable; :meth:`RewardConfig.f1` the best token F1;
:meth:`RewardConfig.shaped` adds gated citations (0.5) and hallucination penalties.
"""

from __future__ import annotations

from wikigym.envs.rewards import components as _builtins  # registers the built-in components
from wikigym.envs.rewards.config import DEFAULT_WEIGHTS, PRESETS, RewardConfig
from wikigym.envs.rewards.inputs import RewardInput
from wikigym.envs.rewards.outcome import EpisodeOutcome
from wikigym.envs.rewards.registry import (
    LogMetric,
    RewardComponent,
    component,
    component_names,
    reward_component,
)
from wikigym.envs.rewards.settings import OutcomeKind, RewardSettings
from wikigym.envs.rewards.total import RewardBreakdown, compute_reward, per_step_rewards

__all__ = [
    "DEFAULT_WEIGHTS",
    "PRESETS",
    "EpisodeOutcome",
    "LogMetric",
    "OutcomeKind",
    "RewardBreakdown",
    "RewardComponent",
    "RewardConfig",
    "RewardInput",
    "RewardSettings",
    "component",
    "component_names",
    "compute_reward",
    "per_step_rewards",
    "reward_component",
]

del _builtins
