"""Record episodes as trajectory files and replay them, reporting the first divergence.

A trajectory file is JSON lines: a header (format, env id, the env's JSON arguments,
seed, reset options, snapshot_id, taskset_id, the first observation and info), then one
line per step (action, observation, reward, terminated, truncated, info). Replaying
re-creates the env from the header, resets it with the same seed and options, feeds the
same actions and compares every observation, reward, flag and info.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, SupportsFloat

import gymnasium as gym

from wikigym.envs.recipe import env_spec, make_env
from wikigym.errors import TrajectoryError

FORMAT = "wikigym.trajectory/1"


def _plain(value: Any) -> Any:
    """The value as it reads back from JSON (tuples become lists, keys become str)."""
    return json.loads(json.dumps(value, ensure_ascii=False))


class RecordTrajectory(gym.Wrapper[str, str, str, str]):
    """Record every episode of a ``WikiSearch-v0`` env to ``directory/<n>-<task_id>.jsonl``.

    Args:
        env: The environment (its unwrapped env must expose ``spec_kwargs``).
        directory: Folder for trajectory files (created).
        env_id: Registered id used to re-create the env on replay.
    """

    def __init__(
        self, env: gym.Env[str, str], directory: str | Path, env_id: str = "WikiSearch-v0"
    ) -> None:
        super().__init__(env)
        base = env.unwrapped
        if not getattr(base, "replayable", False):
            raise TrajectoryError(
                "this env cannot be replayed from a file: pass corpus/tasks as paths and the "
                "reward as a preset name (not in-memory objects) to record trajectories"
            )
        self.directory = Path(directory)
        self.directory.mkdir(parents=True, exist_ok=True)
        self.env_id = env_id
        self._lines: list[dict[str, Any]] = []
        self._count = 0
        self.last_path: Path | None = None

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        if seed is None:
            raise TrajectoryError("recording needs an explicit seed: reset(seed=...)")
        obs, info = self.env.reset(seed=seed, options=options)
        base = self.env.unwrapped
        self._lines = [
            {
                "format": FORMAT,
                "env_id": self.env_id,
                "env_kwargs": base.spec_kwargs,  # type: ignore[attr-defined]
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

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
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
        task = str(self._lines[0].get("task_id", "task")).replace("/", "_")
        path = self.directory / f"{self._count:06d}-{task}.jsonl"
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
    """Read a trajectory file (header first)."""
    path = Path(path)
    if not path.is_file():
        raise TrajectoryError(f"trajectory file {path} does not exist")
    try:
        lines = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x.strip()]
    except json.JSONDecodeError as exc:
        raise TrajectoryError(f"{path}: not JSON lines ({exc})") from exc
    if not lines or lines[0].get("format") != FORMAT:
        raise TrajectoryError(f"{path}: expected a header with format {FORMAT!r} on the first line")
    return lines


def replay(path: str | Path) -> tuple[int, Divergence | None]:
    """Re-run a recorded trajectory.

    Returns:
        ``(steps replayed, first divergence or None)``.
    """
    header, *steps = load_trajectory(path)
    env = make_env(env_spec(header["env_id"], **header["env_kwargs"])).unwrapped
    obs, info = env.reset(seed=header["seed"], options=header["options"] or None)
    if obs != header["observation"]:
        return 0, Divergence(0, "observation", header["observation"], obs)
    if _plain(info) != header["info"]:
        return 0, Divergence(0, "info", header["info"], _plain(info))
    for i, rec in enumerate(steps, 1):
        got = env.step(rec["action"])
        fields = ("observation", "reward", "terminated", "truncated", "info")
        for name, value in zip(fields, got, strict=True):
            value = _plain(value)
            if value != rec[name]:
                return i, Divergence(i, name, rec[name], value)
    return len(steps), None
