"""The generator's name pins what it writes: the default TaskSet is cached under that name.

A change to the questions, answers or evidence that synth writes for the same snapshot, config
and seed must bump ``wikigym.synth.generate.GENERATOR``; otherwise a user's cache keeps serving
the TaskSet of the old code (issue 13's rewording did: ``wikigym.synth/3`` kept its stale cache).
"""

from __future__ import annotations

from wikigym.synth.generate import GENERATOR, SynthConfig, generate_tasks
from wikigym.tasks.defaults import default_snapshot, default_tasks_path

# The taskset_id of 8 mixed tasks (seed 0) of the embedded default world, per generator name
# (each on the world of its day: /4 and /5 on world version 1).
PINNED = {
    "wikigym.synth/4": "8597ab1d7f4419ba5fc4f96ae272e20c41fa2befe3e63d70a202d030a84bb3e8",
    # synth/5: wide sets on the answer itself (coarse ranges); each layer settled before its
    # neighbour is described; special constraints last; phd comparisons of two; one random
    # stream per level.
    "wikigym.synth/5": "ea233e2155782ecdc04975b10eb7a8fc5d3c890883c15e9ace49fc41e1014911",
    # synth/6 (issue 36), on the world of generator version 2 (one office per person):
    # descriptions said definitely only when they denote one entity; arithmetic over related
    # quantities; unions of categorical values; near-misses of every form; phd needs an
    # unsurfaced description; relative-time, partial-name and list forms in the mix.
    "wikigym.synth/6": "61c8cc841f9ca81682b2a80fe4f74f9bcf19a4b679d2e3524d7258a790e2a9ab",
}


def test_the_generator_name_changes_with_its_output() -> None:
    snap = default_snapshot(progress=False)
    tasks = generate_tasks(snap, SynthConfig(difficulty="mixed", n=8, seed=0))
    assert GENERATOR in PINNED, f"pin the new generator {GENERATOR!r}: add its taskset_id"
    assert tasks.taskset_id == PINNED[GENERATOR], (
        f"synth's output changed under the same name {GENERATOR!r}: bump GENERATOR in "
        "wikigym/synth/generate.py and pin the new taskset_id here"
    )
    assert {t.generator for t in tasks} == {GENERATOR}


def test_the_default_taskset_cache_is_named_by_the_generator() -> None:
    tag = GENERATOR.replace("/", "-").replace(".", "-")
    assert default_tasks_path().name.endswith(f".{tag}.tasks.jsonl")
