"""What every adapter shares: building an env from plain config, and the rows of a dataset.

Frameworks hand configuration over as OmegaConf/YAML/JSON values; :func:`plain` turns them
into dicts and lists before they reach the env's constructor, and :func:`make_env` names
what was wrong in one line when a key is not an env argument.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
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
    """One row per task of a WikiSearch-v1 env (the first ``n``), or ``n`` seeded problems of
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
    """Reset ``env`` for one row: the named task (WikiSearch-v1) with ``seed``."""
    options = {"task_id": task_id} if task_id is not None else None
    return env.reset(seed=None if seed is None else int(seed), options=options)


def dataset_rows(
    env_id: str,
    layout: Callable[[EpisodeRow, dict[str, Any]], dict[str, Any]],
    *,
    n: int | None = None,
    seed: int = 0,
    **config: Any,
) -> list[dict[str, Any]]:
    """The rows of a framework's dataset: one per :func:`episode_rows` row of the env made from
    ``config``, each ``data_source`` (``wikigym/<env_id>``), ``prompt`` (the env's first
    observation as one user message) and the columns ``layout(row, info)`` adds, where
    ``info`` is what re-creates and checks the episode: ``index``, ``task_id``, ``seed``,
    ``level``, ``snapshot_id``, ``taskset_id``. ``config`` must be the env arguments the
    trainer will use (the ids let the adapter refuse rows of another snapshot or TaskSet)."""
    env = make_env(env_id, **config)
    try:
        ids = ids_of(env)
        rows = episode_rows(env, n=n, seed=seed)
    finally:
        env.close()
    out = []
    for i, row in enumerate(rows):
        info = {"index": i, "task_id": row.task_id, "seed": row.seed, "level": row.level, **ids}
        base = {
            "data_source": f"wikigym/{env_id}",
            "prompt": [{"role": "user", "content": row.prompt}],
        }
        out.append({**base, **layout(row, info)})
    return out


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


def check_row(env: gym.Env[str, str], info: Mapping[str, Any]) -> None:
    """Refuse a dataset row written for another snapshot or TaskSet than ``env``'s (the
    ``snapshot_id``/``taskset_id`` of its ``extra_info``; a row without them passes).

    Raises:
        IntegrationConfigError: The ids differ (the trainer's env config names other data
            than the dataset was written with).
    """
    have = ids_of(env)
    for key in ("snapshot_id", "taskset_id"):
        want = info.get(key)
        if want is not None and have[key] is not None and want != have[key]:
            raise IntegrationConfigError(
                f"the dataset row was written for {key} {str(want)[:12]}..., the env has "
                f"{str(have[key])[:12]}...; give the trainer's env config the corpus and "
                "tasks the dataset was written with (or rewrite the dataset)"
            )
