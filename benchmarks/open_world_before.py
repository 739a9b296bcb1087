"""The default-question TaskSets an older synth makes of bench_open_world's snapshots, for its
``--before`` comparison (multi-valued answers where proofs held one value of a field).

Run it under the older wikigym, on snapshots ``bench_open_world.py`` has built:

    git archive main | tar -x -C /tmp/old
    PYTHONPATH=/tmp/old python3 benchmarks/open_world_before.py /tmp/before
    python3 benchmarks/bench_open_world.py --before /tmp/before

It uses only what every synth since wikigym.synth/5 has (``generate_tasks``, ``SynthConfig``):
up to 50 easy and 50 medium tasks, seed 0, as ``corpus_taskset`` asks.
"""

from __future__ import annotations

import sys
from pathlib import Path

from wikigym.corpora import Snapshot
from wikigym.errors import SynthError
from wikigym.synth import SynthConfig, generate_tasks
from wikigym.tasks.taskset import TaskSet

WORK = Path(__file__).resolve().parent / "work"
NAMES = ("enwiki-206-page-excerpt", "jawiki-excerpt", "enwiki-2014-excerpt")


def main() -> int:
    if len(sys.argv) != 2:
        print("usage: open_world_before.py OUT_DIR", file=sys.stderr)
        return 2
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    for name in NAMES:
        snap = Snapshot.open(WORK / f"open-world-{name}")
        tasks = []
        for level in ("easy", "medium"):
            for n in (50, 30, 20, 10):  # the most this synth makes (it has no partial runs)
                try:
                    tasks += list(generate_tasks(snap, SynthConfig(difficulty=level, n=n, seed=0)))
                    break
                except SynthError:
                    continue
        TaskSet(tasks).save(out / f"{name}.jsonl")
        print(f"{name}: {len(tasks)} tasks")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
