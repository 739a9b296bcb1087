"""Record episodes as trajectory files and replay them, reporting the first divergence.

A trajectory file is JSON lines: a header (format, env id, the env's JSON arguments,
seed, reset options, snapshot_id, taskset_id, the first observation and info), then one
line per step (action, observation, reward, terminated, truncated, info). Replaying
re-creates the env from the header, resets it with the same seed and options, feeds the
same actions and compares every observation, reward, flag and info. The file is untrusted
data: :mod:`wikigym.envs.trajectory_file` validates it and allow-lists the env it asks for.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import gymnasium as gym

from wikigym.envs.recipe import env_spec, make_env
from wikigym.envs.registration import WIKI_SEARCH, replayable_env_ids
from wikigym.envs.trajectory_file import (
    FORMAT,
    load_header_and_steps,
    replay_env_args,
)
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import TrajectoryError
from wikigym.sandbox import SandboxLimits


def _plain(value: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists, keys become str)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


_STEM_CHARS = 64


def file_stem(task_id: str) -> str:
    """A file name part for ``task_id``: the id itself when it is short and made of ASCII
    letters, digits, ``.``, ``_`` and ``-`` (not starting with ``.``); else such characters
    (others become ``_``, at most 64) and 12 hex of the id's sha256, so that any id, of any
    length or alphabet, gives a short, portable name that still tells ids apart."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", task_id)[:_STEM_CHARS].lstrip(".")
    if safe == task_id:
        return safe
    digest = hashlib.sha256(task_id.encode("utf-8", errors="surrogatepass")).hexdigest()[:12]
    return f"{safe}-{digest}" if safe else digest


class RecordTrajectory(gym.Wrapper[str, str, str, str]):
    """Record every episode of a WikiSearch env to ``directory/<n>-<stem>.jsonl``
    (``stem``: :func:`file_stem` of the task id).

    Args:
        env: The environment (its unwrapped env must expose ``spec_kwargs``).
        directory: Folder for trajectory files (created).
        env_id: Registered id used to re-create the env on replay; default: the id the env
            was made with (``gym.make``), else :data:`~wikigym.envs.registration.WIKI_SEARCH`.
    """

    def __init__(
        self, env: gym.Env[str, str], directory: str | Path, env_id: str | None = None
    ) -> None:
        super().__init__(env)
        made_as = None if env.spec is None else env.spec.id
        given, env_id = env_id, env_id or made_as or WIKI_SEARCH
        base = env.unwrapped
        if not isinstance(base, WikiSearchEnv) or not base.replayable:
            raise TrajectoryError(
                "this env cannot be replayed from a file: pass corpus/tasks as paths and the "
                "reward as a preset name (not in-memory objects) to record trajectories"
            )
        if env_id not in replayable_env_ids():
            raise TrajectoryError(
                f"env_id {env_id!r} cannot be replayed; record with one of "
                f"{list(replayable_env_ids())}"
            )
        if given is not None and made_as is not None and given != made_as:
            raise TrajectoryError(
                f"this env was made as {made_as!r}; record it under that id, not {given!r} "
                "(replay re-creates the env from the id and its pinned defaults)"
            )
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.env_id = env_id
        self._base = base
        self._lines: list[dict[str, Any]] = []
        self._count = 0
        self.last_path: Path | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if seed is None:
            raise TrajectoryError("recording needs an explicit seed: reset(seed=...)")
        obs, info = self.env.reset(seed=seed, options=options)
        base = self._base
        self._lines = [
            {
                "format": FORMAT,
                "env_id": self.env_id,
                "env_kwargs": base.spec_kwargs,
                "seed": seed,
                "options": _plain(options or {}),
                "snapshot_id": info.get("snapshot_id"),
                "taskset_id": info.get("taskset_id"),
                "task_id": info.get("task_id"),
                "observation": obs,
                "info": _plain(info),
            }
        ]
        return obs, info

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        obs, raw_reward, terminated, truncated, info = self.env.step(action)
        reward = float(raw_reward)
        self._lines.append(
            {
                "action": action,
                "observation": obs,
                "reward": reward,
                "terminated": terminated,
                "truncated": truncated,
                "info": _plain(info),
            }
        )
        if terminated or truncated:
            self._write()
        return obs, reward, terminated, truncated, info

    def _write(self) -> None:
        task = str(self._lines[0].get("task_id") or "task")
        path = self.directory / f"{self._count:06d}-{file_stem(task)}.jsonl"
        with path.open("w", encoding="utf-8") as f:
            for line in self._lines:
                f.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
        self._count += 1
        self.last_path = path


