"""synth on real Wikipedia pages: easy to hard questions from typed infobox facts, proved."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.infobox_values import parse_date
from wikigym.corpora.vocabulary import vocabulary
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.synth import SynthConfig, SynthError, generate_tasks, verify_taskset
from wikigym.synth.cli import main as synth_main
from wikigym.synth.graph import graph_of
from wikigym.synth.query import Project, relations_of, unwrap
from wikigym.synth.templates import has_phrasing, relation_text
from wikigym.tasks.taskset import Task, TaskSet
from wikigym.tools import format_tool_call


@pytest.fixture(scope="module")
def snap(enwiki_snapshot: Snapshot) -> Snapshot:
    return enwiki_snapshot


REAL = ("infobox", "lead", "category", "wikidata")


def _sources_ok(source: str | None) -> bool:
    """A real task's source names the sources of its evidence, in the vocabulary's order."""
    parts = (source or "").split("+")
    return bool(parts) and all(p in REAL for p in parts) and parts == sorted(parts, key=REAL.index)


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_real_tasks_are_proved(snap: Snapshot, level: str) -> None:
    ts = generate_tasks(snap, SynthConfig(difficulty=level, n=10, seed=0))
    assert len(ts) == 10
    assert all(_sources_ok(t.source) and t.level == level for t in ts)
    assert verify_taskset(ts, snap) == []
    env = WikiSearchEnv(corpus=snap, tasks=ts, python="off", max_steps=20)
    for t in ts:
        env.reset(options={"task_id": t.task_id})
        reward = 0.0
        for c in t.oracle:
            action = format_tool_call(c.name, c.arguments)
            _, reward, _, _, info = env.step(action)
            assert info["tool_error"] is None
        assert reward == 1.0, t.task_id


_NUMBER = re.compile(r"^\d{1,3}(,\d{3})*(\.\d+)?$")
_DATE_SURFACE = re.compile(r"^(\d{1,2} )?[A-Z][a-z]+ \d{3,4}$|^\d{3,4}$")


def _evidence_ok(t: Task) -> None:
    """Some evidence is a passage that states a fact of the answer; a fact stated in no
    passage says where it is stated (its category line or Wikidata statement)."""
    facts = t.evidence.facts
    assert any(f.passage_id is not None for f in facts), t.question
    for f in facts:
        assert f.source in REAL
        if f.passage_id is None:
            prefix = {"category": "Category:", "infobox": "| ", "wikidata": "Q"}[f.source]
            assert f.statement and f.statement.startswith(prefix)
        else:
            assert f.statement is None


def test_real_excerpt_makes_hard_tasks(snap: Snapshot) -> None:
    """Categories, lead sentences and every value of a field make hard tasks of the
    206-page excerpt (none before: infobox facts alone linked too few of its entities)."""
    ts = generate_tasks(snap, SynthConfig(difficulty="hard", n=10, seed=0))
    assert len(ts) == 10 and verify_taskset(ts, snap) == []
    for t in ts:
        _evidence_ok(t)
    assert {s for t in ts for s in (t.source or "").split("+")} >= {"infobox", "category"}


@pytest.mark.slow
def test_real_excerpt_makes_phd_tasks(
    snap: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """phd tasks of a 206-page real excerpt, made and proved by the commands a user runs
    (issue 35: at least 5 of 20). synth/6 asks phd for a description no search of the
    snapshot surfaces (issue 36), which a snapshot this small rarely drafts: 1 within 2,000
    attempts a slot, 6 within the default 20,000."""
    out = tmp_path / "phd.jsonl"
    args = ["generate", "--difficulty", "phd", "--n", "20", "--up-to", "--corpus", str(snap.path)]
    assert synth_main([*args, "--out", str(out)]) == 0
    ts = TaskSet.load(out)
    assert len(ts) >= 5 and f"{len(ts)} of up to 20 tasks" in capsys.readouterr().out
    assert synth_main(["verify", str(out), "--corpus", str(snap.path)]) == 0
    assert f"{len(ts)} of {len(ts)} tasks verified" in capsys.readouterr().out
    for t in ts:
        _evidence_ok(t)
        assert t.level == "phd" and t.difficulty["unsurfaced"] >= 1


def test_up_to_keeps_what_a_real_dump_yields(
    snap: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real excerpt's count of easy questions is not known in advance: with ``--up-to`` the
    count asked for is a cap, and the tasks made are those an exact run of that many makes
    (same taskset id); without it the same call fails, naming how many it made."""
    cap = 5000
    out = tmp_path / "easy.jsonl"
    args = ["generate", "--difficulty", "easy", "--n", str(cap), "--corpus", str(snap.path)]
    assert synth_main([*args, "--up-to", "--attempts", "300", "--out", str(out)]) == 0
    capped = TaskSet.load(out)
    assert 0 < len(capped) < cap
    assert f"{len(capped)} of up to {cap} tasks" in capsys.readouterr().out
    exact = SynthConfig(difficulty="easy", n=len(capped), seed=0, attempts_per_task=300)
    assert generate_tasks(snap, exact).taskset_id == capped.taskset_id
    more = SynthConfig(difficulty="easy", n=len(capped) + 1, seed=0, attempts_per_task=300)
    with pytest.raises(SynthError, match=f"made only {len(capped)} easy task"):
        generate_tasks(snap, more)


