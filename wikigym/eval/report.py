"""``summary.json``, ``episodes.jsonl``, ``report.md`` and plots of an evaluation run.

``summary.json`` and ``episodes.jsonl`` hold no timings and no paths outside the report
folder, so the same inputs give byte-identical files; timings go to ``report.md`` only.
Rates are rounded to 6 decimals.

Per level (and overall): ``episodes``, ``success_rate`` (exact match with the answer or an
alias), ``mean_f1``, ``mean_steps``, ``tool_error_rate`` (steps whose action produced a
tool or parse error, over all steps), ``truncation_rate``, ``mean_reward``,
``hallucinations`` (per type: total count) and ``tool_errors`` (per code: total count).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from wikigym.eval.levels import ordered_levels
from wikigym.eval.runner import HALLUCINATION_TYPES, EpisodeRecord, EvalRun

FORMAT = "wikigym.eval/1"
PLOTS: tuple[str, ...] = (
    "success_by_level.png",
    "f1_by_level.png",
    "steps_by_level.png",
    "tool_errors_by_level.png",
    "hallucinations.png",
)


def _r(x: float) -> float:
    return round(float(x), 6) + 0.0


def level_stats(records: list[EpisodeRecord]) -> dict[str, Any]:
    """The statistics of a group of episodes (see the module docstring)."""
    n = len(records)
    steps = sum(r.steps for r in records)
    tool_errors: dict[str, int] = {}
    for r in records:
        for code, count in r.tool_errors.items():
            tool_errors[code] = tool_errors.get(code, 0) + count
    return {
        "episodes": n,
        "successes": sum(r.success for r in records),
        "success_rate": _r(sum(r.success for r in records) / n) if n else 0.0,
        "mean_f1": _r(sum(r.f1 for r in records) / n) if n else 0.0,
        "mean_steps": _r(steps / n) if n else 0.0,
        "tool_error_rate": _r(sum(r.steps_with_tool_error for r in records) / steps)
        if steps
        else 0.0,
        "truncation_rate": _r(sum(r.truncated for r in records) / n) if n else 0.0,
        "mean_reward": _r(sum(r.reward for r in records) / n) if n else 0.0,
        "hallucinations": {
            h: sum(r.hallucinations.get(h, 0) for r in records) for h in HALLUCINATION_TYPES
        },
        "tool_errors": dict(sorted(tool_errors.items())),
    }


def oracle_failed(record: EpisodeRecord) -> bool:
    """Whether an oracle episode failed: no success, or a citation of a passage it was never
    shown or that does not exist (an oracle must show its evidence, not only the answer)."""
    cited_badly = record.hallucinations.get("citation_unseen", 0) or record.hallucinations.get(
        "citation_nonexistent", 0
    )
    return not record.success or bool(cited_badly)


def summarize(run: EvalRun) -> dict[str, Any]:
    """The content of ``summary.json``."""
    levels = ordered_levels(r.level for r in run.records)
    summary: dict[str, Any] = {
        "format": FORMAT,
        "agent": run.agent,
        "snapshot_id": run.snapshot_id,
        "taskset_id": run.taskset_id,
        "seed": run.seed,
        "max_steps": run.max_steps,
        "reward": run.reward,
        "levels": {lv: level_stats([r for r in run.records if r.level == lv]) for lv in levels},
        "overall": level_stats(run.records),
    }
    if run.agent == "oracle":
        # A task without an oracle (evidence not reachable) is reported as such, not as an
        # oracle failure, and never as a success.
        missing = set(run.no_oracle)
        summary["oracle_failures"] = [
            r.task_id for r in run.records if oracle_failed(r) and r.task_id not in missing
        ]
        summary["oracle_missing"] = list(run.no_oracle)
    return summary


def _dump(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, sort_keys=True, indent=2) + "\n"


def _plots(summary: dict[str, Any], out_dir: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    levels = list(summary["levels"])
    stats = summary["levels"]
    paths = []
    bars = [
        ("success_by_level.png", "success_rate", "success rate", (0.0, 1.0)),
        ("f1_by_level.png", "mean_f1", "mean F1", (0.0, 1.0)),
        ("steps_by_level.png", "mean_steps", "mean steps", None),
        ("tool_errors_by_level.png", "tool_error_rate", "tool-error rate (per step)", (0.0, 1.0)),
    ]
    for name, key, label, ylim in bars:
        fig, ax = plt.subplots(figsize=(5, 3.2), dpi=100)
        values = [stats[lv][key] for lv in levels]
        ax.bar(levels, values, color="#4c72b0")
        for x, v in enumerate(values):
            ax.text(x, v, f"{v:.2f}", ha="center", va="bottom", fontsize=8)
        ax.set_ylabel(label)
        ax.set_xlabel("level")
        ax.set_title(f"{label} by level ({summary['agent']})", fontsize=9)
        if ylim is not None:
            ax.set_ylim(*ylim)
        fig.tight_layout()
        fig.savefig(out_dir / name, metadata={"Software": None})
        plt.close(fig)
        paths.append(out_dir / name)
    fig, ax = plt.subplots(figsize=(6, 3.2), dpi=100)
    width = 0.8 / max(len(levels), 1)
    for i, lv in enumerate(levels):
        counts = [stats[lv]["hallucinations"][h] for h in HALLUCINATION_TYPES]
        ax.bar([x + i * width for x in range(len(HALLUCINATION_TYPES))], counts, width, label=lv)
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(HALLUCINATION_TYPES))])
    ax.set_xticklabels([h.replace("_", "\n") for h in HALLUCINATION_TYPES], fontsize=8)
    ax.set_ylabel("count")
    ax.set_title(f"hallucinations by type ({summary['agent']})", fontsize=9)
    most = max((stats[lv]["hallucinations"][h] for lv in levels for h in HALLUCINATION_TYPES),
               default=0)  # fmt: skip
    ax.set_ylim(0, max(1, most) * 1.15)  # counts: never a negative axis, even when all are 0
    from matplotlib.ticker import MaxNLocator

    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    if most == 0:
        ax.text(0.5, 0.5, "no hallucinations in any episode", transform=ax.transAxes,
                ha="center", va="center", fontsize=10, color="#555555")  # fmt: skip
    elif levels:
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out_dir / "hallucinations.png", metadata={"Software": None})
    plt.close(fig)
    paths.append(out_dir / "hallucinations.png")
    return paths


def _markdown(summary: dict[str, Any], run: EvalRun) -> str:
    lines = [
        f"# wikigym eval: {summary['agent']}",
        "",
        f"- snapshot: `{summary['snapshot_id'][:16]}`, TaskSet: `{run.taskset_name}` "
        f"(`{summary['taskset_id'][:16]}`)",
        f"- episodes: {summary['overall']['episodes']}, seed {summary['seed']}, "
        f"max steps {summary['max_steps']}, reward `{summary['reward']}`",
        f"- wall time: {run.seconds:.1f} s "
        f"({run.seconds / max(len(run.records), 1):.2f} s per episode)",
        "",
        "| level | episodes | success | mean F1 | mean steps | tool-error rate | truncated |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rows = [*summary["levels"].items(), ("**overall**", summary["overall"])]
    for lv, s in rows:
        lines.append(
            f"| {lv} | {s['episodes']} | {s['success_rate']:.3f} | {s['mean_f1']:.3f} | "
            f"{s['mean_steps']:.2f} | {s['tool_error_rate']:.3f} | {s['truncation_rate']:.3f} |"
        )
    lines += [
        "",
        "## Hallucinations (counts)",
        "",
        "| level | " + " | ".join(HALLUCINATION_TYPES) + " |",
    ]
    lines.append("|---" + "|---:" * len(HALLUCINATION_TYPES) + "|")
    for lv, s in rows:
        counts = " | ".join(str(s["hallucinations"][h]) for h in HALLUCINATION_TYPES)
        lines.append(f"| {lv} | {counts} |")
    lines += ["", "## Plots", ""]
    lines += [f"![{p[:-4]}]({p})" for p in PLOTS]
    failed = [
        r for r in run.records if (oracle_failed(r) if run.agent == "oracle" else not r.success)
    ]
    if run.agent == "oracle" and run.no_oracle:
        lines += [
            "",
            f"## TASKS WITHOUT AN ORACLE ({len(run.no_oracle)})",
            "",
            "These tasks carry no oracle trajectory (imported questions without resolved "
            "evidence: NQ-open, JSONL, or HotpotQA with --allow-unresolved): nothing shows "
            "they can be solved on this snapshot.",
            "",
            *(f"- `{task_id}`" for task_id in run.no_oracle),
        ]
        failed = [r for r in failed if r.task_id not in set(run.no_oracle)]
    if run.agent == "oracle" and failed:
        lines += [
            "",
            f"## ORACLE FAILURES ({len(failed)})",
            "",
            "The oracle replays each task's own trajectory; every failure below means the task's "
            "oracle, answer or evidence is inconsistent with the snapshot (a bug of the "
            "generator or importer that made the task).",
            "",
        ]
    elif failed:
        lines += ["", f"## Unsolved episodes ({len(failed)}, first 50)", ""]
    for r in failed[:50] if run.agent != "oracle" else failed:
        lines.append(
            f"- `{r.task_id}` ({r.level}): answered {r.answer!r}, expected {r.golds[0]!r}; "
            f"{r.steps} steps{', truncated' if r.truncated else ''}; [trajectory]({r.trajectory})"
        )
    return "\n".join(lines) + "\n"


def write_report(run: EvalRun, out_dir: str | Path, *, viewer: bool = True) -> dict[str, Any]:
    """Write ``summary.json``, ``episodes.jsonl``, ``report.md``, the plots and (``viewer``)
    ``index.html``, the episode viewer (:mod:`wikigym.eval.viewer`).

    Returns:
        The summary (as written to ``summary.json``).
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    summary = summarize(run)
    (out_dir / "summary.json").write_text(_dump(summary), encoding="utf-8")
    with (out_dir / "episodes.jsonl").open("w", encoding="utf-8") as f:
        for r in run.records:
            f.write(json.dumps(r.to_json(), ensure_ascii=False, sort_keys=True) + "\n")
    _plots(summary, out_dir)
    (out_dir / "report.md").write_text(_markdown(summary, run), encoding="utf-8")
    if viewer:
        from wikigym.eval.viewer import write_run_page

        write_run_page(out_dir)  # index.html: the episodes, read in a browser
    return summary


