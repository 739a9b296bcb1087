"""TaskSet importers (HotpotQA, NQ-open, JSONL), the HotpotQA closed world, and ``tasks`` CLI."""

from __future__ import annotations

import argparse
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from wikigym.corpora import Snapshot, build_snapshot, open_build_source
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import TaskSetError
from wikigym.tasks import cli as tasks_cli
from wikigym.tasks.importers import (
    import_hotpotqa,
    import_hotpotqa_report,
    import_jsonl,
    import_nq_open,
)
from wikigym.tasks.taskset import Task, TaskSet
from wikigym.tools import format_tool_call

HOTPOT = "qa/hotpotqa-distractor-300.jsonl"


def call(name: str, arguments: dict[str, Any]) -> str:
    return format_tool_call(name, arguments)


def replay(env: WikiSearchEnv, task: Task) -> tuple[float, dict[str, Any]]:
    """Run a task's oracle; the reward and info of the last step."""
    env.reset(seed=0, options={"task_id": task.task_id})
    reward, info, done = 0.0, {}, False
    for c in task.oracle:
        assert not done, f"{task.task_id}: the episode ended before the oracle's last call"
        _, reward, done, trunc, info = env.step(call(c.name, c.arguments))
        assert not trunc and info["tool_error"] is None, (task.task_id, c, info)
    assert done
    return float(reward), info


def hf_rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def to_original(row: dict[str, Any]) -> dict[str, Any]:
    """A Hugging Face layout row in the original HotpotQA layout."""
    sf, ctx = row["supporting_facts"], row["context"]
    return {
        "_id": row["id"],
        "question": row["question"],
        "answer": row["answer"],
        "type": row["type"],
        "level": row["level"],
        "supporting_facts": [[t, i] for t, i in zip(sf["title"], sf["sent_id"], strict=True)],
        "context": [[t, s] for t, s in zip(ctx["title"], ctx["sentences"], strict=True)],
    }


def build(source: Path, out: Path) -> Snapshot:
    build_snapshot([open_build_source(source, "hotpotqa")], out, progress=False)
    return Snapshot.open(out)


@pytest.fixture(scope="module")
def hotpot(shared_data: Path) -> Path:
    return shared_data / HOTPOT


