"""What every adapter shares: building an env from plain config, and the rows of a dataset.

Frameworks hand configuration over as OmegaConf/YAML/JSON values; :func:`plain` turns them
into dicts and lists before they reach the env's constructor, and :func:`make_env` names
what was wrong in one line when a key is not an env argument.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from wikigym.envs import ENV_IDS
from wikigym.envs.calc import CalcEnv
from wikigym.envs.recipe import env_class, env_spec
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import WikigymError

DEFAULT_ENV_ID = WIKI_SEARCH


class IntegrationConfigError(WikigymError, ValueError):
    """An adapter's configuration names an unknown env id or argument."""


def plain(value: Any) -> Any:
    """``value`` with every mapping turned into a ``dict`` and every non-string sequence
    into a ``list`` (OmegaConf's DictConfig/ListConfig included), recursively."""
    if isinstance(value, Mapping) or (hasattr(value, "items") and hasattr(value, "keys")):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, Sequence) and not isinstance(value, str | bytes):
        return [plain(v) for v in value]
    return value


def env_kwargs(env_id: str, config: Mapping[str, Any]) -> dict[str, Any]:
    """The constructor arguments of ``env_id`` in ``config``, checked by name.

    Raises:
        IntegrationConfigError: Unknown env id, or a key that is not an argument of it.
    """
    if env_id not in ENV_IDS:
        raise IntegrationConfigError(
            f"env_id must be one of {list(ENV_IDS)}, got {env_id!r}; set env_id in the config"
        )
    accepted = set(inspect.signature(env_class(env_spec(env_id))).parameters)
    # A None that the env does not take means "not set" (a shared config naming corpus/tasks
    # for Calc-v0), so it is dropped; any other unknown key is an error.
    kwargs = {k: plain(v) for k, v in config.items() if v is not None or k in accepted}
    unknown = sorted(set(kwargs) - accepted)
    if unknown:
        raise IntegrationConfigError(
            f"{env_id} takes no argument {unknown[0]!r}; expected some of {sorted(accepted)}"
        )
    return kwargs


def make_env(env_id: str = DEFAULT_ENV_ID, **config: Any) -> gym.Env[str, str]:
    """``gymnasium.make(env_id, **config)`` after :func:`env_kwargs` checked ``config``."""
    return gym.make(env_id, **env_kwargs(env_id, config))


@dataclass(frozen=True)
class EpisodeRow:
    """One episode a trainer can ask for: reset with ``seed`` (and ``task_id``).

    Attributes:
        task_id: The task (None for Calc-v0, whose problem is drawn from the seed).
        seed: The reset seed.
        prompt: The env's first observation for this episode.
        golds: The accepted answers.
        level: The task's level, when it has one.
    """

    task_id: str | None
    seed: int
    prompt: str
    golds: tuple[str, ...]
    level: str | None = None


def episode_rows(env: gym.Env[str, str], n: int | None = None, seed: int = 0) -> list[EpisodeRow]:
    """One row per task of a WikiSearch-v0 env (the first ``n``), or ``n`` seeded problems of
    Calc-v0 (default 100); row ``i`` resets with ``seed + i``. The env is reset once per row."""
    base = env.unwrapped
    rows = []
    if isinstance(base, WikiSearchEnv):
        tasks = list(base.tasks)[:n] if n is not None else list(base.tasks)
        for i, task in enumerate(tasks):
            obs, _ = env.reset(seed=seed + i, options={"task_id": task.task_id})
            rows.append(EpisodeRow(task.task_id, seed + i, obs, task.golds, task.level))
        return rows
    if not isinstance(base, CalcEnv):
        raise IntegrationConfigError(f"no dataset rows for {type(base).__name__}")
    for i in range(100 if n is None else n):
        obs, _ = env.reset(seed=seed + i)
        rows.append(EpisodeRow(None, seed + i, obs, (str(base.gold),), f"L{base.level}"))
    return rows


def reset_row(env: gym.Env[str, str], task_id: str | None, seed: int | None) -> tuple[str, dict]:
    """Reset ``env`` for one row: the named task (WikiSearch-v0) with ``seed``."""
    options = {"task_id": task_id} if task_id is not None else None
    return env.reset(seed=None if seed is None else int(seed), options=options)


def write_rows(path: str | Path, rows: list[dict[str, Any]]) -> Path:
    """Write dataset rows as Parquet at ``path``, atomically (a temp sibling, renamed)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    pq.write_table(pa.Table.from_pylist(rows), tmp)
    tmp.replace(path)
    return path


def ids_of(env: gym.Env[str, str]) -> dict[str, str | None]:
    """The snapshot and TaskSet ids of an env (None for Calc-v0)."""
    base = env.unwrapped
    snapshot = getattr(base, "snapshot", None)
    tasks = getattr(base, "tasks", None)
    return {
        "snapshot_id": None if snapshot is None else snapshot.snapshot_id,
        "taskset_id": None if tasks is None else tasks.taskset_id,
    }
