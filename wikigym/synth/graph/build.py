"""Building the graph from a snapshot: DuckDB scans and groups in bounded pieces, numpy joins
and sorts.

World snapshots use their exact ``world`` facts. Other snapshots use the typed facts of
every source, each once, stated in a passage of their subject or in none (``UNSTATED``); an
entity value without a page is a node after the articles (see the package docstring).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from wikigym.corpora.manifest import TABLE_FILES
from wikigym.corpora.snapshot import Snapshot
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SynthError
from wikigym.synth.columns import Lists, Strings, index_dtype
from wikigym.synth.graph.data import Values
from wikigym.synth.graph.kinds import (
    REAL_SOURCES,
    SKIP_RELATIONS,
    UNSTATED,
    clean_value,
    instance_kind,
    kind_of_infobox,
)
from wikigym.synth.values import clean_literal

CHUNK_FACTS = 250_000  # facts per query while streaming the table
PIECE_FACTS = 2_000_000  # facts per hash piece when DuckDB groups the distinct values

# Each fact's object, spelled as one string that tells spellings apart exactly (lengths
# prefix the fields, so no separator inside a value can make two spellings collide).
_VKEY = (
    "concat(CASE WHEN f.value_type = 'entity' AND f.object_doc_id IS NOT NULL THEN 'e' ELSE 'l'"
    " END, length(coalesce(f.value_type, '')), ':', coalesce(f.value_type, ''),"
    " length(coalesce(f.object, '')), ':', coalesce(f.object, ''),"
    " CASE WHEN f.object_title IS NULL THEN '-' ELSE '+' || f.object_title END)"
)
_MISSING = -2  # the passage of a fact is not in the snapshot


def _sources(source: str) -> list[str]:
    """The fact sources a graph of ``source`` (``world`` or ``wiki``) reads."""
    return ["world"] if source == "world" else list(REAL_SOURCES)


def _where(source: str) -> str:
    # Real data: typed facts, each once (and, checked in numpy, located in a passage of
    # their subject or in none); world data: every fact whose passage exists.
    typed = "" if source == "world" else " AND f.typed AND f.restates IS NULL"
    return "FROM facts f WHERE list_contains(?, f.source) AND f.subject_doc_id IS NOT NULL" + typed


class _PassageDocs:
    """passage_id -> doc id of the snapshot's passages, in one int32 array (-1: a passage
    without a doc id, ``_MISSING``: no such passage).

    Read straight from the passages table's two id columns in Arrow batches, not through
    DuckDB: the allocator DuckDB scans with keeps what the scan freed (tens of MB per
    million passages), which would stay resident beside the graph."""

    def __init__(self, snapshot: Snapshot) -> None:
        table = pq.ParquetFile(Path(snapshot.path) / TABLE_FILES["passages"])
        lo, hi, n = 0, -1, 0
        for batch in table.iter_batches(batch_size=CHUNK_FACTS, columns=["passage_id"]):
            ids = batch.column(0).drop_null()
            if len(ids):
                mm = pc.min_max(ids)
                a, b = int(mm["min"].as_py()), int(mm["max"].as_py())
                lo, hi = (a, b) if not n else (min(lo, a), max(hi, b))
                n += len(ids)
        self._base = lo
        self._dense = n == 0 or hi - lo + 1 <= 2 * n + 1024
        size = max(hi - lo + 1, 0) if self._dense else n
        self._docs = np.full(size, _MISSING, dtype=np.int32)
        ids_all = np.zeros(0 if self._dense else n, dtype=np.int64)
        at = 0
        for batch in table.iter_batches(batch_size=CHUNK_FACTS, columns=["passage_id", "doc_id"]):
            keep = batch.column(0).is_valid()
            pid = batch.column(0).filter(keep).to_numpy()
            doc = batch.column(1).filter(keep).fill_null(-1).to_numpy()
            if self._dense:
                self._docs[pid - lo] = doc
            else:
                ids_all[at : at + len(pid)] = pid
                self._docs[at : at + len(pid)] = doc
                at += len(pid)
        if not self._dense:
            order = np.argsort(ids_all, kind="stable")
            self._ids, self._docs = ids_all[order], self._docs[order]

    def docs(self, pids: np.ndarray, valid: np.ndarray) -> np.ndarray:
        """The doc ids of ``pids`` (``_MISSING`` where not ``valid`` or not a passage)."""
        out = np.full(len(pids), _MISSING, dtype=np.int64)
        if not len(self._docs):
            return out
        if self._dense:
            i = pids - self._base
            ok = valid & (i >= 0) & (i < len(self._docs))
            out[ok] = self._docs[i[ok]]
        else:
            j = np.minimum(np.searchsorted(self._ids, pids), len(self._ids) - 1)
            ok = valid & (self._ids[j] == pids)
            out[ok] = self._docs[j[ok]]
        return out


def _located(source: str, pdoc: np.ndarray, subj: np.ndarray, stated: np.ndarray) -> np.ndarray:
    """Which facts the graph takes: their passage exists (and, off-world, is their
    subject's, or the fact is stated in no passage)."""
    return pdoc != _MISSING if source == "world" else (pdoc == subj) | ~stated


def _language(snapshot: Snapshot) -> str:
    language = snapshot.manifest.get("language") if isinstance(snapshot.manifest, dict) else None
    return str(language or "en")


def _dense(column: pa.ChunkedArray, doc_ids: np.ndarray, n: int) -> pa.Array:
    """``column`` (one value per article, in doc id order) laid out at positions 0..n-1."""
    arr = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if len(doc_ids) == n and (n == 0 or (doc_ids[0] == 0 and doc_ids[-1] == n - 1)):
        return arr
    pos = np.full(n, -1, dtype=np.int64)
    pos[doc_ids] = np.arange(len(doc_ids))
    return arr.take(pa.array(pos, mask=pos < 0))


def _articles(
    snapshot: Snapshot,
    n: int,
    instance: tuple[np.ndarray, pa.Array],
    language: str | None = None,
    virtuals: tuple[pa.Array, list[str | None]] | None = None,
) -> tuple[Strings, Lists, np.ndarray, list[str]]:
    """Titles, redirects and kind codes of the ``n`` article nodes, then of the nodes of
    entities without a page (``virtuals``: their names and kinds), and the kind names."""
    arts = snapshot.sql(
        "SELECT doc_id, title, redirects_from, infobox_type FROM articles ORDER BY doc_id"
    )
    doc_ids = arts.column("doc_id").to_numpy()
    title_col = _dense(arts.column("title"), doc_ids, n)
    redirect_col = _dense(arts.column("redirects_from"), doc_ids, n)
    if virtuals is not None:
        vt = virtuals[0]
        title_col = pa.concat_arrays([title_col.cast(pa.large_string()), vt])
        empty = pa.array([[]] * len(vt), redirect_col.type)
        redirect_col = pa.concat_arrays([redirect_col, empty])
    titles = Strings.from_arrow(title_col)
    redirects = Lists.from_arrow(redirect_col)
    types = _dense(arts.column("infobox_type"), doc_ids, n).dictionary_encode()
    del arts
    names: list[str] = []
    index: dict[str, int] = {}

    def code(kind: str | None) -> int:
        if kind is None:
            return -1
        if kind not in index:
            index[kind] = len(names)
            names.append(kind)
        return index[kind]

    type_codes = np.array([code(kind_of_infobox(t)) for t in types.dictionary.to_pylist()] + [-1])
    idx = types.indices.fill_null(len(types.dictionary)).to_numpy(zero_copy_only=False)
    kinds = type_codes[idx].astype(np.int32)
    if virtuals is not None:
        kinds = np.concatenate([kinds, np.array([code(k) for k in virtuals[1]], np.int32)])
    # An ``instance_of`` fact names the kind outright (the last one of an entity wins).
    subj, objs = instance
    if len(subj):
        enc = objs.dictionary_encode()
        obj_codes = np.array(
            [code(instance_kind(k, language)) for k in enc.dictionary.to_pylist()] + [-1]
        )
        oi = enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False)
        rev = subj[::-1]
        uniq, last = np.unique(rev, return_index=True)
        inside = uniq < n
        kinds[uniq[inside]] = obj_codes[oi[::-1][last[inside]]]
    return titles, redirects, kinds.astype(np.int16 if len(names) < 2**15 else np.int32), names