def agents_plot(summaries: dict[str, dict[str, Any]], out: str | Path) -> Path:
    """Success rate by level of several agents side by side, with 95% intervals (the demo's
    oracle and heuristic): one PNG."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from wikigym.eval.stats import wilson

    levels = ordered_levels(lv for s in summaries.values() for lv in s["levels"])
    groups = [*levels, "overall"]
    width = 0.8 / max(len(summaries), 1)
    fig, ax = plt.subplots(figsize=(7, 3.4), dpi=100)
    for i, (name, summary) in enumerate(summaries.items()):
        stats = [summary["levels"].get(lv) or summary["overall"] for lv in levels]
        stats.append(summary["overall"])
        rates = [s["success_rate"] for s in stats]
        bounds = [wilson(s["successes"], s["episodes"]) for s in stats]
        # Never below 0: a rate is rounded for the report, its interval is not.
        low = [max(0.0, r - b[0]) for r, b in zip(rates, bounds, strict=True)]
        high = [max(0.0, b[1] - r) for r, b in zip(rates, bounds, strict=True)]
        xs = [x + (i - (len(summaries) - 1) / 2) * width for x in range(len(groups))]
        ax.bar(xs, rates, width, yerr=[low, high], capsize=3, label=name)
        for x, r in zip(xs, rates, strict=True):
            ax.text(x, r + 0.02, f"{r:.2f}", ha="center", va="bottom", fontsize=7)
    ax.set_xticks(range(len(groups)))
    ax.set_xticklabels(groups)
    ax.set_ylim(0.0, 1.12)
    ax.set_ylabel("success rate")
    ax.set_title("success by level, 95% intervals (Wilson)", fontsize=9)
    ax.legend(fontsize=8, loc="upper right")
    fig.tight_layout()
    out = Path(out)
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)
    return out
