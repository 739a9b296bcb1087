"""The total form (wikigym/synth/forms/total.py): the sum of one measure over a described set.

Opt-in: the default generator (``wikigym.synth/6``) never drafts it, so its TaskSets stay
byte for byte (tests/test_synth_generator_version.py); asked for, its tasks are proved,
minimal, worded and solved by their oracle like every other form.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError
from wikigym.synth.drafts import question_form
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.total import Total
from wikigym.synth.generate import SynthConfig, generate_tasks, opt_in_forms
from wikigym.synth.graph import KnowledgeGraph, graph_of
from wikigym.synth.node import node_type
from wikigym.synth.query import (
    Entity,
    Intersect,
    IsA,
    Project,
    closed_world_relations,
    forms_of,
    from_json,
    hops,
    to_json,
    unwrap,
)
from wikigym.synth.stats import taskset_stats
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.defaults import default_snapshot
from wikigym.tasks.taskset import TaskSet


@pytest.fixture(scope="module")
def snap() -> Snapshot:
    return default_snapshot(progress=False)


@pytest.fixture(scope="module")
def g(snap: Snapshot) -> KnowledgeGraph:
    return graph_of(snap)


@pytest.fixture(scope="module")
def totals(snap: Snapshot) -> TaskSet:
    return generate_tasks(snap, SynthConfig(difficulty="medium", n=200, seed=4, forms=("total",)))


def _located_cities(g: KnowledgeGraph) -> tuple[int, list[int]]:
    """A country and its cities (2 or more), every city with a population."""
    ev = Evaluator(g)
    for country in sorted(g.entity_object_ids("located_in").tolist()):
        cities = Intersect((IsA("city"), Project("located_in", Entity(country), inverse=True)))
        members = sorted(ev.eval(cities))
        if len(members) >= 2 and all(ev.measure("population", m) is not None for m in members):
            return country, members  # type: ignore[return-value]
    raise AssertionError("no country with two measured cities in the embedded world")


def test_a_total_is_the_sum_of_its_members_measures(g: KnowledgeGraph) -> None:
    country, cities = _located_cities(g)
    ev = Evaluator(g)
    located = Project("located_in", Entity(country, g.titles[country]), inverse=True)
    root = Total("population", Intersect((IsA("city"), located)))
    want = math.fsum(ev.measure("population", c) or 0.0 for c in cities)
    (got,) = ev.eval(root)
    assert float(got) == pytest.approx(want) and got == root.answer_text(g, got).replace(",", "")
    # The evidence: each city's membership and the population that was added.
    rows = ev.witness(root, got)
    assert {g.f_subj[r] for r in rows if g.f_rel[r] == "population"} == set(cities)
    assert hops(root) == 2 and "total" in forms_of(root)
    assert closed_world_relations(root) == ["located_in", "population"]


def test_no_total_when_a_member_has_no_measure(g: KnowledgeGraph) -> None:
    ev = Evaluator(g)
    people = [p for p in g.member_ids("person").tolist() if ev.measure("population", p) is None]
    some = Intersect((IsA("person"), Project("born_in", Entity(g.f_obj[0]), inverse=True)))
    assert people and ev.eval(Total("population", some)) == frozenset()
    assert ev.eval(Total("population", IsA("no such kind"))) == frozenset()


def test_it_round_trips_and_is_registered() -> None:
    root = Total(
        "population", Intersect((IsA("city"), Project("located_in", Entity(3, "X"), True)))
    )
    assert from_json(to_json(root)) == root and to_json(root)["op"] == "total"
    assert node_type("total") is Total and question_form("total").opt_in_weight
    with pytest.raises(SynthError, match="malformed 'total'"):
        from_json({"op": "total", "arg": {"op": "isa", "kind": "city"}})


def test_it_is_drafted_only_on_request(snap: Snapshot) -> None:
    assert "total" not in opt_in_forms(SynthConfig())
    plain = generate_tasks(snap, SynthConfig(difficulty="medium", n=40, seed=3))
    assert not any("total" in forms_of(unwrap(t.query)) for t in plain)


def test_asked_for_its_tasks_are_proved_worded_and_solved(snap: Snapshot, totals: TaskSet) -> None:
    made = [t for t in totals if t.difficulty["form"] == "total"]
    assert len(made) >= 2, [t.difficulty["form"] for t in totals]
    for t in made:
        root = unwrap(t.query)
        assert t.answer_type == "number" and t.level == "medium"
        assert t.question.startswith("What is the ") and t.question.endswith("?")
        assert "{" not in t.question and "  " not in t.question
        assert t.difficulty["hops"] == 2 and t.difficulty["effective_hops"] == 2
        assert float(t.answer.replace(",", "")) > 0
        assert isinstance(root, Total) and root.relation in closed_world_relations(root)
    # Every task re-proved over the snapshot: unique sum, minimal, evidence, oracle replay.
    assert verify_taskset(totals, snap) == []
    stats = taskset_stats(totals)
    assert stats["forms_by_level"]["medium"]["total"] == len(made)


def test_a_tampered_total_fails_verify(snap: Snapshot, totals: TaskSet) -> None:
    t = next(t for t in totals if t.difficulty["form"] == "total")
    wrong = str(int(float(t.answer.replace(",", ""))) + 1)
    bad = TaskSet([t.model_copy(update={"answer": wrong, "aliases": []})])
    assert any("is not the query's answer" in f.reason for f in verify_taskset(bad, snap))


def test_the_mix_with_it_adds_its_weight(snap: Snapshot) -> None:
    from wikigym.synth.generate import level_mix

    names, weights = level_mix("medium", ("total",))
    assert names[-1] == "total" and math.isclose(sum(weights), 1.0)
    assert level_mix("easy", ("total",))[0] == level_mix("easy")[0]  # no weight at easy
    from wikigym.synth.generate import FORM_MIX

    assert np.isclose(weights[-1], 0.05 / (sum(FORM_MIX["medium"].values()) + 0.05))
