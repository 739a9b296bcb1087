"""Run an agent on WikiSearch-v1 episodes and record replayable trajectories.

Episode ``i`` runs one task with ``reset(seed=seed + i, options={"task_id": ...})``: every
task once, in TaskSet order, or ``episodes`` of them (a seeded sample when fewer than the
tasks, cycling through them when more). Each episode is recorded by
:class:`~wikigym.envs.replay.RecordTrajectory` into ``out_dir/trajectories``.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, SupportsFloat

import numpy as np

from wikigym.codes import ErrorCode
from wikigym.envs.recipe import env_spec, make_env
from wikigym.envs.registration import WIKI_SEARCH
from wikigym.envs.replay import RecordTrajectory
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import EvalError
from wikigym.eval.agents import Agent
from wikigym.tasks.taskset import Task, TaskSet

HALLUCINATION_TYPES: tuple[str, ...] = (
    ErrorCode.UNKNOWN_TOOL,
    ErrorCode.INVALID_ARGUMENTS,
    "citation_nonexistent",
    "citation_unseen",
)
UNLABELLED = "unlabelled"
_TRAJECTORY_NAME = re.compile(r"\d{6}-.*\.jsonl")


@dataclass(frozen=True)
class EpisodeRecord:
    """The outcome of one episode (everything but ``seconds`` is deterministic)."""

    index: int
    task_id: str
    level: str
    seed: int
    success: bool
    f1: float
    reward: float
    steps: int
    terminated: bool
    truncated: bool
    answer: str | None
    golds: list[str]
    steps_with_tool_error: int
    tool_errors: dict[str, int]
    hallucinations: dict[str, int]
    trajectory: str
    seconds: float = field(compare=False)

    def to_json(self) -> dict[str, Any]:
        """The record without its timing (what ``episodes.jsonl`` holds)."""
        data = asdict(self)
        data.pop("seconds")
        return data


@dataclass(frozen=True)
class EvalRun:
    """All episodes of one evaluation and what they ran on."""

    agent: str
    snapshot_id: str
    taskset_id: str
    taskset_name: str
    seed: int
    max_steps: int
    reward: str
    records: list[EpisodeRecord]
    seconds: float = field(compare=False)
    no_oracle: tuple[str, ...] = ()  # tasks run that carry no oracle trajectory, in order


HIDDEN_ANSWER = "(hidden)"


def query_view(task: Task) -> Task:
    """What an agent that plans from the query's structure is told (``sees_query``): the
    question and the formal query, without the answer, its type, the evidence, the rubric,
    the oracle or the difficulty (an unanswerable task looks like any other)."""
    return Task(
        task_id=task.task_id,
        question=task.question,
        answer=HIDDEN_ANSWER,
        query=task.query,
        snapshot_id=task.snapshot_id,
    )


def choose_tasks(tasks: TaskSet, episodes: int | None, seed: int) -> list[Task]:
    """The tasks of each episode, in order (see the module docstring)."""
    if episodes is None:
        return list(tasks)
    if episodes < 1:
        raise EvalError(f"--episodes must be >= 1, got {episodes}")
    if episodes <= len(tasks):
        picked = np.random.default_rng(seed).permutation(len(tasks))[:episodes]
        return [tasks[int(i)] for i in sorted(int(i) for i in picked)]
    return [tasks[i % len(tasks)] for i in range(episodes)]


def _clear_old_trajectories(folder: Path) -> None:
    """Remove trajectories of a previous run into the same folder (only our own file names)."""
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            if path.is_file() and _TRAJECTORY_NAME.fullmatch(path.name):
                path.unlink()


def run_eval(
    agent: Agent,
    tasks_file: str | Path,
    out_dir: str | Path,
    *,
    agent_name: str,
    corpus: str | Path | None = None,
    episodes: int | None = None,
    max_steps: int = 12,
    seed: int = 0,
    python: str = "off",
    reward: str = "binary",
    on_episode: Callable[[EpisodeRecord], None] | None = None,
) -> EvalRun:
    """Run ``agent`` on the tasks of ``tasks_file`` over ``corpus``.

    Args:
        agent: The agent (receives the task only when ``agent.privileged`` is true; its
            query alone, :func:`query_view`, when ``agent.sees_query`` is).
        tasks_file: TaskSet file (``.jsonl``/``.parquet``).
        out_dir: Report folder; trajectories go to ``out_dir/trajectories``.
        agent_name: The agent's spec, recorded in the results.
        corpus: Snapshot directory; None for the embedded default world.
        episodes: Number of episodes; None for one per task.
        max_steps: Step budget per episode.
        seed: Base seed (episode ``i`` resets with ``seed + i``).
        python: The env's python tool mode (``off``, ``auto``, ``unsafe``).
        reward: Reward preset name.
        on_episode: Called after each episode (progress display).

    Returns:
        The episodes' records, in episode order.
    """
    tasks_file = Path(tasks_file).resolve()
    if not tasks_file.is_file():
        raise EvalError(f"task file {tasks_file} does not exist; pass --tasks FILE (.jsonl)")
    if max_steps < 1:
        raise EvalError(f"--max-steps must be >= 1, got {max_steps}")
    if corpus is not None and not Path(corpus).is_dir():
        raise EvalError(f"corpus {corpus} is not a snapshot directory; pass --corpus DIR")
    folder = Path(out_dir) / "trajectories"
    _clear_old_trajectories(folder)
    spec = env_spec(
        WIKI_SEARCH,
        corpus=None if corpus is None else str(Path(corpus).resolve()),
        tasks=str(tasks_file),
        max_steps=max_steps,
        python=python,
        reward=reward,
    )
    env = RecordTrajectory(make_env(spec), folder, env_id=spec.id)
    unwrapped = env.unwrapped
    assert isinstance(unwrapped, WikiSearchEnv)  # the recipe above names it
    taskset: TaskSet = unwrapped.tasks
    privileged = bool(getattr(agent, "privileged", False))
    sees_query = bool(getattr(agent, "sees_query", False))
    records: list[EpisodeRecord] = []
    started = time.perf_counter()
    chosen = choose_tasks(taskset, episodes, seed)
    for index, task in enumerate(chosen):
        t0 = time.perf_counter()
        obs, info = env.reset(seed=seed + index, options={"task_id": task.task_id})
        agent.reset(obs, task if privileged else query_view(task) if sees_query else None)
        terminated = truncated = False
        steps_with_error = 0
        reward_value: SupportsFloat = 0.0
        while not (terminated or truncated):
            action = agent.act(obs, unwrapped.last_outputs)
            if not isinstance(action, str):
                raise EvalError(
                    f"agent {agent_name} returned {type(action).__name__}, expected str"
                )
            obs, reward_value, terminated, truncated, info = env.step(action)
            steps_with_error += info["tool_error"] is not None
        metrics = info.get("reward_metrics", {})
        assert env.last_path is not None
        record = EpisodeRecord(
            index=index,
            task_id=task.task_id,
            level=task.level or UNLABELLED,
            seed=seed + index,
            success=bool(metrics.get("em", 0.0) == 1.0),
            f1=float(metrics.get("f1", 0.0)),
            reward=float(reward_value),
            steps=int(info["step"]),
            terminated=bool(terminated),
            truncated=bool(truncated),
            answer=info.get("answer"),
            golds=list(task.golds),
            steps_with_tool_error=steps_with_error,
            tool_errors=dict(sorted(info["tool_error_counts"].items())),
            hallucinations={k: int(metrics.get(k, 0)) for k in HALLUCINATION_TYPES},
            trajectory=env.last_path.relative_to(Path(out_dir)).as_posix(),
            seconds=time.perf_counter() - t0,
        )
        records.append(record)
        if on_episode is not None:
            on_episode(record)
    env.close()
    return EvalRun(
        agent=agent_name,
        snapshot_id=unwrapped.snapshot.snapshot_id,
        taskset_id=taskset.taskset_id,
        taskset_name=taskset.name,
        seed=seed,
        max_steps=max_steps,
        reward=reward,
        records=records,
        seconds=time.perf_counter() - started,
        no_oracle=tuple(dict.fromkeys(t.task_id for t in chosen if not t.oracle)),
    )
