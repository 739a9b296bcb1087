"""Retrieval evaluation: how well the snapshot's search finds each task's evidence, with no
agent (``wikigym eval --retrieval``).

For every task with evidence the question, as written, is the query (top ``max(ks)`` of
:meth:`~wikigym.corpora.snapshot.Snapshot.search`). Per level and overall:

- ``passage_recall@k``: the share of the task's evidence passages among the top k, averaged
  over tasks; ``page_recall@k``: the same for the evidence pages (a page counts once however
  many of its passages are hit);
- ``passage_mrr`` and ``page_mrr``: the mean reciprocal rank of the first evidence passage
  (page) within the top ``max(ks)`` (0 when none is there);
- ``hop_recall@k``: for tasks that are chains, whether the question alone finds the page of hop
  1, 2, ...: the hops are the evidence pages in the order the task's oracle first visits them
  (the entity named in the question first, the answer's page last).

Unanswerable tasks (nothing to find) and tasks without evidence are counted, not scored. Users
choose a corpus, passage size or analyzer by these numbers; the outputs hold no timings, so the
same snapshot and TaskSet give the same bytes.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # the CLI imports this module for its options: nothing heavy at import
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.taskset import Task, TaskSet

FORMAT = "wikigym.retrieval/1"
DEFAULT_KS: tuple[int, ...] = (1, 5, 10)
MAX_K = 100
_PAGE_TOOLS = ("open", "find")


def parse_ks(text: str) -> tuple[int, ...]:
    """``"1,5,10"`` -> ``(1, 5, 10)``: sorted, unique, each in 1..100.

    Raises:
        ValueError: Not a comma-separated list of such integers (the message says so).
    """
    try:
        ks = sorted({int(part) for part in text.split(",") if part.strip()})
    except ValueError:
        raise ValueError(f"expected k values like 1,5,10, got {text!r}") from None
    if not ks or ks[0] < 1 or ks[-1] > MAX_K:
        raise ValueError(f"expected k values between 1 and {MAX_K} like 1,5,10, got {text!r}")
    return tuple(ks)


@dataclass(frozen=True)
class TaskRetrieval:
    """One task's search: where its evidence came in the ranking (1-based; None: not found)."""

    task_id: str
    level: str
    passages: tuple[int, ...]
    pages: tuple[int, ...]
    passage_ranks: tuple[int | None, ...]
    page_ranks: tuple[int | None, ...]
    hop_ranks: tuple[int | None, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "task_id": self.task_id,
            "level": self.level,
            "passages": list(self.passages),
            "pages": list(self.pages),
            "passage_ranks": list(self.passage_ranks),
            "page_ranks": list(self.page_ranks),
            "hop_ranks": list(self.hop_ranks),
        }


def hop_pages(task: Task, snapshot: Snapshot) -> list[int]:
    """The task's evidence pages in the order its oracle first visits them (pages the oracle
    never names follow in evidence order): hop 1 is where a search for the question starts."""
    evidence = list(dict.fromkeys(task.evidence.doc_ids))
    if len(evidence) < 2:
        return evidence
    wanted = set(evidence)
    order: list[int] = []
    for call in task.oracle:
        page = call.arguments.get("page") if call.name in _PAGE_TOOLS else None
        if isinstance(page, str | int) and not isinstance(page, bool):
            doc = snapshot.resolve(page)
            if doc in wanted and doc not in order:
                order.append(doc)
    return order + [d for d in evidence if d not in order]


def _rank(hits: Sequence[int], wanted: int) -> int | None:
    for i, h in enumerate(hits, 1):
        if h == wanted:
            return i
    return None


def retrieve(task: Task, snapshot: Snapshot, k: int) -> TaskRetrieval:
    """Search the question and find where the task's evidence ranks (within ``k``)."""
    hits = snapshot.search(task.question, k=k)
    hit_passages = [h.passage_id for h in hits]
    passages = tuple(dict.fromkeys(task.evidence.passage_ids))
    pages = tuple(dict.fromkeys(task.evidence.doc_ids))
    return TaskRetrieval(
        task_id=task.task_id,
        level=task.level or "unknown",
        passages=passages,
        pages=pages,
        passage_ranks=tuple(_rank(hit_passages, p) for p in passages),
        page_ranks=tuple(_page_rank(hits, d) for d in pages),
        hop_ranks=tuple(_page_rank(hits, d) for d in hop_pages(task, snapshot))
        if len(pages) > 1
        else (),
    )


def _page_rank(hits: Sequence[Any], doc: int) -> int | None:
    """The rank (among passages) of the first passage of page ``doc``: recall@k of a page
    counts it found when one of its passages is in the top k."""
    for i, h in enumerate(hits, 1):
        if h.doc_id == doc:
            return i
    return None


def _recall(ranks: Sequence[int | None], k: int) -> float:
    return sum(r is not None and r <= k for r in ranks) / len(ranks)


def _mrr(ranks: Sequence[int | None]) -> float:
    found = [r for r in ranks if r is not None]
    return 1.0 / min(found) if found else 0.0


def _r(x: float) -> float:
    return round(float(x), 6) + 0.0