@dataclass(frozen=True)
class Divergence:
    """Where a replay first differed from the recording."""

    step: int
    field: str
    expected: Any
    got: Any

    def describe(self) -> str:
        def clip(v: Any) -> str:
            text = json.dumps(v, ensure_ascii=False)
            return text if len(text) <= 300 else text[:297] + "..."

        return (
            f"step {self.step}: {self.field} differs\n  recorded: {clip(self.expected)}\n"
            f"  replayed: {clip(self.got)}"
        )


def load_trajectory(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a trajectory file: the header first, then one dict per step.

    Raises:
        TrajectoryError: The file is not a well-formed trajectory (line and field named).
    """
    header, steps = load_header_and_steps(Path(path))
    return [header.model_dump(), *(s.model_dump() for s in steps)]


def replay(
    path: str | Path,
    *,
    trust: bool = False,
    sandbox_limits: SandboxLimits | Mapping[str, Any] | None = None,
) -> tuple[int, Divergence | None]:
    """Re-run a recorded trajectory and compare every observation, reward, flag and info.

    The file is untrusted data (see :mod:`wikigym.envs.trajectory_file`): only wikigym's env
    ids and allow-listed arguments are accepted, ``python="unsafe"`` only with ``trust``, and
    the sandbox limits the file asks for only up to ``sandbox_limits``.

    Args:
        path: The trajectory file.
        trust: Allow a trajectory that asks for ``python="unsafe"`` (model code run on the
            host without a sandbox) or for sandbox limits above ``sandbox_limits``. Only for
            files you made yourself.
        sandbox_limits: The replayer's ceilings (a :class:`SandboxLimits` or a dict of some
            of its fields; None: the defaults). The replay runs with the file's own limits,
            which may be lower, never higher.

    Returns:
        ``(steps replayed, first divergence or None)``.

    Raises:
        SandboxLimitsError: ``sandbox_limits`` names an unknown field or a bad value.
        TrajectoryError: A malformed or hostile file, an env that is not replayable, limits
            above the ceilings, a header
            whose snapshot_id/taskset_id/task_id differ from the replayed env's, steps after
            the episode ended, or a recording that stops before its episode ended.
    """
    path = Path(path)
    ceiling = None if sandbox_limits is None else SandboxLimits.from_value(sandbox_limits)
    header, steps = load_header_and_steps(path)
    kwargs = replay_env_args(header, path, trust=trust, sandbox_limits=ceiling)
    for n, rec in enumerate(steps[:-1], 1):
        if rec.terminated or rec.truncated:
            raise TrajectoryError(
                f"{path}: step {n} ends the episode but {len(steps) - n} more step(s) follow; "
                "a trajectory holds one episode"
            )
    # header.env_id was checked against the registered ids: nothing from the file is imported.
    replayable = replayable_env_ids()
    env = make_env(env_spec(replayable[replayable.index(header.env_id)], **kwargs))
    base = env.unwrapped
    try:
        if not isinstance(base, WikiSearchEnv):
            raise TrajectoryError(f"{path}: {header.env_id} did not make a WikiSearchEnv")
        _same(path, "snapshot_id", header.snapshot_id, base.snapshot.snapshot_id)
        _same(path, "taskset_id", header.taskset_id, base.tasks.taskset_id)
        options = header.options.model_dump(exclude_none=True) or None
        obs, info = base.reset(seed=header.seed, options=options)
        _same(path, "task_id", header.task_id, info["task_id"])
        if obs != header.observation:
            return 0, Divergence(0, "observation", header.observation, obs)
        if _plain(info) != header.info:
            return 0, Divergence(0, "info", header.info, _plain(info))
        fields = ("observation", "reward", "terminated", "truncated", "info")
        for i, rec in enumerate(steps, 1):
            got = base.step(rec.action)
            for name, value in zip(fields, got, strict=True):
                value = _plain(value)
                if value != getattr(rec, name):
                    return i, Divergence(i, name, getattr(rec, name), value)
    finally:
        env.close()
    if not steps or not (steps[-1].terminated or steps[-1].truncated):
        raise TrajectoryError(
            f"{path} is incomplete: the recording stops after step {len(steps)} before the "
            f"episode ended (no terminated or truncated step); the {len(steps)} recorded "
            "step(s) matched, the rest of the episode is missing"
        )
    return len(steps), None


def _same(path: Path, field: str, recorded: str, replayed: str) -> None:
    if recorded != replayed:
        raise TrajectoryError(
            f"{path}: the header's {field} is {recorded!r}, but the replayed env's is "
            f"{replayed!r}; replay it with the corpus and tasks it was recorded on"
        )
