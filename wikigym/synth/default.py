"""The default TaskSet of a snapshot: 200 tasks, 50 per level, fixed seed."""

from __future__ import annotations

from wikigym.corpora.snapshot import Snapshot
from wikigym.synth.generate import SynthConfig, generate_tasks
from wikigym.tasks.taskset import TaskSet

DEFAULT_N = 200
DEFAULT_SEED = 0


def default_taskset(snapshot: Snapshot) -> TaskSet:
    """Mixed easy/medium/hard/phd tasks (in turn) of ``snapshot``, seed 0.

    Raises:
        SynthError: The snapshot cannot give 50 tasks of every level (too small or sparse).
    """
    return generate_tasks(snapshot, SynthConfig(difficulty="mixed", n=DEFAULT_N, seed=DEFAULT_SEED))
