"""SkyRL (``skyrl-gym``): wikigym envs as a ``BaseTextEnv`` named ``"wikigym"``.

``import wikigym.integrations.skyrl`` registers the id with ``skyrl_gym``; SkyRL's generator
then builds one env per trajectory as
``skyrl_gym.make("wikigym", env_config=cfg.environment.skyrl_gym.wikigym, extras=row)``.
``env_config`` may name ``env_id`` (default ``WikiSearch-v0``), ``corpus``, ``tasks`` and
any argument of that env; ``extras`` (the dataset row's other columns) carry ``task_id``
and ``seed``. :func:`skyrl_dataset` writes those rows. Install with ``wikigym[skyrl]``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from wikigym.integrations.common import (
    DEFAULT_ENV_ID,
    episode_rows,
    ids_of,
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
        f"wikigym.integrations.skyrl needs skyrl-gym ({exc}); pip install 'wikigym[skyrl]'"
    ) from exc

ENV_CLASS = "wikigym"
# SkyRL's own keys in env_config / extras, not env arguments.
_SKYRL_KEYS = frozenset({"env_class"})


class WikigymTextEnv(BaseTextEnv):
    """One wikigym episode as SkyRL's text env.

    Args:
        env_config: ``env_id`` plus the env's arguments (``corpus``, ``tasks``, ...).
        extras: The dataset row: ``task_id`` and ``seed`` pick the episode; SkyRL's
            ``max_turns`` caps the turns (the env's ``max_steps`` caps them too).
    """

    def __init__(
        self, env_config: Mapping[str, Any] | None = None, extras: Mapping[str, Any] | None = None
    ) -> None:
        super().__init__()
        config = {k: v for k, v in plain(env_config or {}).items() if k not in _SKYRL_KEYS}
        self.env_id = str(config.pop("env_id", DEFAULT_ENV_ID))
        self.env = make_env(self.env_id, **config)
        extras = plain(extras or {})
        self.task_id: str | None = extras.get("task_id")
        self.seed: int | None = None if extras.get("seed") is None else int(extras["seed"])
        limit = getattr(self.env.unwrapped, "max_steps", 1)
        self.max_turns = int(extras.get("max_turns") or limit)
        self.info: dict[str, Any] = {}
        self.reward = 0.0

    def init(self, prompt: ConversationType) -> tuple[ConversationType, dict[str, Any]]:
        """Start the episode; the prompt is kept when given (the dataset's prompt is the
        env's first observation), else it is that observation as one user message."""
        obs, info = reset_row(self.env, self.task_id, self.seed)
        self.turns = 0
        self.info = info
        messages = list(prompt) if prompt else [{"role": "user", "content": obs}]
        return messages, {"task_id": info.get("task_id"), "seed": self.seed}

    def step(self, action: str) -> BaseTextEnvStepOutput:
        """One model turn: the env's observation as a user message, or the end."""
        self.turns += 1
        obs, reward, terminated, truncated, info = self.env.step(action)
        self.info = info
        self.reward = float(reward)
        done = bool(terminated or truncated) or self.turns >= self.max_turns
        if done and not (terminated or truncated):
            info = {**info, "mask": True, "stopped_by": "max_turns"}
        return BaseTextEnvStepOutput(
            observations=[] if done else [{"role": "user", "content": obs}],
            reward=self.reward,
            done=done,
            metadata=info,
            postprocessed_action=None,
        )

    def get_metrics(self) -> dict[str, Any]:
        """The episode's reward components and tool error counts (numbers only)."""
        metrics: dict[str, Any] = {"reward": self.reward, "turns": self.turns}
        for name, value in (self.info.get("reward_components") or {}).items():
            metrics[f"reward/{name}"] = value
        for code, count in (self.info.get("tool_error_counts") or {}).items():
            metrics[f"tool_error/{code}"] = count
        return metrics

    def close(self) -> None:
        self.env.close()


def skyrl_rows(
    env_id: str = DEFAULT_ENV_ID, *, n: int | None = None, seed: int = 0, **config: Any
) -> list[dict[str, Any]]:
    """The rows of a SkyRL dataset: one per task (Calc-v0: ``n`` seeds), with the columns
    SkyRL's ``PromptDataset`` reads (``prompt``, ``env_class``) and what lands in ``extras``
    (``task_id``, ``seed``, ``reward_spec``, ``data_source``, ``extra_info``)."""
    env = make_env(env_id, **config)
    ids = ids_of(env)
    source = f"wikigym/{env_id}"
    out = []
    for row in episode_rows(env, n=n, seed=seed):
        out.append(
            {
                "data_source": source,
                "prompt": [{"role": "user", "content": row.prompt}],
                "env_class": ENV_CLASS,
                "task_id": row.task_id,
                "seed": row.seed,
                "reward_spec": {"method": "env", "ground_truth": list(row.golds)},
                "extra_info": {"level": row.level, **ids},
            }
        )
    env.close()
    return out


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

__all__ = ["ENV_CLASS", "WikigymTextEnv", "register", "skyrl_dataset", "skyrl_rows"]
