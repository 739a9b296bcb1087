"""The partial-name form (wikigym/synth/forms/initial.py): "whose surname begins with the letter
G" (issue 36: a clue a search cannot take, a reader decides at a glance)."""

from __future__ import annotations

import pytest

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError
from wikigym.eval.reference import ReferenceAgent
from wikigym.synth.drafts import question_form
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.initial import Initial, initial_of
from wikigym.synth.generate import FORM_MIX, SynthConfig, generate_tasks
from wikigym.synth.graph import graph_of
from wikigym.synth.node import node_type
from wikigym.synth.query import forms_of, from_json, to_json, unwrap
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.defaults import default_snapshot
from wikigym.tasks.taskset import TaskSet


@pytest.fixture(scope="module")
def snap() -> Snapshot:
    return default_snapshot(progress=False)


def test_its_set_is_the_titles_with_that_initial(snap: Snapshot) -> None:
    g = graph_of(snap)
    titles = snap.sql("SELECT doc_id AS d, title AS t FROM articles").to_pylist()
    want = {int(r["d"]) for r in titles if r["t"].split(" (")[0].split()[-1][:1] == "G"}
    assert Evaluator(g).eval(Initial("surname", "G")) == frozenset(want) and want
    want = {int(r["d"]) for r in titles if r["t"][:1] == "K"}
    assert Evaluator(g).eval(Initial("name", "K")) == frozenset(want)
    assert initial_of("Battle of Fivholt (1627)", "surname") == "F"


def test_it_round_trips_and_is_refused_when_malformed() -> None:
    node = Initial("surname", "G")
    assert from_json(to_json(node)) == node and node_type("initial") is Initial
    assert question_form("partial_name").special
    with pytest.raises(SynthError, match="one letter"):
        from_json({"op": "initial", "part": "surname", "letter": "Gr"})
    with pytest.raises(SynthError, match="one letter"):
        from_json({"op": "initial", "part": "nickname", "letter": "G"})


def test_the_default_mix_drafts_it_and_its_tasks_verify(snap: Snapshot) -> None:
    assert "partial_name" in FORM_MIX["phd"]
    tasks = generate_tasks(snap, SynthConfig(difficulty="hard", n=60, seed=0))
    made = [t for t in tasks if "partial_name" in forms_of(unwrap(t.query))]
    assert made
    for t in made:
        assert " the letter " in t.question and t.difficulty["fuzzy_clues"] >= 1
    assert verify_taskset(TaskSet(made), snap) == []


def test_a_searcher_tests_it_without_a_tool_call() -> None:
    agent = ReferenceAgent()
    plan = agent.holds(Initial("surname", "G"), "Galen Gromsavel")
    try:
        next(plan)
    except StopIteration as done:
        assert done.value is True
    else:
        raise AssertionError("an initial needs no page")