@dataclass(slots=True)
class _ValueParts:
    """The distinct object spellings, cleaned in Python once each, gathered by group."""

    keep: list[np.ndarray]
    entity: list[np.ndarray]
    vtype: list[np.ndarray]
    measure: list[np.ndarray]
    surfaces: list[pa.Array]
    keys: list[pa.Array]
    aliases: list[pa.Array]
    vkeys: list[pa.Array]
    vtype_index: dict[str, int]
    virtual: list[np.ndarray] = field(default_factory=list)
    vnames: list[pa.Array] = field(default_factory=list)

    def add(self, rows: pa.Table, source: str) -> None:
        """Clean one group of distinct spellings: what each reads as, or that it is dropped."""
        n = rows.num_rows
        keep = np.zeros(n, dtype=bool)
        entity = rows.column("ent").to_numpy(zero_copy_only=False).astype(bool)
        measure = np.full(n, np.nan)
        vtypes = np.zeros(n, dtype=np.int16)
        surfaces: list[str] = []
        keys: list[str | None] = []
        aliases: list[tuple[str, ...]] = []
        vt_index = self.vtype_index
        virtual = np.zeros(n, dtype=bool)
        vnames: list[str | None] = [None] * n
        it = zip(
            rows.column("vt").to_pylist(),
            rows.column("obj").to_pylist(),
            rows.column("ot").to_pylist(),
            strict=True,
        )
        for i, (vt, obj, obj_title) in enumerate(it):
            obj = obj or ""
            surface, key, vt_out = "", None, ""
            extra: tuple[str, ...] = ()
            if entity[i]:
                keep[i], surface, vt_out = True, obj_title or obj, "entity"
            elif (
                source != "world"
                and vt == "entity"
                and clean_value("text", name := obj_title or obj)
                and clean_literal("text", name) is not None
            ):
                # An entity without a page in the snapshot (a link to an article it does
                # not hold, a name): a node of its own, so that chains can pass through it.
                keep[i] = entity[i] = virtual[i] = True
                surface, vt_out, vnames[i] = name, "entity", name
            elif source == "world" or clean_value(vt, obj):
                lit = clean_literal("text" if vt == "entity" else vt, obj)
                if lit is not None:
                    keep[i], surface, key = True, lit.surface, lit.key
                    vt_out = "text" if vt == "entity" else vt
                    if source != "world" and vt_out == "text":
                        # Real pages spell one value in several cases (an infobox's
                        # "Writer", a category's "writer"): one node, or a question
                        # about "writer" would miss the pages that say "Writer".
                        key = key.casefold()
                    extra = lit.aliases
                    if obj_title and obj_title != lit.surface and clean_literal("text", obj_title):
                        extra = (*extra, obj_title)
                    if lit.measure is not None:
                        measure[i] = lit.measure
            vtypes[i] = vt_index.setdefault(vt_out, len(vt_index))
            surfaces.append(surface)
            keys.append(key)
            aliases.append(extra)
        self.keep.append(keep)
        self.entity.append(entity)
        self.virtual.append(virtual)
        self.vnames.append(pa.array(vnames, pa.large_string()))
        self.vtype.append(vtypes)
        self.measure.append(measure)
        self.surfaces.append(pa.array(surfaces, pa.large_string()))
        self.keys.append(pa.array(keys, pa.large_string()))
        self.aliases.append(pa.array(aliases, pa.large_list(pa.large_string())))
        self.vkeys.append(rows.column("vkey").combine_chunks().cast(pa.large_string()))

    def finish(self, used: np.ndarray) -> tuple[Values, pa.Array]:
        """The values, literal keys numbered over the ``used`` values only (sorted keys), and
        the spellings array that fact rows are matched against."""

        def cat(parts: list[np.ndarray], dtype: Any) -> np.ndarray:
            return np.concatenate(parts) if parts else np.zeros(0, dtype=dtype)

        def cat_arrow(parts: list[pa.Array], typ: pa.DataType) -> pa.Array:
            return pa.concat_arrays(parts) if parts else pa.array([], typ)

        key_of = cat_arrow(self.keys, pa.large_string())
        used_keys = pc.drop_null(key_of.take(pa.array(used, pa.int64())))
        keys = pc.unique(used_keys)
        keys = keys.take(pc.sort_indices(keys))
        kid = pc.index_in(key_of, value_set=keys).fill_null(-1).to_numpy(zero_copy_only=False)
        vt_names = sorted(self.vtype_index, key=self.vtype_index.__getitem__)
        values = Values(
            cat(self.keep, bool),
            cat(self.entity, bool),
            kid.astype(np.int32),
            cat(self.vtype, np.int16),
            cat(self.measure, np.float64),
            vt_names,
            Strings.from_arrow(cat_arrow(self.surfaces, pa.large_string())),
            Lists.from_arrow(cat_arrow(self.aliases, pa.large_list(pa.large_string()))),
            Strings.from_arrow(keys),
        )
        return values, cat_arrow(self.vkeys, pa.large_string())


