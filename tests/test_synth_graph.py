"""The columnar synth graph against a plain-Python reference built the way the graph used
to be (lists, dicts, frozensets), on a generated world and on real infobox pages."""

from __future__ import annotations

from collections import defaultdict
from pathlib import Path

import numpy as np
import pytest

import wikigym.synth.graph.build as graph_build
import wikigym.synth.graph.limits as graph_limits
from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.lexicon import lexicon
from wikigym.corpora.vocabulary import vocabulary
from wikigym.synth.graph import SKIP_RELATIONS, KnowledgeGraph
from wikigym.synth.graph.kinds import clean_value, kind_of_infobox
from wikigym.synth.values import clean_literal


class Reference:
    """The graph as plain Python objects, straight from one SQL query (the old build).

    A real wiki's graph: typed facts of every source, each once (not restating another),
    stated in a passage of their subject or in none (passage ``UNSTATED``); an entity value
    without a page is a node after the articles, in name order, of its relation's
    ``object_kind``; an ``instance_of`` value names its subject's kind through the lexicon."""

    def __init__(self, snap: Snapshot) -> None:
        arts = snap.sql("SELECT doc_id, title, redirects_from, infobox_type FROM articles")
        n = max(arts.column("doc_id").to_pylist()) + 1
        self.titles, self.redirects, self.kinds = [""] * n, [()] * n, [None] * n
        for d, t, r, k in zip(*(c.to_pylist() for c in arts.columns), strict=True):
            self.titles[d], self.redirects[d], self.kinds[d] = t, tuple(r or ()), kind_of_infobox(k)
        world = snap.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'")
        self.source = source = "world" if world.column("n")[0].as_py() else "wiki"
        if source == "world":
            where = "f.source = 'world' AND p.doc_id IS NOT NULL"
        else:
            where = (
                "f.source <> 'world' AND f.typed AND f.restates IS NULL AND"
                " (f.passage_id IS NULL OR p.doc_id = f.subject_doc_id)"
            )
        t = snap.sql(
            "SELECT f.fact_id, f.subject_doc_id, f.relation, f.object, f.object_title,"
            " f.object_doc_id, f.value_type, coalesce(f.passage_id, -1) FROM facts f"
            " LEFT JOIN passages p ON p.passage_id = f.passage_id"
            f" WHERE {where} ORDER BY f.fact_id"
        )
        table = list(zip(*(c.to_pylist() for c in t.columns), strict=True))
        lex = lexicon(snap.manifest.get("language")) if source != "world" else None
        virtual = sorted(
            {
                ot or obj
                for _, subj, rel, obj, ot, odoc, vt, _ in table
                if source != "world" and vt == "entity" and odoc is None and subj is not None
                and rel not in SKIP_RELATIONS and clean_value("text", ot or obj)
                and clean_literal("text", ot or obj) is not None
            }
        )  # fmt: skip
        node = {name: n + i for i, name in enumerate(virtual)}
        self.titles += virtual
        self.redirects += [()] * len(virtual)
        self.kinds += [None] * len(virtual)
        self.rows: list[tuple] = []  # (fact_id, subj, rel, obj, surface, pid, vtype, measure)
        self.aliases: dict[str, tuple[str, ...]] = {}
        for fid, subj, rel, obj, ot, odoc, vt, pid in table:
            if rel == "instance_of" and subj is not None:
                noun = lex.kind_of(obj) if lex is not None else None
                self.kinds[subj] = obj if source == "world" else (noun or kind_of_infobox(obj))
            if rel in SKIP_RELATIONS or subj is None:
                continue
            if vt == "entity" and odoc is None and (ot or obj) in node:
                o = node[ot or obj]
                if self.kinds[o] is None and not any(r[3] == o for r in self.rows):
                    self.kinds[o] = vocabulary().relations[rel].object_kind
                self.rows.append((fid, subj, rel, o, ot or obj, pid, "entity", None))
                continue
            if vt == "entity" and odoc is not None:
                if odoc != subj:
                    self.rows.append((fid, subj, rel, odoc, ot or obj, pid, "entity", None))
                continue
            if source != "world" and not clean_value(vt, obj):
                continue
            lit = clean_literal("text" if vt == "entity" else vt, obj)
            if lit is None:
                continue
            al = lit.aliases
            if ot and ot != lit.surface and clean_literal("text", ot):
                al = (*al, ot)
            vt2 = "text" if vt == "entity" else vt
            # Off-world, a text's spellings in other cases are one value.
            key = lit.key.casefold() if source != "world" and vt2 == "text" else lit.key
            if al:
                self.aliases.setdefault(key, al)
            self.rows.append((fid, subj, rel, key, lit.surface, pid, vt2, lit.measure))
        self.fwd: dict = defaultdict(lambda: defaultdict(list))
        self.inv: dict = defaultdict(lambda: defaultdict(set))
        self.out_rows: dict = defaultdict(list)
        self.in_rows: dict = defaultdict(list)
        self.surface: dict[str, str] = {}
        self.measure: dict[str, float] = {}
        self.rel_types: dict[str, str] = {}
        for i, (_, s, r, o, sf, _, vt, m) in enumerate(self.rows):
            self.fwd[r][s].append(i)
            self.inv[r][o].add(s)
            self.out_rows[s].append(i)
            if isinstance(o, int):
                self.in_rows[o].append(i)
            else:
                self.surface.setdefault(o, sf)
                if m is not None:
                    self.measure.setdefault(o, m)
            self.rel_types.setdefault(r, vt)


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Snapshot:
    out = tmp_path_factory.mktemp("graph") / "world"
    build_world_snapshot(400, 5, out, progress=False)
    return Snapshot.open(out)


