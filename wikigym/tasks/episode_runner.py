"""The slot for the runner of repeated episodes (``synth calibrate``).

synth calibrates a TaskSet by running a model on it, but agents and the evaluation runner
live in eval, a room above synth. So the ``wikigym`` package registers eval's runner here at
import (:mod:`wikigym.wiring`), as it does the default TaskSet's builder
(:mod:`wikigym.tasks.provider`). Standard library only, so registering costs nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from wikigym.errors import TaskSetError

Outcome = tuple[bool, float]
"""One episode's (exact-match success, total reward)."""


class EpisodeRunner(Protocol):
    """What runs each task of a TaskSet file ``k`` times with one agent."""

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
        """Each task's outcomes, by task id, in run order (run ``r`` with seed ``seed + r``)."""
        ...


_RUNNER: list[EpisodeRunner] = []


def set_episode_runner(runner: EpisodeRunner) -> None:
    """Register the runner (the last one registered wins)."""
    _RUNNER[:] = [runner]


def episode_runner() -> EpisodeRunner:
    """The registered runner.

    Raises:
        TaskSetError: None is registered (``wikigym`` registers eval's when imported).
    """
    if not _RUNNER:
        raise TaskSetError(
            "no episode runner is registered; import wikigym (which registers eval's)"
        )
    return _RUNNER[0]
