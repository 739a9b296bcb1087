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
from wikigym.tasks.hooks import EpisodeRequest, Outcome
from wikigym.tasks.taskset import TaskSet


def run_episodes(req: EpisodeRequest) -> dict[str, list[Outcome]]:
    """Each task's ``(success, reward)`` over ``req.k`` runs (see the module docstring)."""
    n = len(TaskSet.load(req.tasks_file))
    outcomes: dict[str, list[Outcome]] = {}
    with tempfile.TemporaryDirectory(prefix="wikigym-calibrate-") as tmp:
        for r in range(req.k):
            player = make_agent(
                req.agent,
                seed=req.seed + r,
                model=req.model,
                max_steps=req.max_steps,
                temperature=req.temperature,
            )
            run = run_eval(
                player,
                req.tasks_file,
                Path(tmp) / f"run{r}",
                agent_name=req.agent,
                corpus=req.corpus,
                max_steps=req.max_steps,
                seed=req.seed + r * n,
            )
            for record in run.records:
                outcomes.setdefault(record.task_id, []).append((record.success, record.reward))
    return outcomes
