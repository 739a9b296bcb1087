"""Difficulty calibrated by a model: pass@k and mean reward per task, and pass-rate bands.

``synth calibrate`` runs every task ``k`` times through WikiSearch-v1 with one agent and
stores the outcome in the task's ``difficulty`` under the ``calibration_*`` keys that
:class:`Calibration` owns (one home for their names and types); ``synth filter`` keeps the
tasks whose pass rate lies in a band (GRPO learns from groups that are neither always solved
nor never: LiteResearcher's pass@8 bands, R1-Searcher's rollout counts).

The task ids stay; the TaskSet's ``taskset_id`` changes, since ``difficulty`` is part of each
task's canonical JSON: a calibrated TaskSet names exactly which calibration it carries.

Running episodes needs an agent, and agents live in eval (a room above synth). So, as with
the default TaskSet, the package root (:mod:`wikigym.defaults`) serves eval's runner through
the one slot (:mod:`wikigym.tasks.hooks`) when ``wikigym`` is imported.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wikigym.errors import SynthError
from wikigym.synth.levels import LEVELS
from wikigym.tasks.hooks import EpisodeRequest, root_services
from wikigym.tasks.stats import wilson
from wikigym.tasks.taskset import Task, TaskSet

PREFIX = "calibration_"


class Calibration(BaseModel):
    """A model's success on one task over ``k`` runs.

    Attributes:
        agent: The agent's spec (``heuristic``, ``openai:URL``, ``hf:PATH``).
        k: Runs per task.
        seed: The calibration's base seed (run ``r`` samples with ``seed + r``).
        max_steps: The env's step budget.
        passes: Runs with an exact-match answer.
        pass_rate: ``passes / k`` (the unbiased pass@1 estimate).
        pass_at_k: 1.0 when at least one of the ``k`` runs passed, else 0.0.
        mean_reward: The env's total reward, averaged over the runs.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)

    agent: str = Field(min_length=1)
    k: int = Field(ge=1)
    seed: int
    max_steps: int = Field(ge=1)
    passes: int = Field(ge=0)
    pass_rate: float = Field(ge=0.0, le=1.0)
    pass_at_k: float = Field(ge=0.0, le=1.0)
    mean_reward: float

    @classmethod
    def of_runs(
        cls,
        outcomes: Sequence[tuple[bool, float]],
        *,
        agent: str,
        seed: int,
        max_steps: int,
    ) -> Calibration:
        """The calibration of one task from its runs' ``(success, reward)``, in run order."""
        if not outcomes:
            raise ValueError("a calibration needs at least one run")
        passes = sum(1 for ok, _ in outcomes if ok)
        k = len(outcomes)
        return cls(
            agent=agent,
            k=k,
            seed=seed,
            max_steps=max_steps,
            passes=passes,
            pass_rate=passes / k,
            pass_at_k=1.0 if passes else 0.0,
            mean_reward=round(math.fsum(r for _, r in outcomes) / k, 9),
        )

    def to_difficulty(self) -> dict[str, float | int | str]:
        """The ``difficulty`` entries (``calibration_<field>``)."""
        return {PREFIX + k: v for k, v in self.model_dump().items()}

    @classmethod
    def of_task(cls, task: Task) -> Calibration | None:
        """The calibration a task carries, or None.

        Raises:
            SynthError: The task carries some ``calibration_*`` keys but not a valid set.
        """
        found = {k[len(PREFIX) :]: v for k, v in task.difficulty.items() if k.startswith(PREFIX)}
        if not found:
            return None
        try:
            return cls.model_validate(found)
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"])
            raise SynthError(
                f"task {task.task_id!r}: invalid calibration ({PREFIX}{where}: {first['msg']}); "
                "run synth calibrate again"
            ) from exc


def apply_calibration(tasks: TaskSet, results: Mapping[str, Calibration]) -> TaskSet:
    """``tasks`` with each one's calibration in its ``difficulty`` (older ones replaced).

    Raises:
        SynthError: A task has no result.
    """
    out: list[Task] = []
    for task in tasks:
        result = results.get(task.task_id)
        if result is None:
            raise SynthError(f"no calibration result for task {task.task_id!r}")
        kept = {k: v for k, v in task.difficulty.items() if not k.startswith(PREFIX)}
        out.append(task.model_copy(update={"difficulty": {**kept, **result.to_difficulty()}}))
    return TaskSet(out, name=tasks.name)


@dataclass(frozen=True)
class LevelRow:
    """A level's calibrated success: runs passed of all runs, with its 95% Wilson interval."""

    level: str
    runs: int
    passes: int
    rate: float
    low: float
    high: float


def level_summary(tasks: TaskSet) -> list[LevelRow]:
    """Per level (in the levels' order, then others by name), the passes of every calibrated
    run of its tasks, with a Wilson interval: how hard each level is for the agent."""
    runs: dict[str, list[int]] = {}
    for task in tasks:
        c = Calibration.of_task(task)
        if c is None:
            continue
        got = runs.setdefault(task.level or "?", [0, 0])
        got[0] += c.passes
        got[1] += c.k
    order = {lv: i for i, lv in enumerate(LEVELS)}
    rows = []
    for level in sorted(runs, key=lambda lv: (order.get(lv, len(order)), lv)):
        passes, n = runs[level]
        low, high = wilson(passes, n)
        rows.append(LevelRow(level, n, passes, passes / n if n else 0.0, low, high))
    return rows


def filter_band(tasks: TaskSet, min_pass: float, max_pass: float) -> TaskSet:
    """The tasks whose calibrated pass rate lies in ``[min_pass, max_pass]``, in order.

    Raises:
        SynthError: A bad band, a task that carries no calibration, or no task in the band.
    """
    if not 0.0 <= min_pass <= max_pass <= 1.0:
        raise SynthError(
            f"expected 0 <= --min-pass <= --max-pass <= 1, got {min_pass} and {max_pass}"
        )
    kept: list[Task] = []
    for task in tasks:
        calibration = Calibration.of_task(task)
        if calibration is None:
            raise SynthError(
                f"task {task.task_id!r} of {tasks.name} carries no calibration; "
                "run synth calibrate on the file first"
            )
        if min_pass <= calibration.pass_rate <= max_pass:
            kept.append(task)
    if not kept:
        raise SynthError(
            f"no task of {tasks.name} has a pass rate in [{min_pass}, {max_pass}]; widen the band"
        )
    return TaskSet(kept, name=tasks.name)


def calibrate(
    tasks_file: Path,
    *,
    agent: str,
    k: int = 8,
    seed: int = 0,
    corpus: str | None = None,
    max_steps: int = 12,
    temperature: float = 0.0,
    model: str | None = None,
) -> TaskSet:
    """Run each task of ``tasks_file`` ``k`` times with ``agent``; the calibrated TaskSet.

    The arguments are those of :class:`~wikigym.tasks.hooks.EpisodeRequest` (which names each).

    Raises:
        SynthError: ``k`` below 1, or a task without runs.
    """
    if k < 1:
        raise SynthError(f"--k must be >= 1, got {k}")
    tasks = TaskSet.load(tasks_file)
    request = EpisodeRequest(
        Path(tasks_file), agent, k, seed, corpus, max_steps, temperature, model
    )
    runs = root_services().run_episodes(request)
    results = {
        task_id: Calibration.of_runs(outcomes, agent=agent, seed=seed, max_steps=max_steps)
        for task_id, outcomes in runs.items()
    }
    return apply_calibration(tasks, results)