def _same_as_reference(g: KnowledgeGraph, ref: Reference) -> None:
    assert g.source == ref.source
    assert len(g.f_id) == len(ref.rows) > 0
    for i, (fid, s, r, o, sf, pid, vt, m) in enumerate(ref.rows):
        f = g.fact(i)
        assert (f.fact_id, f.subject, f.relation, f.obj, f.surface) == (fid, s, r, o, sf)
        assert (f.passage_id, f.value_type, g.f_measure[i]) == (pid, vt, m)
        assert type(f.obj) is type(o) and type(f.subject) is int
    assert list(g.titles) == ref.titles[: len(g.titles)]
    assert [g.redirects[d] for d in range(len(ref.titles))] == ref.redirects
    assert list(g.kinds) == ref.kinds
    for kind in {k for k in ref.kinds if k}:
        assert g.members(kind) == {d for d, k in enumerate(ref.kinds) if k == kind}
    assert g.relations() == sorted(ref.fwd) and set(g.fwd) == set(ref.fwd)
    assert g.rel_types == ref.rel_types
    for rel, by_subj in ref.fwd.items():
        assert set(g.fwd[rel]) == set(by_subj) and len(g.fwd[rel]) == len(by_subj)
        for s, rows in by_subj.items():
            assert g.fwd[rel][s] == tuple(rows) and s in g.fwd[rel]
            assert g.objects(rel, s) == tuple(ref.rows[x][3] for x in rows)
            for x in rows:
                first = next(y for y in rows if ref.rows[y][3] == ref.rows[x][3])
                assert g.find_row(s, rel, ref.rows[x][3]) == first
        by_obj = ref.inv[rel]
        assert set(g.inv[rel]) == set(by_obj) and len(g.inv[rel]) == len(by_obj)
        assert g.inv[rel].pairs() == sum(len(v) for v in by_obj.values())
        for o, subs in by_obj.items():
            assert g.subjects(rel, o) == subs and g.inv[rel][o] == subs
        measured = sorted((m, s) for (_, s, r, _, _, _, _, m) in ref.rows if r == rel and m)
        if measured:
            values = [m for m, _ in measured]
            for lo, hi in [(values[0], values[-1]), (values[len(values) // 2], values[-1])]:
                want = {s for m, s in measured if lo <= m <= hi}
                assert g.in_range(rel, lo, hi) == want
            assert g.measured_subjects(rel) == {s for _, s in measured}
    assert dict(g.out_rows.items()) == {k: tuple(v) for k, v in ref.out_rows.items()}
    assert dict(g.in_rows.items()) == {k: tuple(v) for k, v in ref.in_rows.items()}
    for key, sf in ref.surface.items():
        assert g.surface(key) == sf
        assert g.literal_aliases.get(key, ()) == ref.aliases.get(key, ())
        assert g.literal_measure(key) == ref.measure.get(key)
    rels = sorted(ref.fwd)
    for a in rels[:12]:
        for b in rels[:12]:
            want = {
                s
                for s, rows in ref.fwd[a].items()
                if {ref.rows[x][3] for x in rows} & {ref.rows[x][3] for x in ref.fwd[b].get(s, [])}
            }
            assert g.shared_object_subjects(a, b) == want


def test_world_graph_matches_the_reference(world: Snapshot) -> None:
    _same_as_reference(KnowledgeGraph.from_snapshot(world), Reference(world))


def test_real_graph_matches_the_reference(enwiki_snapshot: Snapshot) -> None:
    g = KnowledgeGraph.from_snapshot(enwiki_snapshot)
    assert g.source == "wiki"
    ref = Reference(enwiki_snapshot)
    _same_as_reference(g, ref)
    # Every source is read, each fact once; some facts are stated in no passage, and
    # entities without a page are nodes after the articles.
    assert {g.source_of(r) for r in range(len(g.f_id))} == {"infobox", "lead", "category"}
    assert any(not g.stated(r) for r in range(len(g.f_id)))
    assert g.n_nodes > g.n_pages == len(ref.titles) - (g.n_nodes - g.n_pages)


def _arrays(g: KnowledgeGraph) -> dict[str, np.ndarray]:
    names = ("fid", "subj", "rel", "obj", "pid", "fwd_rows", "inv_obj", "inv_subj")
    out = {n: getattr(g, n) for n in names}
    out["range_vals"], out["range_subj"] = g.range_vals, g.range_subj
    out["keys"] = np.array(list(g.lit_keys), dtype=object)
    return out


def test_streaming_in_small_chunks_builds_the_same_graph(
    world: Snapshot, monkeypatch: pytest.MonkeyPatch
) -> None:
    whole = KnowledgeGraph.from_snapshot(world)
    monkeypatch.setattr(graph_build, "CHUNK_FACTS", 97)  # many fact chunks
    monkeypatch.setattr(graph_build, "PIECE_FACTS", 301)  # and value pieces
    pieces = KnowledgeGraph.from_snapshot(world)
    a, b = _arrays(whole), _arrays(pieces)
    for name in a:
        assert np.array_equal(a[name], b[name]), name
    assert [pieces.fact(i) for i in range(len(pieces.f_id))] == [
        whole.fact(i) for i in range(len(whole.f_id))
    ]
    assert list(pieces.kinds) == list(whole.kinds)


def test_the_graph_holds_under_100_bytes_per_fact(world: Snapshot) -> None:
    g = KnowledgeGraph.from_snapshot(world)
    assert g.nbytes() / len(g.f_id) <= 100
    for col in (g.fid, g.subj, g.obj, g.pid, g.fwd_rows, g.inv_obj, g.inv_subj):
        assert col.dtype.itemsize == 4  # a small world never needs 64-bit ids
    assert g.rel.dtype.itemsize == 2


def test_lookups_of_foreign_values_answer_empty(world: Snapshot) -> None:
    g = KnowledgeGraph.from_snapshot(world)
    rel = g.relations()[0]
    for bad in (-1, 10**30, len(g.titles), "no such value", 1.5, None, np.int64(-3)):
        assert g.subjects(rel, bad) == frozenset()  # type: ignore[arg-type]
        assert g.fwd[rel].get(bad, ()) == ()
        assert g.out_rows.get(bad, ()) == () and g.in_rows.get(bad, ()) == ()
        assert g.find_row(0, rel, bad) is None  # type: ignore[arg-type]
        assert g.encode(bad) is None
    assert g.subjects("no_such_relation", 0) == frozenset()
    assert g.objects("no_such_relation", 0) == ()
    assert g.in_range("no_such_relation", 0, 1) == frozenset()
    assert g.members("no such kind") == frozenset()
    assert g.surface("never seen") == "never seen"
    assert g.literal_measure("never seen") is None


def test_the_build_is_deterministic(world: Snapshot, tmp_path: Path) -> None:
    a, b = KnowledgeGraph.from_snapshot(world), KnowledgeGraph.from_snapshot(world)
    for name, arr in _arrays(a).items():
        assert np.array_equal(arr, _arrays(b)[name]), name


def test_kind_members_lists_the_kinds_in_use(world: Snapshot) -> None:
    g, ref = KnowledgeGraph.from_snapshot(world), Reference(world)
    kinds = {k for k in ref.kinds if k}
    assert set(g.kind_members) == kinds and len(g.kind_members) == len(kinds)
    for k in kinds:
        assert g.kind_members[k] == {d for d, x in enumerate(ref.kinds) if x == k}
    with pytest.raises(KeyError):
        g.kind_members["no such kind"]


def test_projections_of_many_items_match_one_by_one(world: Snapshot) -> None:
    g = KnowledgeGraph.from_snapshot(world)
    for rel in g.relations():
        subjects: list = [*list(g.fwd[rel])[:200], 10**12, -5, "x"]
        want: set = set()
        for s in subjects:
            want.update(g.objects(rel, s) if isinstance(s, int) else ())
        assert g.objects_of_all(rel, subjects) == want
        objects: list = [*list(g.inv[rel])[:200], 10**12, "never seen"]
        back: set = set()
        for o in objects:
            back.update(g.subjects(rel, o))
        assert g.subjects_of_all(rel, objects) == back
    assert g.objects_of_all("no_such_relation", [0, 1]) == set()
    assert g.subjects_of_all(g.relations()[0], []) == set()


def test_a_range_decided_on_a_set_is_the_built_range(world: Snapshot) -> None:
    """`ids_in_range` (a range read from the facts of a few ids) gives the ids of
    `intersect(ids, range_ids)` for every measured relation, wide and narrow spans, ids with
    and without the relation, and the evaluator's intersections agree with or without it."""
    from wikigym.synth.evaluate import Evaluator
    from wikigym.synth.idsets import intersect
    from wikigym.synth.query import Entity, Intersect, IsA, Project, Range

    g = KnowledgeGraph.from_snapshot(world)
    rng = np.random.default_rng(0)
    measured = [r for r in g.relations() if len(g.measured_ids(r))]
    assert measured
    everyone = np.arange(g.n_nodes, dtype=np.int64)
    for rel in measured:
        vals = np.sort(
            np.array(
                [
                    m
                    for m in (g.f_measure[r] for r in range(len(g.f_id)) if g.f_rel[r] == rel)
                    if m is not None
                ]
            )
        )
        for _ in range(6):
            lo, hi = sorted(float(x) for x in rng.choice(vals, 2))
            ids = np.unique(rng.choice(everyone, 40)).astype(np.int64)
            # Read from the facts of ids whatever the sizes (a world this small has no
            # range 16 times larger than 40 entities), before the range's set is built.
            ratio, graph_limits.PROBE_RATIO = graph_limits.PROBE_RATIO, 0
            try:
                got = g.ids_in_range(ids, rel, lo, hi)
            finally:
                graph_limits.PROBE_RATIO = ratio
            assert np.array_equal(got, intersect(ids, g.range_ids(rel, lo, hi)))
            assert g.range_rows(rel, lo, hi) >= len(g.range_ids(rel, lo, hi))
    assert not len(g.ids_in_range(everyone[:5], "no_such_relation", 0, 1))
    # The evaluator: an intersection of a narrow constraint and a wide range, probed or built.
    # A measured subject with an entity fact: "the X of Y" narrows, "any <rel>" is wide.
    rel, subject, row = next(
        (rel, s, r)
        for rel in measured
        for s in g.measured_ids(rel).tolist()
        for r in g.out_rows.rows_of(s)
        if isinstance(g.f_obj[r], int)
    )
    other = g.f_obj[row]
    assert isinstance(other, int)
    narrow = Project(g.f_rel[row], Entity(other, g.titles[other]), inverse=True)
    wide = Range(rel, -1e18, 1e18, "number")
    kind = g.kinds[subject]
    node = Intersect((IsA(kind), narrow, wide)) if kind else Intersect((narrow, wide))
    ev = Evaluator(g)
    probed = ev.ids(node)
    assert wide not in ev._memo  # decided on the narrow set: the range was never built
    old = graph_limits.PROBE_RATIO
    try:
        graph_limits.PROBE_RATIO = 10**12  # never probe: every set built
        built = Evaluator(g).ids(node)
    finally:
        graph_limits.PROBE_RATIO = old
    assert np.array_equal(probed, built) and subject in built.tolist()
