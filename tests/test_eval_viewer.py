"""The episode viewer, two runs side by side and retrieval evaluation.

The page is tested in a real browser: Debian's headless Chromium (installed by .ci/run) loads
it from a file:// URL, runs its scripts and prints the DOM it rendered, which the tests read.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
from html import unescape
from pathlib import Path
from typing import Any

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.default import build_world_snapshot
from wikigym.eval.factory import make_agent
from wikigym.eval.report import write_report
from wikigym.eval.retrieval import evaluate_retrieval, parse_ks
from wikigym.eval.runner import run_eval
from wikigym.eval.stats import paired_difference, wilson
from wikigym.eval.viewer import compare_reports, first_difference, write_run_page
from wikigym.eval.viewer.data import read_report
from wikigym.synth.generate import SynthConfig, generate_tasks
from wikigym.tasks.importers import import_hotpotqa

ROOT = Path(__file__).resolve().parents[1]
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
if CHROMIUM is None and os.environ.get("WIKIGYM_REQUIRE_BROWSER") == "1":
    raise RuntimeError("WIKIGYM_REQUIRE_BROWSER=1 but no chromium: apt-get install chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None, reason="Debian's chromium is not installed (.ci/run installs it)"
)


def data_script(path: Path) -> Any:
    """The JSON argument of a data script ``window.wikigymView.NAME(ARGS);``."""
    text = path.read_text(encoding="utf-8")
    body = text[text.index("(") + 1 : text.rindex(")")]
    if body.startswith('"'):  # chunk("key", {...})
        body = "[" + body + "]"
    return json.loads(body)


def dom(page: Path, fragment: str = "", tmp: Path | None = None) -> str:
    """The DOM Chromium renders for ``page#fragment``, as text (tags dropped)."""
    assert CHROMIUM is not None
    profile = (tmp or page.parent) / f".chromium-{abs(hash(fragment))}"
    out = subprocess.run(
        [
            CHROMIUM,
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
            "--no-first-run",
            f"--user-data-dir={profile}",
            "--virtual-time-budget=15000",
            "--dump-dom",
            page.resolve().as_uri() + fragment,
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    shutil.rmtree(profile, ignore_errors=True)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout


def text_of(html_text: str) -> str:
    html_text = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html_text, flags=re.S)
    return unescape(re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html_text)))


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A small world, 24 synth tasks of every level, and oracle and heuristic reports."""
    root = tmp_path_factory.mktemp("viewer")
    build_world_snapshot(600, 0, root / "world", progress=False)
    snap = Snapshot.open(root / "world")
    tasks = generate_tasks(snap, SynthConfig(difficulty="mixed", n=24, seed=0))
    tasks.save(root / "tasks.jsonl")
    out = {"world": root / "world", "tasks": root / "tasks.jsonl"}
    for name in ("oracle", "heuristic"):
        run = run_eval(
            make_agent(name), root / "tasks.jsonl", root / name, agent_name=name,
            corpus=root / "world",
        )  # fmt: skip
        write_report(run, root / name)
        out[name] = root / name
    return out


def test_every_report_gets_a_viewer_with_each_episode(runs: dict[str, Path]) -> None:
    report = runs["heuristic"]
    assert (report / "index.html").is_file()
    listed = data_script(report / "viewer" / "list.js")
    rows = listed["rows"]
    episodes = [json.loads(x) for x in (report / "episodes.jsonl").read_text().splitlines()]
    assert [r["id"] for r in rows] == [e["task_id"] for e in episodes]
    assert [r["ok"] for r in rows] == [e["success"] for e in episodes]
    key, chunk = data_script(report / "viewer" / "ep-00000.js")
    assert key == "ep-00000"
    first = chunk["episodes"]["0"]
    assert first["question"] and first["steps"] and first["task"]["oracle"]
    assert first["steps"][0]["calls"][0]["name"] == "search"
    # Every passage id an observation shows is in the chunk, with its text.
    shown = {int(m) for s in first["steps"] for m in re.findall(r"\[p(\d+)\]", s["observation"])}
    assert shown and shown <= {int(p) for p in chunk["passages"]}
    assert all(p["text"] for p in chunk["passages"].values())


def test_a_hostile_report_is_data(runs: dict[str, Path], tmp_path: Path) -> None:
    """A report from elsewhere: markup in answers stays text, a trajectory path outside the
    report is not read, a TaskSet of another id is not used."""
    report = tmp_path / "hostile"
    shutil.copytree(runs["heuristic"], report)
    lines = (report / "episodes.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    first["answer"] = '</script><img src=x onerror="document.title=1">'
    first["trajectory"] = "../../../../etc/passwd"
    lines[0] = json.dumps(first)
    (report / "episodes.jsonl").write_text("\n".join(lines) + "\n")
    page = write_run_page(report, tasks=runs["world"] / "manifest.json")
    rows = data_script(report / "viewer" / "list.js")["rows"]
    assert rows[0]["a"].startswith("</script><img")
    _, chunk = data_script(report / "viewer" / "ep-00000.js")
    assert chunk["episodes"]["0"]["problem"] == "trajectory file missing"
    notes = data_script(report / "viewer" / "list.js")["meta"]["notes"]
    assert any("tasks not shown" in n for n in notes)
    if CHROMIUM is not None:
        html_text = dom(page, "#e=0", tmp_path)
        assert "<img" not in html_text.split("<body", 1)[1].replace("&lt;img", "")
        assert "&lt;/script&gt;&lt;img src=x" in html_text  # shown as text


def test_first_difference() -> None:
    a = [("s1", "o1"), ("s2", "o2")]
    assert first_difference(a, a) is None
    assert first_difference(a, [("s1", "o1"), ("x", "o2")]) == 2
    assert first_difference(a, a[:1]) == 2
    assert first_difference([], a) == 1


def test_wilson_known_value() -> None:
    # Newcombe (1998), 81 of 263: 0.2553 to 0.3662.
    low, high = wilson(81, 263)
    assert (round(low, 4), round(high, 4)) == (0.2553, 0.3662)


def test_wilson_holds_the_observed_rate_at_the_ends() -> None:
    """At k == n the upper bound is 1.0 exactly (floating point gave 0.9999999999999999 for
    n = 10, 13, 25, ..., an interval leaving out the rate: the demo's agents plot then drew
    a negative error bar and matplotlib refused it)."""
    for n in range(1, 400):
        for k in range(n + 1):
            low, high = wilson(k, n)
            assert 0.0 <= low <= k / n <= high <= 1.0, (k, n)


def test_agents_plot_with_perfect_and_zero_rates(tmp_path: Path) -> None:
    from wikigym.eval.report import agents_plot

    def summary(k: int, n: int) -> dict[str, object]:
        level = {"success_rate": round(k / n, 4), "successes": k, "episodes": n}
        return {"levels": {"easy": level, "hard": level}, "overall": level}

    out = agents_plot({"oracle": summary(50, 50), "none": summary(0, 50)}, tmp_path / "a.png")
    assert out.stat().st_size > 0


def test_paired_interval_covers_the_true_change() -> None:
    """Coverage of the paired-difference interval, by simulation (n=60 tasks, correlated
    outcomes): close to the nominal 95%."""
    rng = random.Random(0)
    p_a, p_b, trials, covered = 0.45, 0.6, 1500, 0
    for _ in range(trials):
        cells = [0, 0, 0, 0]
        for _ in range(60):
            u = rng.random()
            a = u < p_a
            b = u < p_b if rng.random() < 0.7 else rng.random() < p_b
            cells[
                {(True, True): 0, (True, False): 1, (False, True): 2, (False, False): 3}[(a, b)]
            ] += 1
        true = p_b - p_a
        _, low, high = paired_difference(*cells)
        covered += low <= true <= high
    assert 0.92 <= covered / trials <= 0.99
    diff, low, high = paired_difference(10, 0, 0, 10)
    assert diff == 0.0 and low < 0 < high


def test_compare_counts_and_deltas(runs: dict[str, Path]) -> None:
    a, b = read_report(runs["heuristic"]), read_report(runs["oracle"])
    comparison = compare_reports(a, b)
    overall = comparison["levels"]["overall"]
    assert overall["tasks"] == 24 and overall["b"] == 1.0
    assert overall["fixed"] == sum(not r["success"] for r in a.rows)
    assert overall["broken"] == 0
    low, high = overall["ci95"]
    assert low <= overall["delta"] <= high
    assert sum(d["tasks"] for name, d in comparison["levels"].items() if name != "overall") == 24


def test_view_cli_one_line_errors(runs: dict[str, Path], tmp_path: Path) -> None:
    def run(*argv: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "wikigym", "view", *argv],
            capture_output=True, text=True, cwd=tmp_path, timeout=300,
            env=dict(os.environ, PYTHONPATH=str(ROOT)),
        )  # fmt: skip

    for argv, message in [
        (("/nonexistent",), "is not a folder"),
        ((str(runs["world"]),), "summary.json not found"),
        ((str(runs["oracle"]), str(runs["heuristic"]), str(runs["oracle"])), "one report or two"),
    ]:
        out = run(*argv)
        assert out.returncode == 1 and "Traceback" not in out.stderr, out.stderr
        assert len(out.stderr.strip().splitlines()) == 1 and message in out.stderr
    ok = run(str(runs["heuristic"]), str(runs["oracle"]), "--out", "cmp.html")
    assert ok.returncode == 0, ok.stderr
    assert (tmp_path / "cmp.html").is_file() and (tmp_path / "cmp_files" / "list.js").is_file()
    again = run(str(runs["heuristic"]), str(runs["oracle"]), "--out", "cmp.html")
    assert again.returncode == 1 and "--overwrite" in again.stderr


@needs_chromium
def test_the_page_in_a_real_browser(runs: dict[str, Path], tmp_path: Path) -> None:
    page = runs["heuristic"] / "index.html"
    episodes = [
        json.loads(x) for x in (runs["heuristic"] / "episodes.jsonl").read_text().splitlines()
    ]
    tasks = {
        json.loads(x)["task_id"]: json.loads(x) for x in runs["tasks"].read_text().splitlines()
    }
    # The list, unfiltered: every episode (one page of 100).
    full = text_of(dom(page, "", tmp_path))
    assert f"{len(episodes)} of {len(episodes)} episodes" in full
    # Filters from the URL: level and outcome.
    unsolved_easy = [e for e in episodes if e["level"] == "easy" and not e["success"]]
    filtered = dom(page, "#level=easy&outcome=unsolved", tmp_path)
    assert f"{len(unsolved_easy)} of {len(episodes)} episodes" in text_of(filtered)
    assert len(re.findall(r'<tr class="row ', filtered)) == len(unsolved_easy)
    # One episode: question, gold, the proof, a passage opened by its id.
    i = next(k for k, e in enumerate(episodes) if e["success"])
    task = tasks[episodes[i]["task_id"]]
    pid = task["evidence"]["passage_ids"][0]
    shown = dom(page, f"#e={i}&p={pid}", tmp_path)
    text = text_of(shown)
    assert f"Episode {i}: {task['task_id']}" in text
    assert task["question"] in text and task["answer"] in text
    assert "Task proof" in text and "Oracle path" in text and "Formal query" in text
    assert f'id="passage-{pid}"' in shown  # the passage opened from the URL, with its text
    passage = Snapshot.open(runs["world"]).passage(pid)
    assert passage is not None and passage.text[:60] in text
    assert 'class="pid cited"' in shown  # the answer's citations are marked


@needs_chromium
def test_two_runs_side_by_side_in_a_real_browser(runs: dict[str, Path], tmp_path: Path) -> None:
    from wikigym.eval.viewer import write_compare_page

    page, levels = write_compare_page(runs["heuristic"], runs["oracle"], tmp_path / "cmp.html")
    rows = data_script(tmp_path / "cmp_files" / "list.js")["rows"]
    changed = [r for r in rows if r["change"] != "same"]
    text = text_of(dom(page, "", tmp_path))
    assert f"{len(changed)} of {len(rows)} tasks" in text
    assert f"{levels['overall']['delta']:+.3f}" in text
    target = next(r for r in changed if r["diff"] is not None)
    side = dom(page, f"#t={target['id']}", tmp_path)
    assert side.count('class="episode"') == 2
    assert f"step {target['diff']} ← first difference" in text_of(side)


@needs_chromium
def test_ten_thousand_episodes_load_on_demand(runs: dict[str, Path], tmp_path: Path) -> None:
    """10,000 episodes: the page loads the list and one chunk of transcripts, not all."""
    big = tmp_path / "big"
    shutil.copytree(runs["heuristic"], big)
    lines = (big / "episodes.jsonl").read_text().splitlines()
    with (big / "episodes.jsonl").open("w") as f:
        for i in range(10_000):
            row = json.loads(lines[i % len(lines)])
            row["index"] = i
            f.write(json.dumps(row) + "\n")
    page = write_run_page(big)
    chunks = sorted(p.name for p in (big / "viewer").glob("ep-*.js"))
    assert len(chunks) == 200
    html_text = dom(page, "#e=9999", tmp_path)
    assert "10000 of 10000 episodes" in text_of(html_text)
    assert len(re.findall(r'<tr class="row ', html_text)) == 100  # one page of the list
    loaded = re.findall(r'<script src="viewer/(ep-\d+)\.js"', html_text)
    assert loaded == ["ep-00199"]


def test_retrieval_matches_an_independent_recall_on_hotpotqa(
    shared_data: Path, tmp_path: Path
) -> None:
    """``eval --retrieval`` on the HotpotQA closed world against recall@5 computed here from
    the raw file: each question's supporting titles among its top 5 search hits' titles."""
    source = shared_data / "qa/hotpotqa-distractor-300.jsonl"
    build_snapshot([open_build_source(source, "hotpotqa")], tmp_path / "snap", BuildConfig(),
                   progress=False)  # fmt: skip
    snap = Snapshot.open(tmp_path / "snap")
    taskset = import_hotpotqa(source, snap)
    summary, _ = evaluate_retrieval(snap, taskset, parse_ks("1,5,10"))
    recalls = []
    for line in source.read_text(encoding="utf-8").splitlines():
        row = json.loads(line)
        gold = set(row["supporting_facts"]["title"])
        top = {h.title for h in snap.search(row["question"], k=5)}
        recalls.append(len(gold & top) / len(gold))
    independent = sum(recalls) / len(recalls)
    assert summary["scored"] == 300
    assert math.isclose(summary["overall"]["page_recall@5"], independent, abs_tol=0.01)


def test_retrieval_cli_writes_summary_and_plot(runs: dict[str, Path], tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-m", "wikigym", "eval", "--retrieval", "--tasks", str(runs["tasks"]),
         "--corpus", str(runs["world"]), "--k", "1,3", "--report", str(tmp_path / "r")],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = json.loads((tmp_path / "r" / "summary.json").read_text())
    assert summary["ks"] == [1, 3] and summary["scored"] == 24
    assert {"passage_recall@3", "page_recall@1", "passage_mrr", "hop_recall"} <= set(
        summary["overall"]
    )
    assert (tmp_path / "r" / "retrieval.png").stat().st_size > 1000
    bad = subprocess.run(
        [sys.executable, "-m", "wikigym", "eval", "--retrieval", "--k", "0,5"],
        capture_output=True, text=True, timeout=300, env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )  # fmt: skip
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
