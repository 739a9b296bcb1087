"""The list form (wikigym/synth/forms/listing.py): a set-valued answer in the order of a
measure, "Which three novels have X as their author? List them from the earliest ..." (issue
36: set-valued answers and aggregation)."""

from __future__ import annotations

import pytest

from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.metrics import best_match
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.listing import Listed, list_key, parse_list_key
from wikigym.synth.generate import FORM_MIX, SynthConfig, generate_tasks
from wikigym.synth.graph import graph_of
from wikigym.synth.node import node_type
from wikigym.synth.query import (
    Entity,
    Intersect,
    IsA,
    Project,
    closed_world_relations,
    from_json,
    to_json,
)
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.defaults import default_snapshot
from wikigym.tasks.taskset import TaskSet


@pytest.fixture(scope="module")
def snap() -> Snapshot:
    return default_snapshot(progress=False)


def test_its_answer_is_every_member_in_order(snap: Snapshot) -> None:
    g = graph_of(snap)
    rows = snap.sql(
        "SELECT f.object_doc_id AS c, count(*) AS n FROM facts f WHERE relation = 'born_in' "
        "GROUP BY 1 HAVING count(*) BETWEEN 2 AND 4 ORDER BY 1 LIMIT 1"
    ).to_pylist()
    city = int(rows[0]["c"])
    people = snap.sql(
        "SELECT b.subject_doc_id AS p, d.object AS born FROM facts b JOIN facts d ON "
        "d.subject_doc_id = b.subject_doc_id AND d.relation = 'birth_date' "
        "WHERE b.relation = 'born_in' AND b.object_doc_id = ?",
        [city],
    ).to_pylist()
    want = [int(r["p"]) for r in sorted(people, key=lambda r: r["born"][:4])]
    arg = Intersect((IsA("person"), Project("born_in", Entity(city, g.titles[city]), True)))
    root = Listed("birth_date", arg)
    got = Evaluator(g).eval(root)
    if len({r["born"][:4] for r in people}) == len(people):
        assert got == frozenset((list_key(want),))
        shown, aliases, kind = root.answer(g, list_key(want))
        assert (
            kind == "list"
            and best_match(", ".join(g.titles[p] for p in want), [shown, *aliases])[0]
        )
    else:
        assert got == frozenset()  # a tie has no order
    assert closed_world_relations(root) == ["birth_date", "born_in"]


def test_it_round_trips() -> None:
    root = Listed(
        "birth_date", Intersect((IsA("person"), Project("born_in", Entity(3, "X"), True))), True
    )
    assert from_json(to_json(root)) == root and node_type("list") is Listed
    assert parse_list_key(list_key([3, 1, 2])) == [3, 1, 2]


def test_the_default_mix_drafts_it_and_its_tasks_verify(snap: Snapshot) -> None:
    assert "list" in FORM_MIX["medium"]
    tasks = generate_tasks(snap, SynthConfig(difficulty="medium", n=80, seed=0))
    made = [t for t in tasks if t.answer_type == "list"]
    assert made
    for t in made:
        assert t.question.startswith("Which ") and "List them from the " in t.question
        assert " and " in t.answer and t.aliases
    assert verify_taskset(TaskSet(made), snap) == []
