"""Repeated episodes for ``synth calibrate``: every task ``k`` times through eval's runner.

Run ``r`` makes the agent with seed ``seed + r`` (so a sampling model draws a fresh, seeded
sample each run) and resets episode ``i`` of that run with ``seed + r * n + i`` (``n`` tasks),
so no two episodes share an env seed. Trajectories go to a temporary folder and are dropped:
calibration keeps only each run's success and reward.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from wikigym.eval.factory import make_agent
from wikigym.eval.runner import run_eval
from wikigym.tasks.episode_runner import Outcome
from wikigym.tasks.taskset import TaskSet


class EvalEpisodeRunner:
    """eval's :class:`~wikigym.tasks.episode_runner.EpisodeRunner`."""

    def run(
        self,
        tasks_file: Path,
        *,
        agent: str,
        k: int,
        seed: int,
        corpus: str | None,
        max_steps: int,
        temperature: float,
        model: str | None,
    ) -> dict[str, list[Outcome]]:
        """Each task's ``(success, reward)`` over ``k`` runs (see the module docstring)."""
        n = len(TaskSet.load(tasks_file))
        outcomes: dict[str, list[Outcome]] = {}
        with tempfile.TemporaryDirectory(prefix="wikigym-calibrate-") as tmp:
            for r in range(k):
                player = make_agent(
                    agent, seed=seed + r, model=model, max_steps=max_steps, temperature=temperature
                )
                run = run_eval(
                    player,
                    tasks_file,
                    Path(tmp) / f"run{r}",
                    agent_name=agent,
                    corpus=corpus,
                    max_steps=max_steps,
                    seed=seed + r * n,
                )
                for record in run.records:
                    outcomes.setdefault(record.task_id, []).append((record.success, record.reward))
        return outcomes