def test_a_cap_is_not_a_licence_for_an_empty_file(
    snap: Snapshot, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No task at all is the one-line error, and no file is written."""
    out = tmp_path / "none.jsonl"
    argv = ["generate", "--difficulty", "phd", "--n", "3", "--up-to", "--attempts", "5"]
    assert synth_main([*argv, "--corpus", str(snap.path), "--out", str(out)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "made no phd task" in err[0] and "--attempts" in err[0]
    assert not out.exists()


def test_a_value_spelt_in_two_cases_is_one_value(snap: Snapshot) -> None:
    """Ayn Rand's infobox says "Writer" and her categories "writers": a question about
    American writers who died in the 1980s must count her (it once named Allan Dwan, whose
    only "writer" is a category's, as the one answer)."""
    g = graph_of(snap)
    doc = {
        r["title"]: r["doc_id"] for r in snap.sql("SELECT title, doc_id FROM articles").to_pylist()
    }
    writers = g.subjects("occupation", "writer")
    assert {doc["Ayn Rand"], doc["Allan Dwan"], doc["Aldous Huxley"]} <= writers
    keys = [g.lit_keys[i] for i in range(len(g.lit_keys))]
    assert len({k.casefold() for k in keys}) == len(keys)


def test_japanese_excerpt_makes_hard_tasks(shared_data: Path, tmp_path: Path) -> None:
    src = open_build_source(shared_data / "wiki/jawiki-excerpt-204articles.xml.bz2")
    build_snapshot([src], tmp_path / "ja", BuildConfig(), progress=False)
    ja = Snapshot.open(tmp_path / "ja")
    ts = generate_tasks(ja, SynthConfig(difficulty="hard", n=5, seed=0))
    assert len(ts) == 5 and verify_taskset(ts, ja) == []
    for t in ts:
        _evidence_ok(t)


def test_a_category_line_alone_is_never_the_evidence(snap: Snapshot) -> None:
    ts = generate_tasks(snap, SynthConfig(difficulty="easy", n=6, seed=1))
    t = ts[0]
    unstated = [f.model_copy(update={"passage_id": None}) for f in t.evidence.facts]
    bad = t.model_copy(update={"evidence": t.evidence.model_copy(update={"facts": unstated})})
    problems = [f.reason for f in verify_taskset(TaskSet([bad], name="x"), snap)]
    assert "no evidence fact is stated in a passage" in problems


@pytest.mark.parametrize("level", ["easy", "medium"])
def test_real_questions_use_vocabulary_relations_only(snap: Snapshot, level: str) -> None:
    ts = generate_tasks(snap, SynthConfig(difficulty=level, n=12, seed=3))
    assert len(ts) == 12
    vocab = vocabulary()
    raw_keys = [
        r["key"]
        for r in snap.sql("SELECT DISTINCT key FROM facts WHERE NOT typed ORDER BY key").to_pylist()
    ]
    # Keys that are not words (gini_year, leader_title2, widthus, meanelev) must never show.
    odd = [k.replace("_", " ") for k in raw_keys if "_" in k or any(c.isdigit() for c in k)]
    odd += ["widthus", "meanelev", "leader title", "links to"]
    for t in ts:
        root = unwrap(t.query)
        relations = relations_of(root)
        assert relations, t.question
        for rel in relations:  # typed vocabulary relations only, each with its phrasing
            assert rel in vocab.relations and has_phrasing(rel), (t.question, rel)
        question = t.question.lower()
        # A raw key spelled like a typed relation the query uses ("birth date"), or like
        # words of that relation's own phrasing ("per capita" of "nominal GDP per capita"),
        # is that phrasing ("Which has the earliest birth date: ...?").
        phrasings = " ".join(
            " ".join((*relation_text(r).nouns, *relation_text(r).clauses)) for r in relations
        ).lower()
        shown = [
            k
            for k in odd
            if k.replace(" ", "_") not in relations
            and not re.search(rf"\b{re.escape(k)}\b", phrasings)
        ]
        assert not [k for k in shown if re.search(rf"\b{re.escape(k)}\b", question)], t.question
        # Answer types parse: dates are dates, numbers are numbers.
        if t.answer_type == "date":
            assert _DATE_SURFACE.match(t.answer) and parse_date(t.answer), t.answer
        if t.answer_type == "number":
            assert _NUMBER.match(t.answer), t.answer
        if isinstance(root, Project) and not root.inverse:
            value = vocab.relations[root.relation].value
            if value in ("date", "number"):
                assert t.answer_type == value, (t.question, t.answer, t.answer_type)
