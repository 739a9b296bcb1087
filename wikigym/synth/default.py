"""The default TaskSets: of the embedded world (200 tasks, 50 per level, fixed seed), and of any
other corpus (synth's typed relations, as many tasks per level as its facts allow).

A real dump's default questions come from synth, as the world's do: typed relations of the
relation vocabulary, proved unique, worded by the templates ("Where was Albert Camus born?"),
never a raw infobox key ("What is the ld7 of Arabic?", what ``tasks/one_hop.py`` asked).
"""

from __future__ import annotations

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError
from wikigym.synth.generate import SynthConfig, generate_tasks
from wikigym.synth.graph import graph_of
from wikigym.synth.levels import LEVELS
from wikigym.tasks.taskset import Task, TaskSet

DEFAULT_N = 200
DEFAULT_SEED = 0
PER_LEVEL = DEFAULT_N // len(LEVELS)
# A small corpus runs out of a level's questions early: a slot that cannot be filled within
# this many drafts ends that level (the world fills every slot within far fewer).
CORPUS_ATTEMPTS = 200


def default_taskset(snapshot: Snapshot) -> TaskSet:
    """Mixed easy/medium/hard/phd tasks (in turn) of ``snapshot``, seed 0.

    Raises:
        SynthError: The snapshot cannot give 50 tasks of every level (too small or sparse).
    """
    return generate_tasks(snapshot, SynthConfig(difficulty="mixed", n=DEFAULT_N, seed=DEFAULT_SEED))


def corpus_taskset(snapshot: Snapshot) -> TaskSet:
    """The default questions of any corpus: up to :data:`PER_LEVEL` tasks of each level (in
    level order), as many as its typed facts allow, seed 0.

    Raises:
        SynthError: The corpus has no typed relation to ask, or not one question could be
            made of it (one line, saying what would give it some).
    """
    graph_of(snapshot)  # a corpus without typed facts says so here, in one line
    tasks: list[Task] = []
    made: dict[str, int] = {}
    for level in LEVELS:
        config = SynthConfig(
            difficulty=level,
            n=PER_LEVEL,
            seed=DEFAULT_SEED,
            partial=True,
            attempts_per_task=CORPUS_ATTEMPTS,
        )
        got = generate_tasks(snapshot, config)
        tasks.extend(got)
        made[level] = len(got)
    if not tasks:
        raise SynthError(
            f"snapshot {snapshot.path} has typed facts but none makes a question with one "
            "provable answer; pass tasks=FILE of your own questions, or build the corpus "
            "from more pages"
        )
    counts = ", ".join(f"{n} {lv}" for lv, n in made.items())
    return TaskSet(tasks, name=f"synth-default-{snapshot.snapshot_id[:12]} ({counts})")


__all__ = ["DEFAULT_N", "DEFAULT_SEED", "corpus_taskset", "default_taskset"]