class GraphParts(NamedTuple):
    """What a graph is made of (the arguments of :class:`~wikigym.synth.graph.data.GraphData`)."""

    snapshot_id: str
    source: str
    articles: tuple[Strings, Lists, np.ndarray, list[str]]
    facts: dict[str, np.ndarray]
    values: Values
    relation_names: list[str]
    n_pages: int


def read_graph(snapshot: Snapshot) -> GraphParts:
    """The parts of ``snapshot``'s graph: facts streamed from DuckDB ``CHUNK_FACTS`` at a
    time, the distinct object spellings grouped in DuckDB in hash pieces of ``PIECE_FACTS``
    facts, so that neither DuckDB nor Python ever holds more than one piece of the table.

    Raises:
        SynthError: The snapshot has no usable fact.
    """
    world = snapshot.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'")
    source = "world" if world.column("n")[0].as_py() > 0 else "wiki"
    sources = _sources(source)
    skip = sorted(SKIP_RELATIONS)
    kept = f"{_where(source)} AND NOT list_contains(?, f.relation)"
    span = snapshot.sql(
        "SELECT min(fact_id) AS lo, max(fact_id) AS hi, count(*) AS n, max(subject_doc_id) AS s,"
        f" max(object_doc_id) AS o, min(passage_id) AS plo, max(passage_id) AS phi {kept}",
        [sources, skip],
    ).to_pylist()[0]
    docs_hi = snapshot.sql("SELECT max(doc_id) AS hi FROM articles").to_pylist()[0]["hi"]
    n_docs = max(docs_hi if docs_hi is not None else -1, span["s"] or 0, span["o"] or 0) + 1
    n_facts = int(span["n"] or 0)
    passages = _PassageDocs(snapshot)
    # The distinct object spellings, grouped by DuckDB one hash partition at a time.
    parts = _ValueParts([], [], [], [], [], [], [], [], {})
    pieces = max(1, -(-n_facts // PIECE_FACTS))
    for piece in range(pieces):
        parts.add(
            snapshot.sql(
                "SELECT v AS vkey, any_value(ent) AS ent, any_value(vt) AS vt,"
                " any_value(obj) AS obj, any_value(ot) AS ot FROM (SELECT"
                f" {_VKEY} AS v, (f.value_type = 'entity' AND f.object_doc_id IS NOT NULL) AS ent,"
                f" f.value_type AS vt, f.object AS obj, f.object_title AS ot {kept})"
                " WHERE hash(v) % ? = ? GROUP BY v ORDER BY v",
                [sources, skip, pieces, piece],
            ),
            source,
        )
    vset = pa.concat_arrays(parts.vkeys) if parts.vkeys else pa.array([], pa.large_string())
    keep = np.concatenate(parts.keep) if parts.keep else np.zeros(0, dtype=bool)
    entity = np.concatenate(parts.entity) if parts.entity else np.zeros(0, dtype=bool)
    virtual = np.concatenate(parts.virtual) if parts.virtual else np.zeros(0, dtype=bool)
    # Entities without a page: node ids after the articles', in name order.
    vnames = pa.concat_arrays(parts.vnames) if parts.vnames else pa.array([], pa.large_string())
    virtual_titles = pc.unique(pc.drop_null(vnames))
    virtual_titles = virtual_titles.take(pc.sort_indices(virtual_titles))
    vnode = (
        pc.index_in(vnames, value_set=virtual_titles).fill_null(-1).to_numpy(zero_copy_only=False)
    )
    vnode = np.where(vnode >= 0, vnode + n_docs, -1)
    n_nodes = n_docs + len(virtual_titles)
    nodes_dt = index_dtype(max(n_nodes, len(vset)))
    fid_dt = index_dtype(max(abs(span["lo"] or 0), abs(span["hi"] or 0)))
    pid_dt = index_dtype(max(abs(span["plo"] or 0), abs(span["phi"] or 0)))
    rel_names: list[str] = []
    rel_index: dict[str, int] = {}
    cols: dict[str, list[np.ndarray]] = {
        k: [] for k in ("fact_id", "subject", "relation", "odoc", "value", "passage_id")
    }
    if source != "world":  # which source states each fact (a world's are all its own)
        cols["source"] = []
    # (UNSTATED is -1: the passage ids' signed type holds it.)
    if n_facts:
        lo, hi = int(span["lo"]), int(span["hi"])
        step = max(1, -(-(hi - lo + 1) * CHUNK_FACTS // n_facts))
        for start in range(lo, hi + 1, step):
            t = snapshot.sql(
                "SELECT f.fact_id, f.subject_doc_id, f.relation, f.object_doc_id, f.passage_id,"
                f" f.source, {_VKEY} AS vkey {kept} AND f.fact_id >= ? AND f.fact_id < ?"
                " ORDER BY f.fact_id",
                [sources, skip, start, start + step],
            )
            vi = pc.index_in(t.column("vkey"), value_set=vset).to_numpy(zero_copy_only=False)
            subj = t.column("subject_doc_id").to_numpy()
            odoc = t.column("object_doc_id").fill_null(-1).to_numpy()
            pcol = t.column("passage_id")
            stated = pcol.is_valid().to_numpy(zero_copy_only=False)
            pids = pcol.fill_null(UNSTATED).to_numpy()
            pdoc = passages.docs(pids, stated)
            ent = entity[vi]
            if len(virtual_titles):
                odoc = np.where(virtual[vi], vnode[vi], odoc)
            ok = keep[vi] & ~(ent & (odoc == subj)) & _located(source, pdoc, subj, stated)
            if "source" in cols:
                codes = pc.index_in(t.column("source"), value_set=pa.array(REAL_SOURCES))
                cols["source"].append(codes.to_numpy(zero_copy_only=False)[ok].astype(np.int8))
            rels = t.column("relation").combine_chunks().dictionary_encode()
            local_names = rels.dictionary.to_pylist()
            for name in local_names:
                if name not in rel_index:
                    rel_index[name] = len(rel_names)
                    rel_names.append(name)
            local = np.array([rel_index[x] for x in local_names], dtype=np.int32)
            rcode = local[rels.indices.to_numpy(zero_copy_only=False)] if len(local) else local
            cols["fact_id"].append(t.column("fact_id").to_numpy()[ok].astype(fid_dt))
            cols["subject"].append(subj[ok].astype(nodes_dt))
            cols["relation"].append(rcode[ok])
            cols["odoc"].append(odoc[ok].astype(nodes_dt))
            cols["value"].append(vi[ok].astype(np.int32))
            cols["passage_id"].append(pids[ok].astype(pid_dt))
            del t, vi, subj, odoc, pcol, pids, pdoc, ent, ok, rels, rcode
    inst = snapshot.sql(
        f"SELECT f.subject_doc_id AS s, f.object AS o, f.passage_id AS p {_where(source)}"
        " AND f.relation = 'instance_of' ORDER BY f.fact_id",
        [sources],
    )
    inst_s = inst.column("s").to_numpy()
    ipc = inst.column("p")
    istated = ipc.is_valid().to_numpy(zero_copy_only=False)
    ipdoc = passages.docs(ipc.fill_null(0).to_numpy(), istated)
    where_ok = np.flatnonzero(_located(source, ipdoc, inst_s, istated))
    instance = (inst_s[where_ok], inst.column("o").combine_chunks().take(pa.array(where_ok)))
    del inst, ipc, ipdoc
    del passages, vset
    if not sum(len(a) for a in cols["fact_id"]):
        raise SynthError(
            f"snapshot {snapshot.path} has no clean {source} fact typed by the vocabularies "
            "to build questions from; use a snapshot built from a generated world, from "
            "pages with infoboxes, categories or lead sentences the vocabularies read, or "
            "rebuild it with `corpus build --facts WIKIDATA_DUMP` (`corpus info` counts the "
            "facts by source)"
        )
    facts = {k: np.concatenate(v) for k, v in cols.items()}
    del cols
    values, _ = parts.finish(np.unique(facts["value"]))
    del parts
    odoc = facts.pop("odoc")
    lit_code = -1 - values.key[facts["value"]].astype(nodes_dt)
    facts["object"] = np.where(values.entity[facts["value"]], odoc, lit_code).astype(nodes_dt)
    del odoc, lit_code
    # Relation codes in name order, so that every relation listing is sorted.
    by_name = sorted(range(len(rel_names)), key=rel_names.__getitem__)
    remap = np.empty(len(rel_names), dtype=np.int16 if len(rel_names) < 2**15 else np.int32)
    remap[by_name] = np.arange(len(rel_names))
    facts["relation"] = remap[facts["relation"]]
    names = [rel_names[i] for i in by_name]
    used = np.unique(facts["relation"])
    if len(used) < len(names):  # relations whose every fact was dropped
        squeeze = np.full(len(names), -1, dtype=facts["relation"].dtype)
        squeeze[used] = np.arange(len(used))
        facts["relation"], names = squeeze[facts["relation"]], [names[i] for i in used.tolist()]
    virtuals = None
    if len(virtual_titles):  # their kind: what the relation of their first fact names
        vrows = np.flatnonzero(facts["object"] >= n_docs)
        first_nodes, first_at = np.unique(facts["object"][vrows], return_index=True)
        kinds_of: list[str | None] = [None] * len(virtual_titles)
        relations = vocabulary().relations
        for node, at in zip(first_nodes.tolist(), first_at.tolist(), strict=True):
            spec = relations.get(names[int(facts["relation"][vrows[at]])])
            kinds_of[node - n_docs] = spec.object_kind if spec is not None else None
        virtuals = (virtual_titles, kinds_of)
    language = None if source == "world" else _language(snapshot)
    articles = _articles(snapshot, n_docs, instance, language, virtuals)
    return GraphParts(snapshot.snapshot_id, source, articles, facts, values, names, n_docs)
