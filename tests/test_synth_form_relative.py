"""The relative-time form (wikigym/synth/forms/relative.py): "born no more than ten years
after X was founded" (issue 36: fuzzier clues, read off another page first)."""

from __future__ import annotations

import pytest

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError
from wikigym.synth.drafts import question_form
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.relative import Relative
from wikigym.synth.generate import FORM_MIX, SynthConfig, generate_tasks
from wikigym.synth.graph import graph_of
from wikigym.synth.node import node_type
from wikigym.synth.query import Entity, forms_of, from_json, hops, measures, to_json, unwrap
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.defaults import default_snapshot
from wikigym.tasks.taskset import TaskSet


@pytest.fixture(scope="module")
def snap() -> Snapshot:
    return default_snapshot(progress=False)


@pytest.fixture(scope="module")
def tasks(snap: Snapshot) -> TaskSet:
    return generate_tasks(snap, SynthConfig(difficulty="phd", n=60, seed=0))


def test_its_set_is_a_plain_count_of_the_facts(snap: Snapshot) -> None:
    g = graph_of(snap)
    rows = snap.sql(
        "SELECT subject_doc_id AS d, object AS o FROM facts WHERE relation = 'founded' AND object >= '1750' "
        "ORDER BY fact_id LIMIT 1"
    ).to_pylist()
    city, year = int(rows[0]["d"]), int(rows[0]["o"][:4])
    node = Relative("birth_date", "founded", Entity(city, g.titles[city]), 0, 10)
    born = snap.sql(
        "SELECT DISTINCT subject_doc_id AS d, object AS o FROM facts WHERE relation = 'birth_date'"
    ).to_pylist()
    want = {int(r["d"]) for r in born if year <= int(r["o"][:4]) <= year + 10}
    assert Evaluator(g).eval(node) == frozenset(want) and want
    assert hops(node) == 1 and measures(node)["obfuscated_values"] == 1
    assert forms_of(node) == ["entity", "relative_time"]
    assert not node.open_world()


def test_it_round_trips_and_is_registered() -> None:
    node = Relative("birth_date", "founded", Entity(3, "X"), -5, -1)
    assert from_json(to_json(node)) == node and node_type("relative") is Relative
    assert question_form("relative_time").special
    with pytest.raises(SynthError, match="lo <= hi"):
        from_json({**to_json(node), "lo": 3, "hi": 1})


def test_the_default_mix_drafts_it_and_its_tasks_verify(snap: Snapshot, tasks: TaskSet) -> None:
    assert "relative_time" in FORM_MIX["phd"] and "relative_time" in FORM_MIX["hard"]
    made = [t for t in tasks if "relative_time" in forms_of(unwrap(t.query))]
    assert made, [t.difficulty["form"] for t in tasks]
    for t in made:
        assert " years after " in t.question or " years before " in t.question, t.question
        assert t.difficulty["fuzzy_clues"] >= 1
    assert verify_taskset(TaskSet(made), snap) == []
