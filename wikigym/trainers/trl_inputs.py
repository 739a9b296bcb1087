"""Everything TRL's ``GRPOTrainer`` takes for a wikigym env, in one call: :func:`trl_kwargs`.

``GRPOTrainer(model=..., args=GRPOConfig(...), **trl_kwargs("WikiSearch-v0"))`` trains on the
env's tools with no other wiring. The dict holds:

- ``train_dataset``: one row per task (``prompt``, ``task_id``, ``seed``), see
  :func:`~wikigym.trainers.adapter.dataset_rows`;
- ``environment_factory``: an :class:`~wikigym.trainers.adapter.EnvironmentFactory`;
- ``reward_funcs``: ``[FinishEpisodes]``, the hook that gives a plain-text final turn
  (``<answer>X</answer>``) to the env before TRL reads the env's ``get_reward`` (TRL adds the
  env's reward itself);
- ``callbacks``: ``[TrainerStopTokens]``, which tells the hook, once the trainer is built, the
  stop ids and ``mask_truncated_completions`` of that trainer (so a length-cut completion is
  masked exactly when TRL masks its tokens).

All of it pickles (pickle and cloudpickle): TRL's ``AsyncGRPOTrainer`` sends the factory and the
reward functions to a spawned process. This module imports ``transformers`` (the callback's
base class): import it only where the ``train`` extra is installed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from transformers import TrainerCallback

from wikigym.envs.registration import WIKI_SEARCH
from wikigym.tasks.taskset import TaskSet
from wikigym.trainers.adapter import EnvironmentFactory, EnvSpec, FinishEpisodes, build_dataset
from wikigym.trainers.episodes import EpisodeSink


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
        env_id: A registered env id (``WikiSearch-v0``, ``Calc-v0``, ...).
        corpus: Snapshot directory (WikiSearch); None: the default world.
        tasks: TaskSet file or TaskSet (WikiSearch); None: the default TaskSet.
        **env_kwargs: Other env keyword arguments (``max_steps``, ``reward``, ``python``,
            ``tools``, ``level``, ...), as for ``gymnasium.make``.

    Returns:
        ``train_dataset``, ``environment_factory``, ``reward_funcs`` and ``callbacks``; every
        value pickles.
    """
    return trl_inputs(EnvSpec(env_id=env_id, corpus=corpus, tasks=tasks, kwargs=dict(env_kwargs)))
