"""Observation size with and without context management over scripted 60-turn episodes.

Three deterministic scripted agents (different mixes of search/open/find) play 60 turns of
WikiSearch-v1 (``max_steps=60``, no answer) on a real snapshot (the enwiki excerpt plus the
wikitext folder of the shared data, built once under ``benchmarks/work``), observed through
``TranscriptObservation`` (everything verbatim) and ``ManagedContext`` with budgets of 8,000
and 16,000 characters. Reported: observation size at turns 10/30/60 in characters and in
whitespace tokens (``len(text.split())``; tiktoken is not installed here), the wrapper's own
time per step (wrapper step minus the env's step), and a plot of size by turn.

Run from the repository root::

    python benchmarks/bench_context.py [--corpus SNAPSHOT_DIR] [--turns 60]

Writes ``benchmarks/results/context.{json,md,png}``.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import gymnasium as gym

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import (
    RESULTS,
    WORK,
    command_line,
    markdown_table,
    median,
    percentile,
    shared_data,
    write_results,
)

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.envs.wrappers import ManagedContext, TranscriptObservation
from wikigym.tools import format_tool_call

WORDS = ("history", "theory", "population", "climate", "war", "science", "music", "language")
CHECKPOINTS = (10, 30, 60)
BUDGETS = (8000, 16000)


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


def ensure_snapshot() -> Path:
    """The enwiki excerpt + wikitext snapshot, built once under benchmarks/work."""
    out = WORK / "snap-context-enwiki-wikitext"
    if (out / "manifest.json").is_file():
        return out
    data = shared_data()
    sources = [
        open_build_source(data / "wiki" / "enwiki-excerpt-206pages.xml.bz2"),
        open_build_source(data / "wiki" / "wikitext"),
    ]
    print(f"building {out} ...", flush=True)
    build_snapshot(sources, out, BuildConfig(), progress=False, overwrite=True)
    return out


# ---- scripted agents: each maps (turn, snapshot facts) to an action, never reading obs ----
def _titles(snap: Snapshot) -> list[str]:
    rows = snap.sql("SELECT title FROM articles ORDER BY doc_id").to_pylist()
    return [r["title"] for r in rows]


def balanced_agent(snap: Snapshot, turns: int) -> list[str]:
    """search, open, find in turn; every find notes the search's top passage id."""
    titles = _titles(snap)
    out = []
    for t in range(turns):
        block = t // 3
        title = titles[(block * 7) % len(titles)]
        word = WORDS[block % len(WORDS)]
        query = f"{title} {word}"
        if t % 3 == 0:
            out.append(call("search", query=query, k=5))
        elif t % 3 == 1:
            out.append(call("open", page=title))
        else:
            top = snap.search(query, 1)
            note = f"Noting p{top[0].passage_id}. " if top else ""
            out.append(note + call("find", page=title, text=word))
    return out


def searcher_agent(snap: Snapshot, turns: int) -> list[str]:
    """Four searches (k=8, mostly dead ends) then one open of the last search's top page."""
    titles = _titles(snap)
    out = []
    for t in range(turns):
        word = WORDS[t % len(WORDS)]
        other = WORDS[(t * 3 + 1) % len(WORDS)]
        if t % 5 < 4:
            title = titles[(t * 11) % len(titles)]
            out.append(call("search", query=f"{title} {word} {other}", k=8))
        else:
            title = titles[((t - 1) * 11) % len(titles)]
            out.append(call("open", page=title))
    return out


def reader_agent(snap: Snapshot, turns: int) -> list[str]:
    """open, open part 2, find, find (citing a passage), search: long page outputs."""
    titles = _titles(snap)
    out = []
    for t in range(turns):
        block = t // 5
        title = titles[(block * 5 + 2) % len(titles)]
        word = WORDS[(block + t) % len(WORDS)]
        step = t % 5
        if step == 0:
            out.append(call("open", page=title))
        elif step == 1:
            out.append("Reading on. " + call("open", page=title, part=2))
        elif step in (2, 3):
            page = snap.page(title)
            cite = ""
            if step == 3 and page is not None and page.sections and page.sections[0].passage_ids:
                cite = f"The lead p{page.sections[0].passage_ids[0]} matters. "
            out.append(cite + call("find", page=title, text=word))
        else:
            out.append(call("search", query=f"{title} {word}", k=5))
    return out


AGENTS: dict[str, Callable[[Snapshot, int], list[str]]] = {
    "balanced": balanced_agent,
    "searcher": searcher_agent,
    "reader": reader_agent,
}


class _TimedEnv(gym.Wrapper[str, str, str, str]):
    """Records the seconds the inner env spends in ``step`` (to subtract from the wrapper's)."""

    def __init__(self, env: gym.Env[str, str]) -> None:
        super().__init__(env)
        self.last_step_s = 0.0

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        start = time.perf_counter()
        out = self.env.step(action)
        self.last_step_s = time.perf_counter() - start
        return out


