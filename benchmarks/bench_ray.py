"""Ray rollout pool: episodes/s of 2 actors against the same episodes run serially in process.

One generated world (1,500 articles, seed 0) and 200 one-hop tasks; the policy replays each
task's oracle calls (2-3 tool steps and an answer; a callable policy, shipped to the actors
by value), either at once ("zero latency": the env and Ray's overhead are all there is) or
after a 20 ms sleep a turn (an inference server's latency). For each policy, ``--repeat``
rounds each run ``run_serial`` and the 2-actor pool on the same ``--episodes`` episodes,
interleaved (the order alternates by round), so a shared, loaded machine slows both alike;
the ratio is the median of the per-round ratios. Actor start-up is timed apart. The pool's
trajectories are checked equal to the serial run's every time.

Usage:
    python benchmarks/bench_ray.py [--episodes 200] [--repeat 5] [--out benchmarks/results]

Needs Ray (from a wikigym checkout: ``pip install -e '.[ray]'``).
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


class Slowed:
    """``inner`` after a fixed sleep a turn (an inference server's latency)."""

    def __init__(self, inner: OracleReplay, seconds: float) -> None:
        self.inner = inner
        self.seconds = seconds

    def __call__(self, turn: Turn) -> str:
        time.sleep(self.seconds)
        return self.inner(turn)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--episodes", type=int, default=200)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--articles", type=int, default=1500)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args(argv)

    import ray

    from wikigym.integrations.ray import RolloutPool, run_serial

    kwargs = world(args.articles, 200)
    oracle = OracleReplay(kwargs["tasks"])
    policies = {"zero latency": oracle, "20 ms a turn": Slowed(oracle, 0.020)}
    rows: list[list[Any]] = []
    data: dict[str, Any] = {"episodes": args.episodes, "repeat": args.repeat, "runs": {}}

    run_serial(oracle, episodes=5, **kwargs)  # warm the process caches (snapshot, TaskSet)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    t0 = time.perf_counter()
    pool = RolloutPool(2, **kwargs)
    startup = time.perf_counter() - t0
    pool.run(oracle, episodes=5)  # warm the actors
    for name, policy in policies.items():
        serial_s, pool_s, ratios = [], [], []
        steps = 0
        for r in range(args.repeat):
            order = ["serial", "pool"] if r % 2 == 0 else ["pool", "serial"]
            took: dict[str, float] = {}
            outs: dict[str, Any] = {}
            for kind in order:
                t0 = time.perf_counter()
                if kind == "serial":
                    outs[kind] = run_serial(policy, episodes=args.episodes, **kwargs)
                else:
                    outs[kind] = pool.run(policy, episodes=args.episodes)
                took[kind] = time.perf_counter() - t0
            assert outs["pool"] == outs["serial"], "pool results differ from the serial run"
            steps = sum(len(t.rewards) for t in outs["serial"])
            serial_s.append(took["serial"])
            pool_s.append(took["pool"])
            ratios.append(took["serial"] / took["pool"])
        base = args.episodes / median(serial_s)
        rate = args.episodes / median(pool_s)
        ratio = median(ratios)
        data["runs"][name] = {
            "serial_seconds": serial_s,
            "pool_seconds": pool_s,
            "serial_episodes_per_s": base,
            "pool_episodes_per_s": rate,
            "ratios": ratios,
            "ratio_median": ratio,
            "steps": steps,
            "equal_to_serial": True,
        }
        rows.append([name, "in-process (serial)", "-", f"{base:.1f}", "1.00x"])
        rows.append([name, "Ray pool", 2, f"{rate:.1f}", f"{ratio:.2f}x"])
    data["startup_s"] = startup
    data["chunk_episodes"] = -(-args.episodes // 8)
    pool.close()
    ray.shutdown()

    table = markdown_table(["policy", "run", "actors", "episodes/s", "vs serial"], rows)
    body = (
        f"{args.episodes} episodes ({steps} env steps) of the oracle replay policy on a "
        f"{args.articles}-article generated world; `run_serial` and the 2-actor pool ran "
        f"interleaved, {args.repeat} rounds per policy (order alternating), on a shared 2-core "
        "machine that other jobs were loading (see the load average above): ratios are the "
        "median of the per-round ratios. The pool's trajectories equal the serial run's in "
        f"every round. The pool's actors started in {startup:.1f} s (timed apart); episodes go "
        "to the actors in chunks (one Ray call per chunk).\n\n" + table + "\n"
    )
    print(body)
    write_results("ray", data, body, args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