def group_stats(rows: Sequence[TaskRetrieval], ks: Sequence[int]) -> dict[str, Any]:
    """The metrics of a group of scored tasks (see the module docstring)."""
    n = len(rows)
    out: dict[str, Any] = {"tasks": n}
    with_passages = [r for r in rows if r.passages]
    with_pages = [r for r in rows if r.pages]
    for k in ks:
        out[f"passage_recall@{k}"] = (
            _r(sum(_recall(r.passage_ranks, k) for r in with_passages) / len(with_passages))
            if with_passages
            else None
        )
        out[f"page_recall@{k}"] = (
            _r(sum(_recall(r.page_ranks, k) for r in with_pages) / len(with_pages))
            if with_pages
            else None
        )
    out["passage_mrr"] = (
        _r(sum(_mrr(r.passage_ranks) for r in with_passages) / len(with_passages))
        if with_passages
        else None
    )
    out["page_mrr"] = (
        _r(sum(_mrr(r.page_ranks) for r in with_pages) / len(with_pages)) if with_pages else None
    )
    hops = max((len(r.hop_ranks) for r in rows), default=0)
    out["hop_recall"] = {
        f"@{k}": [
            _r(_recall([r.hop_ranks[j] for r in rows if len(r.hop_ranks) > j], k))
            for j in range(hops)
        ]
        for k in ks
    }
    out["hop_tasks"] = [sum(len(r.hop_ranks) > j for r in rows) for j in range(hops)]
    return out


def evaluate_retrieval(
    snapshot: Snapshot, taskset: TaskSet, ks: Sequence[int] = DEFAULT_KS
) -> tuple[dict[str, Any], list[TaskRetrieval]]:
    """The summary (``summary.json``) and the per-task rankings of a retrieval evaluation."""
    from wikigym.eval.levels import ordered_levels

    rows: list[TaskRetrieval] = []
    unanswerable = no_evidence = 0
    k = max(ks)
    for task in taskset:
        if task.unanswerable:
            unanswerable += 1
        elif not task.evidence.passage_ids and not task.evidence.doc_ids:
            no_evidence += 1
        else:
            rows.append(retrieve(task, snapshot, k))
    levels = ordered_levels(r.level for r in rows)
    summary = {
        "format": FORMAT,
        "snapshot_id": snapshot.snapshot_id,
        "taskset_id": taskset.taskset_id,
        "ks": list(ks),
        "query": "question",
        "tasks": len(taskset),
        "scored": len(rows),
        "unanswerable": unanswerable,
        "no_evidence": no_evidence,
        "levels": {lv: group_stats([r for r in rows if r.level == lv], ks) for lv in levels},
        "overall": group_stats(rows, ks),
    }
    return summary, rows


def _plot(summary: dict[str, Any], out: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ks = summary["ks"]
    groups = [*summary["levels"].items(), ("overall", summary["overall"])]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.4), dpi=100, sharey=True)
    for ax, unit in zip(axes, ("passage", "page"), strict=True):
        for name, stats in groups:
            values = [stats[f"{unit}_recall@{k}"] for k in ks]
            if all(v is None for v in values):
                continue
            style = {"linewidth": 2.5, "color": "black"} if name == "overall" else {}
            ax.plot(ks, [v or 0.0 for v in values], marker="o", label=name, **style)
        ax.set_xscale("log")
        ax.set_xticks(ks)
        ax.set_xticklabels([str(k) for k in ks])
        ax.set_ylim(0.0, 1.0)
        ax.set_xlabel("k (top-k passages)")
        ax.set_title(f"{unit} recall@k (question as query)", fontsize=9)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel("recall")
    axes[1].legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(out, metadata={"Software": None})
    plt.close(fig)


def _markdown(summary: dict[str, Any]) -> str:
    ks = summary["ks"]
    cols = [f"passage R@{k}" for k in ks] + [f"page R@{k}" for k in ks] + ["MRR (p)", "MRR (pg)"]
    lines = [
        "# wikigym retrieval evaluation",
        "",
        f"- snapshot `{summary['snapshot_id'][:16]}`, TaskSet `{summary['taskset_id'][:16]}`",
        f"- {summary['scored']} tasks scored of {summary['tasks']} "
        f"({summary['unanswerable']} unanswerable, {summary['no_evidence']} without evidence); "
        "the question is the query",
        "",
        "| level | tasks | " + " | ".join(cols) + " |",
        "|---|---:|" + "---:|" * len(cols),
    ]

    def cell(v: float | None) -> str:
        return "-" if v is None else f"{v:.3f}"

    for name, s in [*summary["levels"].items(), ("**overall**", summary["overall"])]:
        values = [s[f"passage_recall@{k}"] for k in ks] + [s[f"page_recall@{k}"] for k in ks]
        values += [s["passage_mrr"], s["page_mrr"]]
        lines.append(f"| {name} | {s['tasks']} | " + " | ".join(cell(v) for v in values) + " |")
    hops = summary["overall"]["hop_recall"]
    if summary["overall"]["hop_tasks"]:
        lines += ["", "## Page recall by hop (chains)", "", "| k | " + " | ".join(
            f"hop {j + 1} ({n})" for j, n in enumerate(summary["overall"]["hop_tasks"])
        ) + " |", "|---|" + "---:|" * len(summary["overall"]["hop_tasks"])]  # fmt: skip
        for k in ks:
            lines.append(f"| {k} | " + " | ".join(cell(v) for v in hops[f"@{k}"]) + " |")
    lines += ["", "![recall@k](retrieval.png)", ""]
    return "\n".join(lines)


def write_retrieval_report(
    summary: dict[str, Any], rows: Sequence[TaskRetrieval], out_dir: str | Path
) -> None:
    """Write ``summary.json``, ``tasks.jsonl`` (each task's ranks), ``report.md`` and
    ``retrieval.png`` into ``out_dir``."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "summary.json").write_text(
        json.dumps(summary, indent=2, sort_keys=True) + "\n", encoding="utf-8"
    )
    with (out / "tasks.jsonl").open("w", encoding="utf-8") as f:
        for r in rows:
            f.write(json.dumps(r.to_json(), sort_keys=True) + "\n")
    (out / "report.md").write_text(_markdown(summary), encoding="utf-8")
    _plot(summary, out / "retrieval.png")
