"""The synth graph's whole-relation shortcuts (issue 16) against the per-item definitions they
replace, the exactness of the early rejections, and generation that is byte-identical across
processes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import wikigym.synth.graph.limits as graph_limits
from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.synth.columns import BlockInts, Lists, Strings
from wikigym.synth.drafts import Shape, question_form, shape_for
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.forms.wide import WIDE_MAX, wide_set
from wikigym.synth.generate import TaskBuilder
from wikigym.synth.graph import KnowledgeGraph, RowIndex
from wikigym.synth.levels import LEVELS, level_problems, structure_can_meet
from wikigym.synth.minimal import reductions
from wikigym.synth.query import WIDE_MIN, Entity, Intersect, IsA, Project, forms_of, measures
from wikigym.synth.sampler import Sampler
from wikigym.tasks.defaults import default_snapshot

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("scale") / "world"
    build_world_snapshot(600, 3, out, progress=False)
    return out


@pytest.fixture(scope="module")
def g(world: Path) -> KnowledgeGraph:
    return KnowledgeGraph.from_snapshot(Snapshot.open(world))


def test_functional_and_object_kind_match_the_per_subject_scan(g: KnowledgeGraph) -> None:
    seen_multi = seen_kind = False
    for rel in g.relations():
        rows = g.fwd[rel]
        functional = all(len(rows[s]) <= 1 for s in rows)
        assert g.functional(rel) is functional, rel
        seen_multi |= not functional
        counts: dict[str, int] = {}
        for s in rows:
            for r in rows[s]:
                o = g.f_obj[r]
                k = g.kinds[o] if isinstance(o, int) else None
                if k:
                    counts[k] = counts.get(k, 0) + 1
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
        assert g.object_kind(rel) == (best[0][0] if best else None), rel
        seen_kind |= bool(best)
    assert seen_multi and seen_kind  # both outcomes are exercised
    assert g.functional("no_such_relation") and g.object_kind("no_such_relation") is None


def test_least_measures_match_the_per_entity_minimum(g: KnowledgeGraph) -> None:
    ev = Evaluator(g)
    checked = 0
    for rel in g.relations():
        ents = np.arange(-2, g.n_nodes + 2, dtype=np.int64)
        got = g.least_measures(rel, ents)
        for e, m in zip(ents.tolist(), got.tolist(), strict=True):
            want = ev.measure(rel, e) if 0 <= e < g.n_nodes else None
            assert (m if m == m else None) == want, (rel, e)
            checked += want is not None
    assert checked > 100


def test_projections_take_the_slow_path_for_anything_but_plain_ints(g: KnowledgeGraph) -> None:
    rel = next(r for r in g.relations() if g.rel_types.get(r) == "date")
    key = next(iter(g.inv[rel]))  # a literal key such as "1871-04-02"
    assert isinstance(key, str)
    want = set(g.subjects(rel, key))
    # A str, float or bool must never be read as an entity id by the numpy fast path.
    assert g.subjects_of_all(rel, [key, 1.0, True]) == want
    assert g.objects_of_all(rel, [10**30, -1]) == set()  # past int64: dropped, no error
    digits = next((k for k in g.lit_keys if k.isdigit()), None)
    if digits is not None and int(digits) < g.n_nodes:
        assert g.objects_of_all(rel, [digits]) == set()
    ents = sorted(g.fwd[rel])[:40]
    assert g.objects_of_all(rel, ents) == {o for e in ents for o in g.objects(rel, e)}


def test_row_index_with_and_without_a_stored_order() -> None:
    subj = np.array([2, 0, 2, 1, 0], dtype=np.int32)
    off = np.zeros(4, dtype=np.int32)
    np.cumsum(np.bincount(subj, minlength=3), out=off[1:])
    sorted_index = RowIndex(np.argsort(subj, kind="stable").astype(np.int32), off)
    assert sorted_index.get(0) == (1, 4) and sorted_index.get(2) == (0, 2)
    assert sorted_index.rows_of_all(np.array([2, 1])).tolist() == [0, 2, 3]
    identity = RowIndex(None, np.array([0, 2, 2, 5], dtype=np.int32))
    assert identity.get(0) == (0, 1) and identity.get(1, ()) == () and identity.get(2) == (2, 3, 4)
    assert identity.rows_of_all(np.array([2, 0])).tolist() == [2, 3, 4, 0, 1]
    assert list(identity) == [0, 2] and len(identity) == 2


def test_the_world_graph_stores_no_out_row_order(g: KnowledgeGraph) -> None:
    assert bool(np.all(g.subj[1:] >= g.subj[:-1]))  # facts come article by article
    assert g.out_rows._order is None
    for e in range(0, g.n_nodes, 7):
        assert g.out_rows.get(e, ()) == tuple(np.flatnonzero(g.subj == e).tolist())


def test_strings_and_lists_take_narrow_offsets() -> None:
    s = Strings.from_list(["a", "", "héllo", "xyz"])
    assert list(s) == ["a", "", "héllo", "xyz"] and s[-1] == "xyz"
    assert s.nbytes() == len("ahéllo xyz".encode()) - 1 + 5 * 4  # int32 offsets
    lists = Lists(s, np.array([0, 2, 2, 4]))
    assert lists[0] == ("a", "") and lists[1] == () and lists[2] == ("héllo", "xyz")
    assert lists.offsets().dtype == np.int32


def test_the_structure_floor_is_necessary_and_kept_by_every_reduction(g: KnowledgeGraph) -> None:
    rng = np.random.default_rng(3)
    sampler = Sampler(g, rng)
    drafts = 0
    for i in range(60):
        level = LEVELS[i % len(LEVELS)]
        d = question_form("entity").draft(sampler, shape_for(level, rng), level, True)
        if d is None:
            continue
        drafts += 1
        m = measures(d.root)
        for lv in LEVELS:
            if not level_problems(lv, {**m, "distractor_min": 9, "oracle_calls": 9}):
                assert structure_can_meet(lv, m)  # necessary for meeting the level
            if not structure_can_meet(lv, m):  # and no reduction can climb back above it
                assert not any(structure_can_meet(lv, measures(r)) for r in reductions(d.root))
    assert drafts > 20


def test_wide_sets_identify_their_entity_and_need_every_constraint() -> None:
    # The embedded world: large enough for wide sets to exist (the small one has none).
    # Combinations are decided on the chain's entities alone, from the rivals' membership
    # bits all at once; check each set found against plain evaluation of its query.
    g = KnowledgeGraph.from_snapshot(default_snapshot(progress=False))
    ev = Evaluator(g)
    shape = Shape(3, True, False, True, range_p=1.0, max_constraints=8, special="wide")
    found = 0
    for e in range(0, g.n_nodes, 3):
        kind = g.kinds[e]
        s = Sampler(g, np.random.default_rng(e))
        for row, is_subj in s.edges(e, frozenset({e}), entity_only=True)[:4]:
            rel, other = g.f_rel[row], g.f_obj[row] if is_subj else g.f_subj[row]
            assert isinstance(other, int)
            named = Project(rel, Entity(other, g.titles[other]), inverse=is_subj)
            cand = ev.ids(Intersect((IsA(kind), named)) if kind else named)
            if len(cand) <= WIDE_MIN or e not in cand.tolist():
                continue
            node = wide_set(s, e, kind, frozenset({e}), shape, (named, cand, row))
            if node is None:
                continue
            found += 1
            assert isinstance(node, Intersect) and named in node.args
            isa = [a for a in node.args if isinstance(a, IsA)]
            cons = [a for a in node.args if not isinstance(a, IsA)]
            assert WIDE_MIN <= len(cons) <= WIDE_MAX
            assert ev.ids(node).tolist() == [e]
            for c in cons:  # weak alone, and needed: without it, a rival is let in
                assert len(ev.ids(Intersect((*isa, c)))) >= 2, (e, c)
                assert len(ev.ids(Intersect(tuple(a for a in node.args if a != c)))) > 1, (e, c)
    assert found > 0


def test_relation_counts_match_a_count_of_every_fact(g: KnowledgeGraph) -> None:
    usable = np.array([not r.startswith("b") for r in g.relation_names], dtype=bool)
    per: dict[int, set[tuple[str, str]]] = {}
    for row in range(len(g.f_rel)):
        rel = g.f_rel[row]
        if usable[g.relation_names.index(rel)]:
            per.setdefault(g.f_subj[row], set()).add((rel, "subject"))
            if isinstance(o := g.f_obj[row], int):
                per.setdefault(o, set()).add((rel, "object"))
    want = [len(per.get(x, ())) for x in range(g.n_nodes)]
    assert g.relation_counts(usable).tolist() == want and max(want) > 1


def test_wide_drafts_are_made_and_proved_on_the_embedded_world() -> None:
    # A wide draft: the answer's own description is the wide set, a chain one of its
    # constraints (so the question keeps its hops); the build proves it like any draft.
    snap = default_snapshot(progress=False)
    g = KnowledgeGraph.from_snapshot(snap)
    sampler = Sampler(g, np.random.default_rng(5))
    builder = TaskBuilder(snap, g, np.random.default_rng(5), 5)
    drafts = [d for _ in range(12) if (d := sampler.draft("phd", "wide")) is not None]
    assert len(drafts) >= 3
    for d in drafts:
        assert "wide" in forms_of(d.root) and d.form == "wide"
        assert structure_can_meet("phd", measures(d.root))
    tasks = [t for i, d in enumerate(drafts) if (t := builder.build(d, "phd", i)) is not None]
    assert tasks and all("wide" in str(t.difficulty["forms"]) for t in tasks)


def _generate(world: Path, out: Path, hash_seed: str) -> bytes:
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONHASHSEED": hash_seed}
    cmd = [sys.executable, "-m", "wikigym", "synth", "generate", "--difficulty", "mixed"]
    cmd += ["--n", "8", "--seed", "4", "--corpus", str(world), "--out", str(out)]
    subprocess.run(cmd, env=env, check=True, capture_output=True, timeout=300)
    return out.read_bytes()


def test_same_config_and_seed_give_the_same_bytes_in_any_process(
    world: Path, tmp_path: Path
) -> None:
    a = _generate(world, tmp_path / "a.jsonl", "1")
    b = _generate(world, tmp_path / "b.jsonl", "987")
    assert a == b and a.count(b'"level": "phd"') + a.count(b'"level":"phd"') >= 1


def test_relation_kind_is_the_one_kind_of_every_entity_on_that_side(g: KnowledgeGraph) -> None:
    outcomes = set()
    for rel in g.relations():
        rows = [r for s in g.fwd[rel] for r in g.fwd[rel][s]]
        subjects = {g.kinds[g.f_subj[r]] for r in rows}
        objects = {g.kinds[o] for r in rows if isinstance(o := g.f_obj[r], int)}
        for side, kinds in (("subject", subjects), ("object", objects)):
            want = next(iter(kinds)) if len(kinds) == 1 else None
            assert g.relation_kind(rel, side) == want, (rel, side)
            outcomes.add(want is None)
            if want is not None:  # such a set needs no filtering by its kind
                ents = {g.f_subj[r] if side == "subject" else g.f_obj[r] for r in rows}
                assert {x for x in ents if isinstance(x, int)} <= g.members(want)
    assert outcomes == {True, False}
    assert g.relation_kind("no_such_relation", "subject") is None


def test_kept_range_sets_are_the_same_sets(
    g: KnowledgeGraph, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(graph_limits, "CACHE_MIN", 10)  # this small world's sets are kept too
    rel = max(g.relations(), key=lambda r: len(g.measured_subjects(r)))
    rows = [r for s in g.fwd[rel] for r in g.fwd[rel][s]]
    vals = sorted(m for r in rows if (m := g.f_measure[r]) is not None)
    lo, hi = vals[0], vals[len(vals) * 3 // 4]

    def direct(a: float, b: float) -> set[int]:
        return {g.f_subj[r] for r in rows if (m := g.f_measure[r]) is not None and a <= m <= b}

    first = g.in_range(rel, lo, hi)
    assert len(first) >= 10 and first == direct(lo, hi)
    assert g.in_range(rel, lo, hi) is first  # kept: the same set, not rebuilt
    assert g.in_range(rel, lo, lo) == direct(lo, lo)  # another span, another set


def test_block_ints_round_trip_and_decline_wide_blocks() -> None:
    rng = np.random.default_rng(0)
    ids = np.cumsum(rng.integers(1, 40, 1000)).astype(np.int32)  # climbing, gaps < 40
    packed = BlockInts.pack(ids)
    assert packed is not None and packed.nbytes() < ids.nbytes * 0.6
    assert packed.to_numpy().tolist() == ids.tolist() == [packed[i] for i in range(len(ids))]
    assert packed[-1] == int(ids[-1]) and len(packed) == len(ids)
    wide = ids.copy()
    wide[300] = 2**20  # one block spans more than 2^16
    assert BlockInts.pack(wide) is None
    assert BlockInts.pack(np.zeros(0, dtype=np.int32)) is not None


def test_the_graph_packs_fact_and_passage_ids(g: KnowledgeGraph) -> None:
    assert isinstance(g.f_id, BlockInts) and isinstance(g.f_pid, BlockInts)
    assert [g.fact(i).fact_id for i in range(len(g.f_id))] == g.fid.tolist()
    assert g.fid.dtype.itemsize == 4 and bool(np.all(np.diff(g.fid) > 0))
