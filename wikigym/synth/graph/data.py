"""The graph's storage: fact columns in ``fact_id`` order, the sorted indexes over them, and
the Mapping views (relation -> subject -> rows, relation -> object -> subjects, kind ->
members, literal -> aliases) that read them.

Nodes are entities (article doc ids, ``int``) and literal values (their key, ``str``);
inside, an object is encoded as one integer: the doc id, or ``-1 - k`` for the literal key of
id ``k`` (keys are sorted, so ids follow key order). Every index is a sort of the rows (CSR
offsets or sorted segments searched by bisection), so lookups return sorted ids and never
depend on hash or insertion order.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from wikigym.synth.columns import (
    BlockInts,
    Codes,
    Lists,
    Measures,
    Names,
    Nodes,
    Strings,
    Through,
    first_per_group,
    index_dtype,
    mv,
)
from wikigym.synth.graph import limits
from wikigym.synth.graph.views import _NONE, RowIndex, as_int, packed


@dataclass(slots=True)
class Values:
    """The distinct values of the kept facts (one per object spelling), built in Python."""

    keep: np.ndarray  # bool: the value makes a fact of the graph
    entity: np.ndarray  # bool: an entity object (its doc id is the node)
    key: np.ndarray  # int32: literal key id (-1 for entities)
    vtype: np.ndarray  # int16 code into vtype_names
    measure: np.ndarray  # float64, NaN: none
    vtype_names: list[str]
    surfaces: Strings
    aliases: Lists
    keys: Strings  # the literal keys, sorted


class GraphData:
    """The columns and indexes of one snapshot's facts (see the module docstring); the
    graph's reading methods are built on them (:class:`~wikigym.synth.graph.core.
    KnowledgeGraph`)."""

    def __init__(
        self,
        snapshot_id: str,
        source: str,
        articles: tuple[Strings, Lists, np.ndarray, list[str]],
        facts: dict[str, np.ndarray],
        values: Values,
        relation_names: list[str],
        n_pages: int | None = None,
    ) -> None:
        self.snapshot_id = snapshot_id
        self.source = source
        titles, redirects, kind_codes, kind_names = articles
        # Nodes below n_pages are articles; the rest are entities without a page (names of
        # unresolved links, values of real facts: build.read_graph).
        self.n_pages = len(titles) if n_pages is None else n_pages
        self.titles = titles
        self.redirects = redirects
        self._kind_codes = kind_codes
        self.kinds = Codes(kind_codes, kind_names)
        self._kind_index = {k: i for i, k in enumerate(kind_names)}
        self._members: dict[str, frozenset[int]] = {}
        used = sorted(set(np.unique(kind_codes).tolist()) - {-1})
        self.kind_members = KindMembers(self, [kind_names[c] for c in used])
        self._measured: dict[str, frozenset[int]] = {}
        self._relation_stats: dict[tuple[str, str], bool | str | None] = {}
        self._least: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self._relation_kind: dict[tuple[str, str], str | None] = {}
        self._kept_values: dict[tuple[object, ...], object] = {}
        self._ranges: dict[tuple[int, int], frozenset[int]] = {}
        self._ranges_held = 0
        self._id_sets: dict[tuple[str, int, int], np.ndarray] = {}
        self._id_sets_held = 0
        self._member_ids: dict[str, np.ndarray] = {}
        self._measured_ids: dict[str, np.ndarray] = {}
        self._object_ids: dict[str, np.ndarray] = {}
        self.lit_keys = values.keys
        self.val_aliases = values.aliases
        self.val_surfaces = values.surfaces
        self.val_measure = values.measure
        self.relation_names = relation_names
        self._rel_index = {r: i for i, r in enumerate(relation_names)}
        # Fact columns (rows in fact order).
        # Fact ids and passage ids climb with the rows: 2 bytes a row as block offsets.
        self._fid = packed(facts["fact_id"])
        self.subj = facts["subject"]
        self.rel = facts["relation"]
        self.obj = facts["object"]
        self.val = facts["value"]
        # Source code per row (index into kinds.REAL_SOURCES); None for a world (all "world").
        self.src: np.ndarray | None = facts.get("source")
        self._pid = packed(facts["passage_id"])
        self.f_id: Sequence[int] = self._fid if isinstance(self._fid, BlockInts) else mv(self._fid)
        self.f_subj = mv(self.subj)
        self.f_pid: Sequence[int] = self._pid if isinstance(self._pid, BlockInts) else mv(self._pid)
        self.f_rel = Names(self.rel, relation_names)
        self.f_obj = Nodes(self.obj, values.keys)
        self.f_surface = Through(self.val, values.surfaces)
        self.f_vtype = Through(self.val, Names(values.vtype, values.vtype_names))
        self.f_measure = Measures(values.measure, self.val)
        self._obj_mv = mv(self.obj)
        self.f_obj_codes = self._obj_mv  # encoded objects (doc id, or -1 - key id) per row
        self._index(values)

    @property
    def fid(self) -> np.ndarray:
        """The fact id of every row (one array, decoded on each call)."""
        return self._fid.to_numpy() if isinstance(self._fid, BlockInts) else self._fid

    @property
    def pid(self) -> np.ndarray:
        """The passage id of every row (one array, decoded on each call)."""
        return self._pid.to_numpy() if isinstance(self._pid, BlockInts) else self._pid

    def _index(self, values: Values) -> None:
        m, n_rel = len(self.rel), len(self.relation_names)
        n = len(self.titles)
        rows_dt = index_dtype(m)
        rel_bounds = np.arange(n_rel + 1)
        # entity -> rows out (subject) and in (entity object), rows in fact order.
        # Facts come article by article, so their subjects are usually in order already:
        # then the order is the identity and is not stored (4 bytes a fact).
        in_order = bool(np.all(self.subj[1:] >= self.subj[:-1]))
        order = None if in_order else np.argsort(self.subj, kind="stable").astype(rows_dt)
        off = np.zeros(n + 1, dtype=rows_dt)
        np.cumsum(np.bincount(self.subj, minlength=n), out=off[1:])
        self.out_rows = RowIndex(order, off)
        self.n_nodes = n
        self.f_rel_codes = mv(self.rel)
        ent_rows = np.flatnonzero(self.obj >= 0).astype(rows_dt)
        ent_obj = self.obj[ent_rows]
        order = ent_rows[np.argsort(ent_obj, kind="stable")]
        off = np.zeros(n + 1, dtype=rows_dt)
        np.cumsum(np.bincount(ent_obj, minlength=n), out=off[1:])
        self.in_rows = RowIndex(order, off)
        del ent_rows, ent_obj
        # relation -> subject -> rows: rows sorted by (relation, subject), stable.
        order = np.lexsort((self.subj, self.rel)).astype(rows_dt)
        self.fwd_rows = order
        self._fwd_bounds = np.searchsorted(self.rel[order], rel_bounds).tolist()
        self.fwd = Forward(self, self._fwd_bounds)
        # relation -> object -> subjects: unique (relation, object, subject), sorted.
        order = np.lexsort((self.subj, self.obj, self.rel))
        r, o, s = self.rel[order], self.obj[order], self.subj[order]
        del order
        fresh = np.ones(len(r), dtype=bool)
        fresh[1:] = (r[1:] != r[:-1]) | (o[1:] != o[:-1]) | (s[1:] != s[:-1])
        r, self.inv_obj, self.inv_subj = r[fresh], o[fresh], s[fresh]
        del fresh, o, s
        new_obj = np.ones(len(r), dtype=bool)
        new_obj[1:] = (r[1:] != r[:-1]) | (self.inv_obj[1:] != self.inv_obj[:-1])
        n_objects = np.bincount(r[new_obj], minlength=n_rel).tolist()
        del new_obj
        self._inv_o, self._inv_s = mv(self.inv_obj), mv(self.inv_subj)
        bounds = np.searchsorted(r, rel_bounds).tolist()
        del r
        self._cached = 0
        self._inverse = {
            name: RelationSubjects(self, i, bounds[i], bounds[i + 1], n_objects[i])
            for i, name in enumerate(self.relation_names)
        }
        self.inv = Inverse(self._inverse)
        # relation -> (measures ascending, their subjects): the range filters.
        meas = values.measure[self.val]
        has = np.flatnonzero(~np.isnan(meas))
        mr, mval, ms = self.rel[has], meas[has], self.subj[has]
        del meas, has
        order = np.lexsort((ms, mval, mr))
        self.range_vals, self.range_subj = mval[order], ms[order]
        self._range_bounds = np.searchsorted(mr[order], rel_bounds).tolist()
        del mr, mval, ms, order
        # Per relation: the value type of its first fact; per literal key: its surface (that
        # of its first fact), aliases (of its first fact with any) and measure (likewise).
        first = first_per_group(self.rel, n_rel)
        vt = values.vtype_names
        self.rel_types = {
            name: vt[int(values.vtype[self.val[first[i]]])]
            for i, name in enumerate(self.relation_names)
            if first[i] >= 0
        }
        n_keys = len(values.keys)
        lit = np.flatnonzero(self.obj < 0)
        kid = -1 - self.obj[lit]
        lval = self.val[lit]
        del lit
        self.key_surf_val = lval[first_per_group(kid, n_keys)]
        with_alias = np.diff(np.asarray(values.aliases.offsets())) > 0
        has = with_alias[lval]
        fa = first_per_group(kid[has], n_keys)
        self.key_alias_val = np.where(fa >= 0, lval[has][np.maximum(fa, 0)], -1).astype(np.int32)
        lm = values.measure[lval]
        has = ~np.isnan(lm)
        fm = first_per_group(kid[has], n_keys)
        self.key_measure = np.where(fm >= 0, lm[has][np.maximum(fm, 0)], np.nan)
        self.literal_aliases = Aliases(self)

    def _note_cached(self, size: int) -> None:
        self._cached += size
        if self._cached > limits.CACHE_CAP:  # bounded: start afresh rather than grow
            for rs in self._inverse.values():
                rs._cache.clear()
            self._cached = size

    def encode(self, node: object) -> int | None:
        """The integer code of an entity or a literal key, or None when it is neither in the
        graph (an unknown key, a negative or oversized id, another type)."""
        if isinstance(node, str):
            k = self.lit_keys.find(node)
            return -1 - k if k >= 0 else None
        e = as_int(node)
        return e if e is not None and 0 <= e < len(self.titles) else None

    def decode(self, code: int) -> int | str:
        """The node of an encoded object (a doc id, or a literal key)."""
        return self._decode_one(code)

    def _decode_one(self, code: int) -> int | str:
        return code if code >= 0 else self.lit_keys[-1 - code]

    def _range_span(self, relation: str, lo: float, hi: float) -> tuple[int, int]:
        """The positions ``[a, b)`` of the measured facts of ``relation`` in ``[lo, hi]`` in
        the range arrays (two bisections; ``(0, 0)`` for an unknown relation)."""
        i = self._rel_index.get(relation)
        if i is None:
            return 0, 0
        b0, b1 = self._range_bounds[i], self._range_bounds[i + 1]
        values = self.range_vals[b0:b1]
        a = b0 + int(np.searchsorted(values, lo, side="left"))
        return a, b0 + int(np.searchsorted(values, hi, side="right"))

    def members(self, kind: str) -> frozenset[int]:
        """Entities of ``kind`` (built on first use, then kept: there are few kinds)."""
        got = self._members.get(kind)
        if got is None:
            code = self._kind_index.get(kind)
            ids = np.flatnonzero(self._kind_codes == code) if code is not None else ()
            got = frozenset(ids.tolist() if code is not None else ())  # type: ignore[union-attr]
            self._members[kind] = got
        return got

    def nbytes(self) -> int:
        """Bytes held by the graph's arrays and strings (the members cache aside)."""
        packed = [c for c in (self._fid, self._pid) if isinstance(c, BlockInts)]
        plain = [c for c in (self._fid, self._pid) if isinstance(c, np.ndarray)]
        arrays = [
            *plain, self.subj, self.rel, self.obj, self.val, self.fwd_rows,
            self.inv_obj, self.inv_subj, self.range_vals, self.range_subj,
            self.key_surf_val, self.key_alias_val, self.key_measure, self._kind_codes,
            self.val_measure,
        ]  # fmt: skip
        strings: list[Strings | Lists] = [self.titles, self.lit_keys, self.val_surfaces]
        strings += [self.redirects, self.val_aliases]
        rows = self.out_rows.nbytes() + self.in_rows.nbytes()
        held = sum(a.nbytes for a in arrays) + sum(s.nbytes() for s in strings) + rows
        return held + sum(c.nbytes() for c in packed)


class RelationRows(Mapping[int, tuple[int, ...]]):
    """subject -> its rows under one relation (its out rows, filtered: a few per subject)."""

    def __init__(self, graph: GraphData, code: int, lo: int, hi: int) -> None:
        self._g, self._code, self._lo, self._hi = graph, code, lo, hi

    def get(self, key: object, default: Any = _NONE) -> Any:
        e = as_int(key)
        g = self._g
        if e is None or not 0 <= e < g.n_nodes:
            return default
        rel, code = g.f_rel_codes, self._code
        got = tuple(r for r in g.out_rows.rows_of(e) if rel[r] == code)
        return got if got else default

    def __getitem__(self, key: int) -> tuple[int, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got

    def __contains__(self, key: object) -> bool:
        return self.get(key, None) is not None

    def subjects_array(self) -> np.ndarray:
        """The relation's subjects, ascending and unique."""
        g = self._g
        return np.unique(g.subj[g.fwd_rows[self._lo : self._hi]])

    def __iter__(self) -> Iterator[int]:
        return iter(self.subjects_array().tolist())

    def __len__(self) -> int:
        return len(self.subjects_array())


class Forward(Mapping[str, RelationRows]):
    """relation -> subject -> rows."""

    def get(self, key: str, default: Any = None) -> Any:
        return self._rel.get(key, default)

    def __init__(self, graph: GraphData, bounds: list[int]) -> None:
        names = graph.relation_names
        self._rel = {
            n: RelationRows(graph, i, bounds[i], bounds[i + 1]) for i, n in enumerate(names)
        }

    def __getitem__(self, key: str) -> RelationRows:
        return self._rel[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rel)

    def __len__(self) -> int:
        return len(self._rel)


class RelationSubjects(Mapping[int | str, frozenset[int]]):
    """object -> the subjects that have it under one relation (sorted unique pairs)."""

    def __init__(self, graph: GraphData, code: int, lo: int, hi: int, n_objects: int) -> None:
        self._g, self._code, self._lo, self._hi = graph, code, lo, hi
        self._n_objects = n_objects
        self._cache: dict[int, frozenset[int]] = {}

    def get(self, key: object, default: Any = None) -> Any:
        c = self._g.encode(key)
        if c is None:
            return default
        hit = self._cache.get(c)
        if hit is not None:
            return hit
        g = self._g
        a = bisect.bisect_left(g._inv_o, c, self._lo, self._hi)
        if a == self._hi or g._inv_o[a] != c:
            return default
        b = bisect.bisect_right(g._inv_o, c, a, self._hi)
        out = frozenset(g._inv_s[a:b])
        if b - a >= limits.CACHE_MIN:
            g._note_cached(b - a)
            self._cache[c] = out
        return out

    def __getitem__(self, key: int | str) -> frozenset[int]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got

    def codes(self) -> np.ndarray:
        """The encoded objects of the relation, ascending and unique."""
        return np.unique(self._g.inv_obj[self._lo : self._hi])

    def __iter__(self) -> Iterator[int | str]:
        keys = self._g.lit_keys
        for c in self.codes().tolist():
            yield c if c >= 0 else keys[-1 - c]

    def __len__(self) -> int:
        return self._n_objects

    def pairs(self) -> int:
        """(object, subject) pairs of the relation."""
        return self._hi - self._lo


class Inverse(Mapping[str, RelationSubjects]):
    """relation -> object -> subjects."""

    def get(self, key: str, default: Any = None) -> Any:
        return self._rel.get(key, default)

    def __init__(self, rel: dict[str, RelationSubjects]) -> None:
        self._rel = rel

    def __getitem__(self, key: str) -> RelationSubjects:
        return self._rel[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rel)

    def __len__(self) -> int:
        return len(self._rel)


class KindMembers(Mapping[str, frozenset[int]]):
    """kind -> its entities (each set built on first use)."""

    def __init__(self, graph: GraphData, kinds: list[str]) -> None:
        self._g, self._kinds = graph, kinds

    def __getitem__(self, key: str) -> frozenset[int]:
        if key not in self._g._kind_index:
            raise KeyError(key)
        return self._g.members(key)

    def __iter__(self) -> Iterator[str]:
        return iter(self._kinds)

    def __len__(self) -> int:
        return len(self._kinds)


class Aliases(Mapping[str, tuple[str, ...]]):
    """literal key -> its other accepted spellings (those of its first fact that has any)."""

    def __init__(self, graph: GraphData) -> None:
        self._g = graph

    def get(self, key: object, default: Any = None) -> Any:
        g = self._g
        k = g.lit_keys.find(key) if isinstance(key, str) else -1
        v = int(g.key_alias_val[k]) if k >= 0 else -1
        return g.val_aliases[v] if v >= 0 else default

    def __getitem__(self, key: str) -> tuple[str, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got

    def __iter__(self) -> Iterator[str]:
        g = self._g
        return (g.lit_keys[int(k)] for k in np.flatnonzero(g.key_alias_val >= 0))

    def __len__(self) -> int:
        return int(np.count_nonzero(self._g.key_alias_val >= 0))
