"""The reference agent: given the query's structure (never the answer, the evidence or the graph),
it resolves every node through the env's tools under a step budget (issue 36).

It must not be floored where the heuristic is (hard), it must tell the levels apart, it
reads what pages state (its reader against the world's exact facts), it is deterministic, and
``synth calibrate --agent reference`` uses it.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikigym.corpora.snapshot import Snapshot
from wikigym.eval.reader import PageText, read_values, sentence_states
from wikigym.eval.reference import ReferenceAgent
from wikigym.eval.runner import HIDDEN_ANSWER, query_view, run_eval
from wikigym.synth.calibrate import Calibration
from wikigym.synth.cli import main as synth_main
from wikigym.synth.generate import SynthConfig, generate_tasks
from wikigym.synth.solving import SEARCH_BUDGET, Lit
from wikigym.tasks.defaults import default_snapshot
from wikigym.tasks.taskset import TaskSet


@pytest.fixture(scope="module")
def snap() -> Snapshot:
    return default_snapshot(progress=False)


@pytest.fixture(scope="module")
def levels(snap: Snapshot, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("ref")
    out = {}
    for level, n in (("easy", 30), ("hard", 60), ("phd", 60)):
        tasks = generate_tasks(snap, SynthConfig(difficulty=level, n=n, seed=0))
        out[level] = tasks.save(root / f"{level}.jsonl")
    return out


def _run(path: Path, out: Path, steps: int = SEARCH_BUDGET) -> list[bool]:
    run = run_eval(ReferenceAgent(max_steps=steps), path, out, agent_name="reference",
                   max_steps=steps)  # fmt: skip
    return [r.success for r in run.records]


def test_it_is_told_the_query_and_nothing_that_gives_the_answer(levels: dict[str, Path]) -> None:
    task = TaskSet.load(levels["hard"])[0]
    seen = query_view(task)
    assert seen.query == task.query and seen.question == task.question
    assert seen.answer == HIDDEN_ANSWER and not seen.aliases and not seen.oracle
    assert not seen.evidence.facts and not seen.rubric and not seen.difficulty
    assert seen.answer_type is None  # an unanswerable task looks like any other


def test_it_solves_easy_is_not_floored_at_hard_and_tells_hard_from_phd(
    levels: dict[str, Path], tmp_path: Path
) -> None:
    easy = _run(levels["easy"], tmp_path / "e")
    hard = _run(levels["hard"], tmp_path / "h")
    phd = _run(levels["phd"], tmp_path / "p")
    assert sum(easy) / len(easy) >= 0.9, sum(easy)
    # The heuristic solves about 1% of hard; the planner a good share, and far less of phd.
    assert sum(hard) / len(hard) >= 0.25, sum(hard)
    assert sum(phd) / len(phd) < sum(hard) / len(hard) - 0.2, (sum(phd), sum(hard))


def test_it_is_deterministic(levels: dict[str, Path], tmp_path: Path) -> None:
    a = run_eval(ReferenceAgent(), levels["hard"], tmp_path / "a", agent_name="reference",
                 max_steps=SEARCH_BUDGET, episodes=8)  # fmt: skip
    b = run_eval(ReferenceAgent(), levels["hard"], tmp_path / "b", agent_name="reference",
                 max_steps=SEARCH_BUDGET, episodes=8)  # fmt: skip
    for ra, rb in zip(a.records, b.records, strict=True):
        ta = (tmp_path / "a" / ra.trajectory).read_text(encoding="utf-8")
        tb = (tmp_path / "b" / rb.trajectory).read_text(encoding="utf-8")
        steps = [json.loads(x).get("action") for x in ta.splitlines()]
        assert steps == [json.loads(x).get("action") for x in tb.splitlines()]


def test_it_abstains_on_questions_with_no_answer(snap: Snapshot, tmp_path: Path) -> None:
    tasks = generate_tasks(snap, SynthConfig(difficulty="medium", n=20, seed=1, unanswerable=0.5))
    path = tasks.save(tmp_path / "u.jsonl")
    run = run_eval(ReferenceAgent(), path, tmp_path / "r", agent_name="reference",
                   max_steps=SEARCH_BUDGET)  # fmt: skip
    by_id = {t.task_id: t for t in tasks}
    abstained = [r for r in run.records if by_id[r.task_id].unanswerable]
    assert abstained and sum(r.success for r in abstained) >= len(abstained) // 2


def test_its_reader_finds_what_the_world_pages_state(snap: Snapshot) -> None:
    """Against the world's exact facts: the value read off a page's passages is the fact's
    object for nearly every fact of a sample of relations."""
    rows = snap.sql(
        "SELECT subject_doc_id AS d, relation AS r, object AS o, value_type AS t FROM facts "
        "WHERE relation IN ('born_in', 'birth_date', 'died_in', 'nationality', 'population', "
        "'founded', 'author', 'headquarters', 'capital', 'mayor') ORDER BY fact_id LIMIT 400"
    ).to_pylist()
    right = 0
    for row in rows:
        page = snap.page(int(row["d"]))
        assert page is not None
        text = PageText(page.title, tuple((p.passage_id, p.text) for p in page.passages),
                        tuple(k.target_title for k in page.links))  # fmt: skip
        got = [x for x, _ in read_values(text, row["r"])]
        want = row["o"]
        if row["t"] == "date":
            right += any(isinstance(x, Lit) and x.measure == float(want[:4]) for x in got)
        elif row["t"] == "number":
            right += any(isinstance(x, Lit) and x.measure == float(want) for x in got)
        else:
            right += want in got
    assert right >= 0.95 * len(rows), (right, len(rows))


def test_a_sentence_names_its_page_as_subject_not_object() -> None:
    """ "Zimosk is twinned with Moskbaheim" on Zimosk's page does not make Zimosk its own
    twin (the reader used to say so)."""
    text = "Zimosk is twinned with Moskbaheim."
    assert sentence_states("Zimosk", text, "twinned_with", "Moskbaheim")
    assert not sentence_states("Zimosk", text, "twinned_with", "Zimosk")


def test_synth_calibrate_runs_it(levels: dict[str, Path], tmp_path: Path, capsys) -> None:
    tasks = TaskSet(list(TaskSet.load(levels["easy"]))[:6])
    path = tasks.save(tmp_path / "t.jsonl")
    out = tmp_path / "cal.jsonl"
    assert synth_main(["calibrate", str(path), "--agent", "reference", "--k", "1",
                       "--out", str(out)]) == 0  # fmt: skip
    printed = capsys.readouterr().out
    assert "easy" in printed and "95% CI" in printed
    cal = [Calibration.of_task(t) for t in TaskSet.load(out)]
    assert all(c is not None and c.agent == "reference" for c in cal)
    assert all(c.max_steps == SEARCH_BUDGET for c in cal if c is not None)
