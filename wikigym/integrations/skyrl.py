"""SkyRL (``skyrl-gym``): wikigym envs as a ``BaseTextEnv`` named ``"wikigym"``.

``import wikigym.integrations.skyrl`` registers the id with ``skyrl_gym``; SkyRL's generator
then builds one env per trajectory as
``skyrl_gym.make("wikigym", env_config=cfg.environment.skyrl_gym.wikigym, extras=row)``.
``env_config`` names ``env_id`` (default ``WikiSearch-v1``), ``corpus``, ``tasks`` and any
argument of that env; ``extras`` (the dataset row's other columns) carry ``task_id``,
``seed`` and the snapshot and TaskSet ids the row was written for. :func:`skyrl_dataset`
writes those rows. SkyRL's trainer (skyrl 0.4) takes the config section and the masking
through :mod:`wikigym.integrations.skyrl_train`.

Install from a wikigym checkout with ``pip install -e '.[skyrl]'`` (or a built wheel:
``pip install 'wikigym-<version>-py3-none-any.whl[skyrl]'``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wikigym.integrations.common import (
    DEFAULT_ENV_ID,
    EpisodeRow,
    IntegrationConfigError,
    check_row,
    dataset_rows,
    make_env,
    plain,
    reset_row,
    write_rows,
)

try:
    import skyrl_gym
    from skyrl_gym.envs.base_text_env import BaseTextEnv, BaseTextEnvStepOutput, ConversationType
except ImportError as exc:  # pragma: no cover - depends on the extra
    raise ImportError(
        f"wikigym.integrations.skyrl needs skyrl-gym ({exc}); from a wikigym checkout: "
        "pip install -e '.[skyrl]'"
    ) from exc

ENV_CLASS = "wikigym"
# SkyRL's own keys in env_config / extras, not env arguments.
_SKYRL_KEYS = frozenset({"env_class"})


def env_config_dict(env_config: Any) -> dict[str, Any]:
    """SkyRL's ``env_config`` (a typed config section, an OmegaConf section or a dict) as the
    env's keyword arguments plus ``env_id``, without SkyRL's own keys."""
    if dataclasses.is_dataclass(env_config) and not isinstance(env_config, type):
        env_config = dataclasses.asdict(env_config)
    config = {k: v for k, v in plain(env_config or {}).items() if k not in _SKYRL_KEYS}
    # The typed section (skyrl_train) nests the env's other arguments and leaves an unset
    # max_steps as None: flatten both into the env's keyword arguments.
    nested = config.pop("env_kwargs", None) or {}
    if config.get("max_steps", 0) is None:
        del config["max_steps"]
    return {**config, **nested}


class WikigymTextEnv(BaseTextEnv):
    """One wikigym episode as SkyRL's text env.

    Args:
        env_config: ``env_id`` plus the env's arguments (``corpus``, ``tasks``, ...).
        extras: The dataset row: ``task_id`` and ``seed`` pick the episode, ``extra_info``
            holds the ids it was written for; SkyRL's ``max_turns`` must not be below the
            env's step budget (the env ends the episode and masks it, not SkyRL).

    Raises:
        IntegrationConfigError: No env config reached the env (SkyRL's typed config dropped
            the section: it would silently play the default world), an unknown argument,
            ``max_turns`` below the env's ``max_steps``, or a row written for another
            snapshot or TaskSet.
    """

    def __init__(
        self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        config = env_config_dict(env_config)
        if not config:
            raise IntegrationConfigError(
                "SkyRL gave the wikigym env no config (environment.skyrl_gym.wikigym is "
                "missing); run SkyRL with trainer.override_entrypoint="
                "wikigym.integrations.skyrl_train, whose config takes that section"
            )
        self.env_id = str(config.pop("env_id", DEFAULT_ENV_ID))
        self.env = make_env(self.env_id, **config)
        extras = plain(extras or {})
        check_row(self.env, extras.get("extra_info") or {})
        self.task_id: str | None = extras.get("task_id")
        self.seed: int | None = None if extras.get("seed") is None else int(extras["seed"])
        budget = int(getattr(self.env.unwrapped, "max_steps", 1))
        asked = extras.get("max_turns")
        if asked is not None and int(asked) < budget:
            raise IntegrationConfigError(
                f"generator.max_turns={int(asked)} is below the env's step budget "
                f"max_steps={budget}: SkyRL would cut episodes the env has not ended; set "
                f"generator.max_turns={budget} (or leave it unset with the wikigym entrypoint)"
            )
        self.max_turns = budget
        self.info: dict[str, Any] = {}
        self.reward = 0.0
        self.done = False

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Start the episode; the prompt is kept when given (the dataset's prompt is the
        env's first observation), else it is that observation as one user message."""
        obs, info = reset_row(self.env, self.task_id, self.seed)
        self.turns = 0
        self.info = info
        self.done = False
        messages = list(prompt) if prompt else [{"role": "user", "content": obs}]
        return messages, {"task_id": info.get("task_id"), "seed": self.seed}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One model turn: the env's observation as a user message, or the end."""
        self.turns += 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.info = info
        self.reward = float(reward)
        self.done = bool(terminated or truncated)
        return BaseTextEnvStepOutput(
            observations=[] if self.done else [{"role": "user", "content": obs}],
            reward=self.reward,
            done=self.done,
            metadata=info,
            postprocessed_action=None,
        )

    @property
    def masked(self) -> bool:
        """Whether the episode should leave the loss: the env masked it (step budget spent
        without an answer), or it never ended (SkyRL stopped it at its context limit)."""
        return not self.done or bool(self.info.get("mask", False))

    def get_metrics(self) -> dict[str, Any]:
        """The episode's reward, turns, ``masked`` (1.0: leave it out of the loss; the wikigym
        generator zeroes its loss mask), reward components and tool error counts."""
        metrics: dict[str, Any] = {
            "reward": self.reward,
            "turns": self.turns,
            "masked": float(self.masked),
        }
        for name, value in (self.info.get("reward_components") or {}).items():
            metrics[f"reward/{name}"] = value
        for code, count in (self.info.get("tool_error_counts") or {}).items():
            metrics[f"tool_error/{code}"] = count
        return metrics

    def close(self) -> None:
        self.env.close()


