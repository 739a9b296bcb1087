"""Everything TRL's ``GRPOTrainer`` takes for a wikigym env, in one call: :func:`trl_kwargs`.

``GRPOTrainer(model=..., args=GRPOConfig(...), **trl_kwargs("WikiSearch-v1"))`` trains on the
env's tools with no other wiring. The dict holds:

- ``train_dataset``: one row per task (``prompt``, ``task_id``, ``seed``), see
  :func:`~wikigym.trainers.adapter.dataset_rows`;
- ``environment_factory``: an :class:`~wikigym.trainers.adapter.EnvironmentFactory`;
- ``reward_funcs``: ``[FinishEpisodes]``, the hook that gives a plain-text final turn
  (``<answer>X</answer>``) to the env before TRL reads the env's ``get_reward`` (TRL adds the
  env's reward itself); ``get_reward`` is None for a masked episode, which TRL leaves out of
  the loss (its per-batch warning about such rows is silenced for wikigym's masked ones);
- ``callbacks``: ``[TrainerStopTokens]``, which tells the hook, once the trainer is built, the
  stop ids and ``mask_truncated_completions`` of that trainer (so a length-cut completion is
  masked exactly when TRL masks its tokens).

All of it pickles (pickle and cloudpickle): TRL's ``AsyncGRPOTrainer`` sends the factory and the
reward functions to a spawned process. This module imports ``transformers`` (the callback's
base class): import it only where the ``train`` extra is installed.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from wikigym.envs.registration import WIKI_SEARCH
from wikigym.tasks.taskset import TaskSet
from wikigym.trainers.adapter import EnvironmentFactory, EnvSpec, FinishEpisodes, build_dataset
from wikigym.trainers.episodes import EpisodeSink

TRL_LOGGER = "trl.trainer.grpo_trainer"
_ALL_NONE = "All reward functions returned None"


class QuietMaskedRollouts(logging.Filter):
    """Drops TRL's warning for a rollout whose every reward source returned None, when that
    rollout is a wikigym masked episode (reward None on purpose: TRL leaves it out of the
    loss), instead of printing the rollout's whole prompt and completion each batch. The
    masked share is in the diagnostics (``diag/masked_share``).

    Args:
        masked: Whether the batch being scored has masked episodes (the hook's count); the
            warning for any other all-None row (a user's reward function) still prints.
    """

    def __init__(self, masked: Callable[[], bool]) -> None:
        super().__init__()
        self.masked = masked

    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(record.msg).startswith(_ALL_NONE) and self.masked())


def quiet_masked_rollouts(masked: Callable[[], bool]) -> None:
    """Install :class:`QuietMaskedRollouts` on TRL's GRPO logger (replacing an earlier one:
    the latest trainer's hook decides)."""
    log = logging.getLogger(TRL_LOGGER)
    for old in [f for f in log.filters if isinstance(f, QuietMaskedRollouts)]:
        log.removeFilter(old)
    log.addFilter(QuietMaskedRollouts(masked))


class TrainerStopTokens(TrainerCallback):
    """Configures a :class:`FinishEpisodes` from the trainer it is registered with.

    At ``on_init_end`` (and again at ``on_train_begin``) it reads the ids that end a completion
    as TRL counts them (the tokenizer's EOS and pad, every EOS of the model's generation
    config) and the trainer's ``mask_truncated_completions``.

    Args:
        finish: The hook to configure (the one in the same ``reward_funcs``).
    """

    def __init__(self, finish: FinishEpisodes) -> None:
        self.finish = finish

    def on_init_end(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._configure(args, kwargs.get("processing_class"), kwargs.get("model"))
        quiet_masked_rollouts(lambda: self.finish.masked_last_call > 0)

    def on_train_begin(self, args: Any, state: Any, control: Any, **kwargs: Any) -> None:
        self._configure(args, kwargs.get("processing_class"), kwargs.get("model"))

    def _configure(self, args: Any, tokenizer: Any, model: Any) -> None:
        ids: set[int] = set()
        # A processor (multimodal) carries its tokenizer.
        tokenizer = getattr(tokenizer, "tokenizer", tokenizer)
        for name in ("eos_token_id", "pad_token_id"):
            value = getattr(tokenizer, name, None)
            if value is not None:
                ids.add(int(value))
        generation = getattr(model, "generation_config", None)
        eos = getattr(generation, "eos_token_id", None)
        if eos is not None:
            ids.update(int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos]))
        if not ids:
            return  # nothing known: the hook keeps taking no completion for cut
        mask = bool(getattr(args, "mask_truncated_completions", self.finish.mask_length_truncated))
        self.finish.configure(sorted(ids), mask_length_truncated=mask)


def trl_inputs(
    spec: EnvSpec,
    *,
    num_rows: int | None = None,
    seed: int = 0,
    sink: EpisodeSink | None = None,
) -> dict[str, Any]:
    """:func:`trl_kwargs` for an :class:`EnvSpec`, with the dataset size, seeds and sink.

    Args:
        spec: The env.
        num_rows: Dataset rows (all tasks of a TaskSet; 256 episodes for envs without one).
        seed: First row's seed.
        sink: Where finished episodes are recorded (the diagnostics callback reads it).

    Returns:
        ``train_dataset``, ``environment_factory``, ``reward_funcs``, ``callbacks``.
    """
    finish = FinishEpisodes()
    return {
        "train_dataset": build_dataset(spec, num_rows=num_rows, seed=seed),
        "environment_factory": EnvironmentFactory(spec, sink),
        "reward_funcs": [finish],
        "callbacks": [TrainerStopTokens(finish)],
    }


def trl_kwargs(
    env_id: str = WIKI_SEARCH,
    *,
    corpus: str | Path | None = None,
    tasks: str | Path | TaskSet | None = None,
    **env_kwargs: Any,
) -> dict[str, Any]:
    """What ``GRPOTrainer(model=..., args=..., **kw)`` needs to train on a wikigym env.

    Args:
        env_id: A registered env id (``WikiSearch-v1``, ``Calc-v0``, ...).
        corpus: Snapshot directory (WikiSearch); None: the default world.
        tasks: TaskSet file or TaskSet (WikiSearch); None: the default TaskSet.
        **env_kwargs: Other env keyword arguments (``max_steps``, ``reward``, ``python``,
            ``tools``, ``level``, ...), as for ``gymnasium.make``.

    Returns:
        ``train_dataset``, ``environment_factory``, ``reward_funcs`` and ``callbacks``; every
        value pickles.
    """
    return trl_inputs(EnvSpec(env_id=env_id, corpus=corpus, tasks=tasks, kwargs=dict(env_kwargs)))


def trl_multi_kwargs(
    envs: Mapping[str, Mapping[str, Any]],
    *,
    num_rows: int | Mapping[str, int] | None = None,
    seed: int = 0,
    sink: EpisodeSink | None = None,
) -> dict[str, Any]:
    """What ``GRPOTrainer`` needs to train on several wikigym envs at once: TRL's dict
    ``environment_factory`` routes each dataset row to the env its ``environment`` column
    names.

    Args:
        envs: Name -> the env's :func:`trl_kwargs` arguments (``env_id``, ``corpus``,
            ``tasks`` and the env's keyword arguments), e.g.
            ``{"search": {"env_id": "WikiSearch-v1", "max_steps": 12},
            "calc": {"env_id": "Calc-v0"}}``.
        num_rows: Rows per env (one number for all, or per name; default: every task of a
            TaskSet, 256 episodes of an env without one).
        seed: First row's seed, per env.
        sink: Where finished episodes of every env are recorded (the diagnostics).

    Returns:
        ``train_dataset`` (each env's rows in ``envs``' order, with an ``environment``
        column), ``environment_factory`` (name -> factory), ``reward_funcs`` and
        ``callbacks`` (one hook for all envs); every value pickles.
    """
    from datasets import concatenate_datasets

    if not envs:
        raise ValueError("trl_multi_kwargs needs at least one env; got an empty mapping")
    parts, factories = [], {}
    for name, config in envs.items():
        kwargs = dict(config)
        spec = EnvSpec(
            env_id=kwargs.pop("env_id", WIKI_SEARCH),
            corpus=kwargs.pop("corpus", None),
            tasks=kwargs.pop("tasks", None),
            kwargs=kwargs,
        )
        rows = num_rows.get(name) if isinstance(num_rows, Mapping) else num_rows
        dataset = build_dataset(spec, num_rows=rows, seed=seed)
        parts.append(dataset.add_column("environment", [name] * len(dataset)))
        factories[name] = EnvironmentFactory(spec, sink)
    finish = FinishEpisodes()
    return {
        "train_dataset": concatenate_datasets(parts),
        "environment_factory": factories,
        "reward_funcs": [finish],
        "callbacks": [TrainerStopTokens(finish)],
    }