def make(snap: Snapshot, config: str, turns: int) -> tuple[gym.Env[str, str], _TimedEnv]:
    inner = _TimedEnv(WikiSearchEnv(corpus=snap, max_steps=turns, python="off"))
    if config == "transcript":
        return TranscriptObservation(inner), inner
    return ManagedContext(inner, int(config.split("-")[1])), inner


def words(text: str) -> int:
    return len(text.split())


def run_episode(snap: Snapshot, config: str, actions: list[str]) -> dict[str, Any]:
    env, inner = make(snap, config, len(actions))
    obs, _ = env.reset(seed=0)
    chars, tokens, own_ms = [len(obs)], [words(obs)], []
    for action in actions:
        start = time.perf_counter()
        obs, _, terminated, _, _ = env.step(action)
        total = time.perf_counter() - start
        own_ms.append((total - inner.last_step_s) * 1000)
        chars.append(len(obs))
        tokens.append(words(obs))
        if terminated:
            break
    return {
        "chars": chars,
        "tokens": tokens,
        "wrapper_ms": own_ms,
        "last_actions_shown": obs.count("] action:\n"),
        "last_extracts_shown": obs.count("] result (extract):\n"),
        "last_dead_end_stubs": obs.count("results (not used)"),
    }


def plot(results: dict[str, dict[str, dict[str, Any]]], path: Path, cmd: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, len(results), figsize=(5 * len(results), 4.2), sharey=True)
    styles = {"transcript": "-", "managed-8000": "--", "managed-16000": ":"}
    for ax, (agent, configs) in zip(axes, results.items(), strict=True):
        for config, data in configs.items():
            ax.plot(range(len(data["chars"])), data["chars"], styles[config], label=config)
        for budget in BUDGETS:
            ax.axhline(budget, color="grey", linewidth=0.5)
        ax.set_title(f"agent: {agent}")
        ax.set_xlabel("turn")
        ax.set_yscale("log")
        ax.grid(True, which="both", linewidth=0.3)
    axes[0].set_ylabel("observation size (characters, log)")
    axes[0].legend()
    fig.suptitle(f"Observation size by turn  ({cmd})", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--corpus", type=Path, help="snapshot directory (default: built here)")
    parser.add_argument("--turns", type=int, default=60)
    args = parser.parse_args(argv)
    snap_dir = args.corpus or ensure_snapshot()
    snap = Snapshot.open(snap_dir)
    configs = ["transcript", *(f"managed-{b}" for b in BUDGETS)]
    results: dict[str, dict[str, dict[str, Any]]] = {}
    rows = []
    for agent, script in AGENTS.items():
        actions = script(snap, args.turns)
        results[agent] = {}
        for config in configs:
            data = run_episode(snap, config, actions)
            results[agent][config] = data
            at = [c for c in CHECKPOINTS if c < len(data["chars"])]
            ms = data["wrapper_ms"]
            rows.append(
                [
                    agent,
                    config,
                    *(data["chars"][c] for c in at),
                    *(data["tokens"][c] for c in at),
                    median(ms),
                    percentile(ms, 95),
                    max(ms),
                    data["last_actions_shown"],
                    data["last_extracts_shown"],
                    data["last_dead_end_stubs"],
                ]
            )
            print(f"{agent:9} {config:14} chars@{at}={[data['chars'][c] for c in at]}", flush=True)
    headers = [
        "agent",
        "wrapper",
        *(f"chars@{c}" for c in CHECKPOINTS),
        *(f"tokens@{c}" for c in CHECKPOINTS),
        "wrapper ms/step p50",
        "p95",
        "max",
        "actions shown @end",
        "extracts @end",
        "dead-end stubs @end",
    ]
    png = RESULTS / "context.png"
    RESULTS.mkdir(parents=True, exist_ok=True)
    plot(results, png, command_line())
    body = (
        f"Snapshot: `{snap_dir}` ({snap.num_articles} articles, {snap.num_passages} passages, "
        f"id {snap.snapshot_id[:12]}). {args.turns}-turn episodes (max_steps={args.turns}, "
        "seed 0, no answer) of three scripted agents (see the module docstring); the same "
        "actions for each wrapper. Sizes are of the observation returned at that turn (turn 0 "
        "= reset). Tokens = `len(text.split())`. Wrapper time = wrapper step minus the env's "
        "step (the env's tool work is not counted). The last three columns count, in the final "
        "observation, the turns whose action is shown, the older results shown as extracts "
        "and the dead-end stubs among them.\n\n"
        + markdown_table(headers, rows)
        + f"\n\nPlot: `benchmarks/results/context.png` (made by the same command: "
        f"`{command_line()}`).\n"
    )
    data = {
        "snapshot": str(snap_dir),
        "snapshot_id": snap.snapshot_id,
        "turns": args.turns,
        "checkpoints": list(CHECKPOINTS),
        "budgets_chars": list(BUDGETS),
        "token_counter": "whitespace split",
        "results": results,
    }
    path = write_results("context", data, body)
    print(f"wrote {path}, {png}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