def _skyrl_columns(row: EpisodeRow, info: dict[str, Any]) -> dict[str, Any]:
    return {
        "env_class": ENV_CLASS,
        "task_id": row.task_id,
        "seed": row.seed,
        "reward_spec": {"method": "env", "ground_truth": list(row.golds)},
        "extra_info": info,
    }


def skyrl_rows(
    env_id: str = DEFAULT_ENV_ID, *, n: int | None = None, seed: int = 0, **config: Any
) -> list[dict[str, Any]]:
    """The rows of a SkyRL dataset: one per task (Calc-v0: ``n`` seeds), with the columns
    SkyRL's ``PromptDataset`` reads (``prompt``, ``env_class``) and what lands in ``extras``
    (``task_id``, ``seed``, ``reward_spec``, ``data_source``, ``extra_info``)."""
    return dataset_rows(env_id, _skyrl_columns, n=n, seed=seed, **config)


def skyrl_dataset(
    path: str | Path,
    env_id: str = DEFAULT_ENV_ID,
    *,
    n: int | None = None,
    seed: int = 0,
    **config: Any,
) -> Path:
    """Write :func:`skyrl_rows` as Parquet at ``path`` (atomically) for SkyRL's
    ``data.train_data``; ``config`` must be the ``env_config`` the trainer will use."""
    return write_rows(path, skyrl_rows(env_id, n=n, seed=seed, **config))


def register() -> None:
    """Register ``"wikigym"`` with ``skyrl_gym`` (idempotent; done on import)."""
    if ENV_CLASS not in skyrl_gym.envs.registration.registry:
        skyrl_gym.register(id=ENV_CLASS, entry_point=f"{__name__}:WikigymTextEnv")


register()

__all__ = [
    "ENV_CLASS",
    "WikigymTextEnv",
    "env_config_dict",
    "register",
    "skyrl_dataset",
    "skyrl_rows",
]
