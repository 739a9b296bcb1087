"""Ray rollout pool: episodes/s with 1 and 2 actors against the same episodes in process.

One generated world (1,500 articles, seed 0) and 200 one-hop tasks; the policy replays each
task's oracle calls (2-3 tool steps and an answer; a callable policy, shipped to the actors
by value). Each configuration runs the same ``--episodes`` episodes ``--repeat`` times and
reports the median episodes/s; actor start-up (process start, env and snapshot open) is timed
apart. The pool's trajectories are checked equal to the serial run's every time.

Usage:
    python benchmarks/bench_ray.py [--episodes 200] [--repeat 3] [--out benchmarks/results]

Needs the ``ray`` extra (``pip install 'wikigym[ray]'``).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import RESULTS, WORK, markdown_table, median, write_results

from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.integrations.ray.episodes import Turn
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import TaskSet
from wikigym.tools import format_tool_call


class OracleReplay:
    """The task's oracle calls, in order (by the task id the env reports in ``info``)."""

    def __init__(self, tasks_file: str) -> None:
        self.plans = {
            t.task_id: [format_tool_call(c.name, dict(c.arguments)) for c in t.oracle]
            for t in TaskSet.load(tasks_file)
        }

    def __call__(self, turn: Turn) -> str:
        plan = self.plans[turn.info["task_id"]]
        step = sum(m["role"] == "assistant" for m in turn.messages)
        return plan[step] if step < len(plan) else "<answer>none</answer>"


def world(articles: int, tasks: int) -> dict[str, str]:
    """The env kwargs over a cached world snapshot and its one-hop tasks."""
    root = WORK / f"ray-world-n{articles}"
    snap = root / "snap"
    if not (snap / "manifest.json").is_file():
        build_world_snapshot(articles, 0, snap, progress=False)
    path = root / f"tasks-{tasks}.jsonl"
    if not path.is_file():
        one_hop_tasks(Snapshot.open(snap), n=tasks, seed=0).save(path)
    return {"corpus": str(snap), "tasks": str(path), "python": "off"}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--articles", type=int, default=1500)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import ray

    from wikigym.integrations.ray import RolloutPool, run_serial

    kwargs = world(args.articles, 200)
    policy = OracleReplay(kwargs["tasks"])
    rows: list[list[Any]] = []
    data: dict[str, Any] = {"episodes": args.episodes, "repeat": args.repeat, "runs": {}}

    run_serial(policy, episodes=5, **kwargs)  # warm the process caches (snapshot, TaskSet)
    times = []
    for _ in range(args.repeat):
        t0 = time.perf_counter()
        serial = run_serial(policy, episodes=args.episodes, **kwargs)
        times.append(time.perf_counter() - t0)
    steps = sum(len(t.rewards) for t in serial)
    base = args.episodes / median(times)
    data["runs"]["in-process"] = {"seconds": times, "episodes_per_s": base, "steps": steps}
    rows.append(["in-process (serial)", "-", f"{base:.1f}", "1.00x", "-"])

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    for actors in (1, 2):
        t0 = time.perf_counter()
        pool = RolloutPool(actors, **kwargs)
        startup = time.perf_counter() - t0
        pool.run(policy, episodes=5)  # warm the actors
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            out = pool.run(policy, episodes=args.episodes)
            times.append(time.perf_counter() - t0)
            assert out == serial, "pool results differ from the serial run"
        pool.close()
        rate = args.episodes / median(times)
        data["runs"][f"ray-{actors}"] = {
            "seconds": times,
            "episodes_per_s": rate,
            "startup_s": startup,
            "equal_to_serial": True,
        }
        rows.append(
            [
                f"Ray pool, {actors} actor(s)",
                actors,
                f"{rate:.1f}",
                f"{rate / base:.2f}x",
                f"{startup:.1f}",
            ]
        )
    ray.shutdown()

    table = markdown_table(["run", "actors", "episodes/s", "vs in-process", "start-up s"], rows)
    body = (
        f"{args.episodes} episodes ({steps} env steps) of the oracle replay policy on a "
        f"{args.articles}-article generated world, median of {args.repeat} runs; the pool's "
        "trajectories equal the serial run's in every run.\n\n" + table + "\n"
    )
    print(body)
    write_results("ray", data, body, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