@pytest.fixture(scope="module")
def world(hotpot: Path, tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    """The closed world: the snapshot built from the question file's own paragraphs."""
    return build(hotpot, tmp_path_factory.mktemp("hotpot") / "snap")


@pytest.fixture(scope="module")
def closed(hotpot: Path, world: Snapshot, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The tasks imported with the snapshot, saved as a TaskSet file."""
    out = tmp_path_factory.mktemp("tasks") / "hotpot.jsonl"
    import_hotpotqa(hotpot, world).save(out)
    return out


# ---- HotpotQA without a snapshot ---------------------------------------------------------
def test_hotpotqa_without_snapshot_is_refused_or_marked(hotpot: Path) -> None:
    with pytest.raises(TaskSetError, match=r"evidence of 300 of 300 tasks cannot resolve") as exc:
        import_hotpotqa(hotpot)
    assert "--corpus DIR" in str(exc.value) and "--allow-unresolved" in str(exc.value)
    ts, report = import_hotpotqa_report(hotpot, allow_unresolved=True)
    assert len(report.unresolved_tasks) == 300
    for t in ts:
        assert t.oracle == [] and len(t.evidence.unresolved) == len(t.rubric)
        assert all("no snapshot was given" in u for u in t.evidence.unresolved)


def test_hotpotqa_fields(hotpot: Path) -> None:
    rows = hf_rows(hotpot)
    ts = import_hotpotqa(hotpot, allow_unresolved=True)
    assert len(ts) == len(rows) == 300
    assert ts.snapshot_ids() == set()
    for row, t in zip(rows, ts, strict=True):
        want = (row["id"], row["question"].strip(), row["answer"].strip())  # stripped on import
        assert (t.task_id, t.question, t.answer) == want
        assert t.level == row["level"] and t.difficulty["type"] == row["type"]
        titles = list(dict.fromkeys(row["supporting_facts"]["title"]))
        assert t.evidence.titles == titles and t.difficulty["pages"] == len(titles)
        assert t.evidence.passage_ids == [] and t.oracle == [] and t.snapshot_id is None
        ctx = dict(zip(row["context"]["title"], row["context"]["sentences"], strict=True))
        sf = row["supporting_facts"]
        want = [ctx[title][i].strip() for title, i in zip(sf["title"], sf["sent_id"], strict=True)]
        assert [r.text for r in t.rubric] == want
        assert [r.entities for r in t.rubric] == [[title] for title in sf["title"]]
        assert all(r.passage_ids == [] for r in t.rubric)
    yes_no = [t for t in ts if t.answer_type == "yes/no"]
    assert len(yes_no) == 16  # 11 yes + 5 no in this file
    assert {t.answer for t in yes_no} == {"yes", "no"}
    assert all(t.answer_type == "span" for t in ts if t.answer not in ("yes", "no"))
    assert {t.difficulty["type"] for t in ts} == {"bridge", "comparison"}


def test_hotpotqa_original_layout_json_array(hotpot: Path, world: Snapshot, tmp_path: Path) -> None:
    rows = hf_rows(hotpot)[:25]
    hf = tmp_path / "hf.jsonl"
    hf.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    original = tmp_path / "hotpot_dev_distractor.json"
    original.write_text(json.dumps([to_original(r) for r in rows], indent=1), encoding="utf-8")
    for snapshot in (None, world):
        a = import_hotpotqa(hf, snapshot, allow_unresolved=snapshot is None)
        b = import_hotpotqa(original, snapshot, allow_unresolved=snapshot is None)
        assert [t.canonical_json() for t in a] == [t.canonical_json() for t in b]
        assert a.taskset_id == b.taskset_id


def test_hotpotqa_deterministic(hotpot: Path, world: Snapshot, closed: Path) -> None:
    open_ = import_hotpotqa(hotpot, allow_unresolved=True)
    assert open_.taskset_id == import_hotpotqa(hotpot, allow_unresolved=True).taskset_id
    again = import_hotpotqa(hotpot, world)
    assert again.taskset_id == TaskSet.load(closed).taskset_id
    assert again.taskset_id != open_.taskset_id


@pytest.mark.parametrize(
    "row,message",
    [
        ({"id": "a", "question": "Q?"}, "'answer'"),
        ({"id": "a", "answer": "x"}, "'question'"),
        ({"question": "Q?", "answer": "x"}, "'id' (or '_id')"),
        (
            {"id": "a", "question": "Q?", "answer": "x", "supporting_facts": [["T"]]},
            "supporting_facts",
        ),
        ({"id": "a", "question": "Q?", "answer": "x", "context": {"title": ["T"]}}, "'context'"),
    ],
)
def test_hotpotqa_bad_rows(tmp_path: Path, row: dict[str, Any], message: str) -> None:
    good = {"id": "ok", "question": "Fine?", "answer": "yes"}
    path = tmp_path / "q.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps(row) + "\n", encoding="utf-8")
    with pytest.raises(TaskSetError, match="line 2") as exc:
        import_hotpotqa(path)
    assert message in str(exc.value)


def test_missing_file_and_not_json(tmp_path: Path) -> None:
    with pytest.raises(TaskSetError, match="does not exist"):
        import_hotpotqa(tmp_path / "nope.jsonl")
    bad = tmp_path / "bad.jsonl"
    bad.write_text("this is not json\n", encoding="utf-8")
    with pytest.raises(TaskSetError, match="not JSON"):
        import_nq_open(bad)
    scalar = tmp_path / "scalar.jsonl"
    scalar.write_text('{"question": "a?", "answer": ["b"]}\n[1, 2]\n', encoding="utf-8")
    with pytest.raises(TaskSetError, match=r"line 2.*JSON object"):
        import_nq_open(scalar)
    empty = tmp_path / "empty.json"
    empty.write_text("[]", encoding="utf-8")
    with pytest.raises(TaskSetError, match="no question"):
        import_hotpotqa(empty)


# ---- the closed world --------------------------------------------------------------------
def test_closed_world_resolves_every_fact(hotpot: Path, world: Snapshot) -> None:
    ts, report = import_hotpotqa_report(hotpot, world)
    assert report.supporting_facts == 740
    assert report.unresolved_titles == [] and report.unlocated_facts == []
    assert "0 unresolved titles, 0 unlocated sentences" in report.summary()
    assert ts.snapshot_ids() == {world.snapshot_id}
    for t in ts:
        assert len(t.evidence.doc_ids) == len(t.evidence.titles) == t.difficulty["pages"]
        for doc_id, title in zip(t.evidence.doc_ids, t.evidence.titles, strict=True):
            page = world.page(title)
            assert page is not None and page.doc_id == doc_id
        for entry in t.rubric:
            assert entry.passage_ids, (t.task_id, entry.text)
            passages = [world.passage(p) for p in entry.passage_ids]
            assert all(p is not None and p.title == entry.entities[0] for p in passages)
            # the passages hold the sentence (one passage, or consecutive ones when it spans two)
            joined = " ".join(p.text for p in passages if p is not None)
            assert entry.text in joined
        cited = [p for r in t.rubric for p in r.passage_ids]
        assert t.evidence.passage_ids == list(dict.fromkeys(cited))
        # the oracle opens the supporting pages and cites exactly the evidence passages
        assert t.evidence.unresolved == [] and "unresolved" not in t.canonical_json()
        *opens, answer = t.oracle
        assert opens and all(c.name == "open" for c in opens)
        assert answer.name == "answer" and answer.arguments["text"] == t.answer
        assert answer.arguments["citations"] == [f"p{p}" for p in t.evidence.passage_ids]


def test_closed_world_oracle_replay(world: Snapshot, closed: Path) -> None:
    ts = TaskSet.load(closed)
    chosen = list(ts)[::10]  # 30 tasks, both types
    chosen += [t for t in ts if t.answer_type == "yes/no"][:4]
    assert {t.difficulty["type"] for t in chosen} == {"bridge", "comparison"}
    binary = WikiSearchEnv(corpus=world, tasks=closed, python="off")
    shaped = WikiSearchEnv(corpus=world, tasks=closed, python="off", reward="shaped")
    for task in chosen:
        reward, info = replay(binary, task)
        assert reward == 1.0, (task.task_id, info)
        assert info["reward_metrics"]["em"] == 1.0
        _, info = replay(shaped, task)
        comps, metrics = info["reward_components"], info["reward_metrics"]
        assert comps["outcome"] == 1.0 and comps["citation"] == 1.0, (task.task_id, info)
        assert comps["penalty"] == 0.0
        assert info["citations"] == [f"p{p}" for p in task.evidence.passage_ids]
        assert metrics["rubric_supported"] == metrics["rubric_items"] == len(task.rubric)
        assert info["taskset_id"] == ts.taskset_id and info["snapshot_id"] == world.snapshot_id


def test_long_page_and_numeric_title(hotpot: Path, tmp_path: Path) -> None:
    """A page longer than one ``open`` part, and a title that reads as a doc id."""
    rows = hf_rows(hotpot)
    sentences = [s for r in rows[:40] for para in r["context"]["sentences"] for s in para]
    long_para = sentences[:400]
    year = ["1998 was a common year.", " It came after 1997."]
    row = {
        "_id": "long-1",
        "question": "Which year came after 1997 in this made-up set?",
        "answer": "1998",
        "type": "bridge",
        "level": "hard",
        "supporting_facts": [["Long page", 350], ["1998", 1]],
        "context": [["Long page", long_para], ["1998", year]],
    }
    src = tmp_path / "long.json"
    src.write_text(json.dumps([row]), encoding="utf-8")
    snap = build(src, tmp_path / "snap")
    ts, report = import_hotpotqa_report(src, snap)
    assert report.unresolved_titles == report.unlocated_facts == report.unresolved_tasks == []
    task = ts[0]
    opens = [c.arguments for c in task.oracle if c.name == "open"]
    year_doc = snap.sql("SELECT doc_id FROM articles WHERE title = '1998'").column(0)[0].as_py()
    assert opens[-1] == {"page": f"d{year_doc}"}  # "1998" alone would open doc 1998
    assert opens[0]["page"] == "Long page" and opens[0].get("part", 1) > 1
    assert len(task.rubric) == 2
    env = WikiSearchEnv(corpus=snap, tasks=ts, python="off", reward="shaped")
    _, info = replay(env, task)
    assert info["reward_components"]["outcome"] == 1.0
    assert info["reward_components"]["citation"] == 1.0


def test_out_of_range_sentence_is_refused_or_marked(
    hotpot: Path, world: Snapshot, tmp_path: Path
) -> None:
    row = hf_rows(hotpot)[0]
    row["supporting_facts"]["sent_id"][1] = 99
    path = tmp_path / "one.jsonl"
    path.write_text(json.dumps(row) + "\n", encoding="utf-8")
    title = row["supporting_facts"]["title"][1]
    n = len(row["context"]["sentences"][row["context"]["title"].index(title)])
    reason = f"sent_id 99 is out of range ({n} sentences)"
    with pytest.raises(TaskSetError, match=r"1 of 1 tasks have evidence that does not resolve"):
        import_hotpotqa(path, world)
    ts, report = import_hotpotqa_report(path, world, allow_unresolved=True)
    assert report.unlocated_facts == [(row["id"], title, 99, reason)]
    task = ts[0]
    assert len(task.rubric) == 1 and task.rubric[0].entities == [
        row["supporting_facts"]["title"][0]
    ]
    assert task.evidence.doc_ids == [world.resolve(t) for t in task.evidence.titles]
    # half the evidence is not there: no oracle is invented, the task is marked
    assert task.oracle == [] and task.evidence.unresolved == [f"{title} (sentence 99): {reason}"]


def test_missing_page_is_refused_or_marked(hotpot: Path, tmp_path: Path) -> None:
    row = {
        "_id": "m-1",
        "question": "Which page is missing?",
        "answer": "this one",
        "supporting_facts": [["Here", 0], ["Missing page", 0]],
        "context": [["Here", ["Here is a page."]], ["Elsewhere", ["Another page."]]],
    }
    src = tmp_path / "m.json"
    src.write_text(json.dumps([row]), encoding="utf-8")
    snap = build(src, tmp_path / "snap")
    with pytest.raises(
        TaskSetError, match=r"1 supporting titles with no page, 0 sentences not found, e\.g\. m-1"
    ):
        import_hotpotqa(src, snap)
    ts, report = import_hotpotqa_report(src, snap, allow_unresolved=True)
    assert report.unresolved_titles == [("m-1", "Missing page")]
    assert ts[0].oracle == [] and ts[0].snapshot_id == snap.snapshot_id
    assert ts[0].evidence.unresolved == [
        "Missing page (sentence 0): no page with this title in the snapshot"
    ]


# ---- NQ-open and generic JSONL -----------------------------------------------------------
def test_nq_open(tmp_path: Path) -> None:
    path = tmp_path / "nq-open-dev.jsonl"
    lines = [
        {"question": "who wrote the origin of species", "answer": ["Charles Darwin", "Darwin"]},
        {"question": "how many players on a rugby union team", "answer": ["15", "fifteen", "15"]},
        {"question": "who wrote the origin of species", "answer": ["Darwin"]},
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ts = import_nq_open(path)
    h = hashlib.sha256(b"who wrote the origin of species").hexdigest()[:16]
    assert [t.task_id for t in ts][0::2] == [f"nq-{h}", f"nq-{h}-2"]
    assert (ts[0].answer, ts[0].aliases) == ("Charles Darwin", ["Darwin"])
    assert (ts[1].answer, ts[1].aliases) == ("15", ["fifteen"])
    assert ts[1].golds == ("15", "fifteen")
    assert all(t.source == "nq-open" and t.snapshot_id is None for t in ts)
    assert import_nq_open(path).taskset_id == ts.taskset_id
    path.write_text(json.dumps({"question": "q?", "answer": []}) + "\n", encoding="utf-8")
    with pytest.raises(TaskSetError, match=r"line 1.*'answer'"):
        import_nq_open(path)


def test_jsonl(tmp_path: Path) -> None:
    path = tmp_path / "mine.jsonl"
    lines = [
        {"id": "a1", "question": "Capital of France?", "answer": "Paris", "level": "easy", "x": 1},
        {"task_id": "a2", "question": "2+2?", "answer": 4, "aliases": ["four"]},
        {
            "question": "Largest planet?",
            "answer": ["Jupiter", "planet Jupiter"],
            "aliases": ["Jupiter"],
        },
    ]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    ts = import_jsonl(path)
    assert [t.task_id for t in ts][:2] == ["a1", "a2"]
    assert ts[2].task_id == "q-" + hashlib.sha256(b"Largest planet?").hexdigest()[:16]
    assert ts[0].level == "easy" and ts[1].level is None
    assert (ts[1].answer, ts[1].aliases) == ("4", ["four"])
    assert (ts[2].answer, ts[2].aliases) == ("Jupiter", ["planet Jupiter"])


@pytest.mark.parametrize(
    "line,match",
    [
        (
            {"answer": "x"},
            r"line 2 in bad.jsonl: field 'question' must be a non-empty string, got nothing",
        ),
        ({"question": "q?"}, r"line 2 in bad.jsonl: field 'answer'"),
        ({"question": "q?", "answer": ""}, r"line 2 in bad.jsonl: field 'answer'"),
        (
            {"question": "q?", "answer": "x", "aliases": "y"},
            r"line 2 in bad.jsonl: field 'aliases'",
        ),
        ({"question": "q?", "answer": "x", "id": "ok"}, r"duplicate task_id 'ok'"),
    ],
)
def test_jsonl_errors(tmp_path: Path, line: dict[str, Any], match: str) -> None:
    path = tmp_path / "bad.jsonl"
    first = {"id": "ok", "question": "fine?", "answer": "yes"}
    path.write_text(json.dumps(first) + "\n" + json.dumps(line) + "\n", encoding="utf-8")
    with pytest.raises(TaskSetError, match=match):
        import_jsonl(path)


# ---- CLI ---------------------------------------------------------------------------------
def run_cli(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="wikigym")
    tasks_cli.add_parser(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return int(args.func(args))


def test_cli_import_and_info(
    hotpot: Path, world: Snapshot, closed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "hotpot.parquet"
    assert (
        run_cli(
            [
                "tasks",
                "import",
                "hotpotqa",
                str(hotpot),
                "--out",
                str(out),
                "--corpus",
                str(world.path),
            ]
        )
        == 0
    )
    printed = capsys.readouterr().out
    ts = TaskSet.load(out)
    assert ts.taskset_id == TaskSet.load(closed).taskset_id
    assert f"imported 300 tasks -> {out}" in printed and ts.taskset_id in printed
    assert "0 unresolved titles" in printed
    assert run_cli(["tasks", "info", str(out), "--json"]) == 0
    info = json.loads(capsys.readouterr().out)
    assert info["tasks"] == 300 and info["taskset_id"] == ts.taskset_id
    assert info["levels"] == {"hard": 300} and info["with_oracle"] == 300
    assert info["answer_types"] == {"span": 284, "yes/no": 16}
    assert run_cli(["tasks", "info", str(out)]) == 0
    text = capsys.readouterr().out
    assert "levels       hard 300" in text and ts.taskset_id in text


def test_cli_other_formats_and_errors(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src = tmp_path / "nq.jsonl"
    src.write_text(json.dumps({"question": "who?", "answer": ["me"]}) + "\n", encoding="utf-8")
    out = tmp_path / "nq-tasks.jsonl"
    assert run_cli(["tasks", "import", "nq-open", str(src), "--out", str(out)]) == 0
    assert TaskSet.load(out).taskset_id in capsys.readouterr().out
    assert run_cli(["tasks", "import", "jsonl", str(src), "--out", str(tmp_path / "j.jsonl")]) == 0
    with pytest.raises(TaskSetError, match=r"\.jsonl or \.parquet"):
        run_cli(["tasks", "import", "jsonl", str(src), "--out", str(tmp_path / "t.txt")])
    with pytest.raises(TaskSetError, match="only used by the hotpotqa"):
        run_cli(
            ["tasks", "import", "nq-open", str(src), "--out", str(out), "--corpus", str(tmp_path)]
        )


def test_wikigym_main_wiring(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from wikigym import cli

    if "tasks_cli" not in Path(cli.__file__).read_text(encoding="utf-8"):
        pytest.skip("tasks_cli is not wired into wikigym.cli yet")
    src = tmp_path / "q.jsonl"
    src.write_text(json.dumps({"question": "who?", "answer": "me"}) + "\n", encoding="utf-8")
    out = tmp_path / "t.jsonl"
    assert cli.main(["tasks", "import", "jsonl", str(src), "--out", str(out)]) == 0
    assert (
        cli.main(["tasks", "import", "jsonl", str(tmp_path / "missing.jsonl"), "--out", str(out)])
        == 1
    )
    assert "does not exist" in capsys.readouterr().err


# ---- imported tasks against the wrong snapshot (issue 9, item 5) -----------------------------
def main_cli(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """``wikigym ARGV`` in process: exit status, stdout, stderr."""
    from wikigym.cli import main

    capsys.readouterr()
    status = main(argv)
    out, err = capsys.readouterr()
    return status, out, err


def one_line(err: str) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    return lines[0]


def test_wrong_corpus_import_then_oracle_eval(
    hotpot: Path, enwiki_snapshot: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "wrong.jsonl"
    argv = ["tasks", "import", "hotpotqa", str(hotpot), "--out", str(out)]
    status, _, err = main_cli([*argv, "--corpus", str(enwiki_snapshot.path)], capsys)
    line = one_line(err)
    assert status == 1 and not out.exists()
    assert "300 tasks have evidence that does not resolve" in line and "--allow-unresolved" in line
    status, _, err = main_cli(argv, capsys)  # no corpus at all
    assert status == 1 and "cannot resolve without a snapshot" in one_line(err)

    status, printed, _ = main_cli(
        [*argv, "--corpus", str(enwiki_snapshot.path), "--allow-unresolved"], capsys
    )
    assert status == 0 and "without reachable evidence (no oracle)" in printed
    ts = TaskSet.load(out)
    assert ts.snapshot_ids() == {enwiki_snapshot.snapshot_id}
    marked = [t for t in ts if t.evidence.unresolved]
    assert len(marked) == 300  # 599 of 740 supporting titles have no page in the excerpt
    assert all(t.oracle == [] for t in marked)  # no oracle is invented
    assert all(t.oracle and t.oracle[-1].arguments["citations"] for t in ts if t not in marked)

    report = tmp_path / "rep"
    status, printed, err = main_cli(
        ["eval", "--tasks", str(out), "--corpus", str(enwiki_snapshot.path), "--agent", "oracle",
         "--episodes", "12", "--report", str(report), "--quiet"], capsys,
    )  # fmt: skip
    line = one_line(err)
    assert status == 1 and "have no oracle" in line and "synth" not in line
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert summary["oracle_failures"] == []
    assert summary["oracle_missing"] and summary["overall"]["success_rate"] < 1.0
    ran = summary["overall"]["episodes"]
    assert summary["overall"]["success_rate"] == (ran - len(summary["oracle_missing"])) / ran
    md = (report / "report.md").read_text(encoding="utf-8")
    assert "TASKS WITHOUT AN ORACLE" in md and "synthesizer" not in md


def test_tasks_for_another_snapshot_are_refused_up_front(
    world: Snapshot,
    closed: Path,
    enwiki_snapshot: Snapshot,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import gymnasium as gym

    from wikigym.envs.replay import RecordTrajectory, replay
    from wikigym.tasks.defaults import check_tasks_fit_snapshot

    ids = (world.snapshot_id, enwiki_snapshot.snapshot_id)
    with pytest.raises(TaskSetError, match=rf"{ids[0]} \(300 of 300 tasks.*{ids[1]}"):
        gym.make("WikiSearch-v1", corpus=str(enwiki_snapshot.path), tasks=str(closed))
    status, _, err = main_cli(
        ["eval", "--tasks", str(closed), "--corpus", str(enwiki_snapshot.path), "--agent",
         "oracle", "--report", str(tmp_path / "rep"), "--quiet"], capsys,
    )  # fmt: skip
    line = one_line(err)
    assert status == 1 and ids[0] in line and ids[1] in line and "synth" not in line
    with pytest.raises(TaskSetError, match="the default world"):
        check_tasks_fit_snapshot(TaskSet.load(closed), enwiki_snapshot, default_world=True)
    from wikigym.trainers.adapter import EnvSpec  # train grpo resolves through the same check

    with pytest.raises(TaskSetError, match=rf"{ids[0]} .*{ids[1]}"):
        EnvSpec(corpus=str(enwiki_snapshot.path), tasks=str(closed)).make_kwargs()

    # replay: the same check refuses a trajectory pointed at another corpus
    env = RecordTrajectory(
        gym.make("WikiSearch-v1", corpus=str(world.path), tasks=str(closed), python="off"),
        tmp_path / "traj",
    )
    task = TaskSet.load(closed)[0]
    env.reset(seed=0, options={"task_id": task.task_id})
    for c in task.oracle:
        env.step(call(c.name, c.arguments))
    assert env.last_path is not None and replay(env.last_path) == (len(task.oracle), None)
    lines = [json.loads(x) for x in env.last_path.read_text(encoding="utf-8").splitlines()]
    lines[0]["env_kwargs"]["corpus"] = str(enwiki_snapshot.path)
    moved = tmp_path / "moved.jsonl"
    moved.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    status, _, err = main_cli(["replay", str(moved)], capsys)
    assert status == 1 and ids[0] in one_line(err) and ids[1] in err


def test_closed_world_oracle_eval_succeeds(
    world: Snapshot, closed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    status, printed, _ = main_cli(
        ["eval", "--tasks", str(closed), "--corpus", str(world.path), "--agent", "oracle",
         "--episodes", "30", "--report", str(tmp_path / "rep"), "--quiet"], capsys,
    )  # fmt: skip
    assert status == 0 and "success 1.000" in printed


def test_oracle_citing_unseen_evidence_is_a_failure(
    world: Snapshot, closed: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An oracle that answers the gold but cites a passage it never opened proves nothing."""
    ts = TaskSet.load(closed)
    good, bad = ts[0], ts[1]
    *opens, answer = bad.oracle
    shown = {p for t in (bad,) for p in t.evidence.passage_ids}
    other = next(p for p in ts[2].evidence.passage_ids if p not in shown)
    cites = {**answer.arguments, "citations": [f"p{other}"]}
    broken = bad.model_copy(
        update={"oracle": [*opens, answer.model_copy(update={"arguments": cites})]}
    )
    path = TaskSet([good, broken], name="broken").save(tmp_path / "broken.jsonl")
    report = tmp_path / "rep"
    status, _, err = main_cli(
        ["eval", "--tasks", str(path), "--corpus", str(world.path), "--agent", "oracle",
         "--report", str(report), "--quiet"], capsys,
    )  # fmt: skip
    line = one_line(err)
    assert status == 1 and f"oracle failed 1 task(s) ({bad.task_id})" in line
    assert "wikigym.import/1" in line and "synth" not in line
    summary = json.loads((report / "summary.json").read_text(encoding="utf-8"))
    assert summary["oracle_failures"] == [bad.task_id]
    assert summary["overall"]["success_rate"] == 1.0  # the answers were right; the proof was not
