"""The knowledge graph synth walks: a snapshot's facts (and links) as in-memory indexes.

Built once per snapshot with DuckDB (:meth:`Snapshot.sql`), then only read. Nodes are
entities (article doc ids, ``int``) and literal values (their key, ``str``). Each fact is a
row of parallel lists; indexes map relation -> subject -> rows, relation -> object ->
subjects, entity -> rows in and out, and relation -> sorted measures for range filters.

World snapshots use their exact ``world`` facts. Other snapshots use only the ``infobox``
facts that the relation vocabulary typed (:mod:`wikigym.corpora.vocabulary`): their relation
has a phrasing, their value parsed as its type, and the build located the passage that
states it. Raw infobox keys and untyped links (``links_to``) never make a question.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from wikigym.corpora.snapshot import Snapshot
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SynthError
from wikigym.synth.columns import (
    Codes,
    Lists,
    Measures,
    Names,
    Nodes,
    Strings,
    Through,
    first_per_group,
    index_dtype,
)
from wikigym.synth.values import clean_literal

# Relations that never make a question: names, images, coordinates, ranks, codes.
SKIP_RELATIONS = frozenset(
    [
        "name",
        "common_name",
        "conventional_long_name",
        "native_name",
        "image",
        "caption",
        "image_caption",
        "website",
        "logo",
        "map",
        "signature",
        "alt",
        "image_map",
        "map_caption",
        "image_flag",
        "image_coat",
        "footnotes",
        "latd",
        "latm",
        "lats",
        "latns",
        "longd",
        "longm",
        "longs",
        "longew",
        "coordinates",
        "coordinates_display",
        "population_density_rank",
        "area_rank",
        "population_estimate_rank",
        "gdp_ppp_rank",
        "gdp_nominal_rank",
        "hdi_rank",
        "symbol_type",
        "cctld",
        "calling_code",
        "time_zone",
        "utc_offset",
        "drives_on",
        "iso3166code",
        "currency_code",
        "instance_of",
        "title",
        "module",
        "years_active",
    ]
)
_PERSONLIKE = frozenset(
    {
        "person", "philosopher", "writer", "scientist", "officeholder", "tennis biography",
        "artist", "military person", "royalty", "politician", "actor", "football biography",
        "sportsperson", "astronaut", "president", "prime minister", "monarch", "saint",
    }
)  # fmt: skip
# Infobox values that are placeholders or template residue rather than facts.
_JUNK_VALUES = frozenset({"date", "utc", "yes", "no", "none", "unknown", "capital", "n/a", "see"})
_HAS_WORD = re.compile(r"[^\W\d_]{3}")
_KIND = re.compile(r"^[a-z][a-z .]{1,24}$")
_KIND_MAP = {
    "settlement": "city",
    "u.s. state": "state",
    "province or territory of canada": "province",
}


# Nouns of the vocabulary's kind groups, for infobox types that are not English nouns
# ("漫画家", "基礎情報 国" -> "国").
_GROUP_NOUNS = {
    "person": "person",
    "place": "place",
    "organisation": "organisation",
    "work": "work",
    "event": "event",
    "award": "award",
    "language": "language",
    "medical": "condition",
}


def _kind_of(infobox_type: str | None) -> str | None:
    if not infobox_type:
        return None
    t = infobox_type.strip().lower()
    if t in _PERSONLIKE:
        return "person"
    t = _KIND_MAP.get(t, t)
    if _KIND.match(t):
        return t
    group = vocabulary().kind(t)
    return _GROUP_NOUNS.get(group) if group else None


def _clean_value(value_type: str, value: str) -> bool:
    """Whether a typed infobox literal reads as an answer: dates and numbers parsed at
    build; a text needs a word of three letters and must not be a placeholder."""
    if value_type in ("date", "number"):
        return True
    v = value.strip()
    return bool(_HAS_WORD.search(v)) and v.casefold() not in _JUNK_VALUES


@dataclass(frozen=True, slots=True)
class FactRow:
    """One fact of the graph (a view over its columns)."""

    row: int
    fact_id: int
    subject: int
    relation: str
    obj: int | str
    surface: str
    passage_id: int
    value_type: str


_NONE: tuple[int, ...] = ()
_CACHE_MIN = 512  # subject sets at least this large are kept once built
_CACHE_CAP = 4_000_000  # members of the kept sets at most (then the cache starts afresh)


def _as_int(x: object) -> int | None:
    """``x`` as a Python int when it is an integer (numpy ones too), else None."""
    if type(x) is int:
        return x
    if isinstance(x, np.integer):
        return int(x)
    return None


class RowIndex(Mapping[int, tuple[int, ...]]):
    """entity -> its fact rows (in fact order): offsets per entity into an order of rows."""

    def __init__(self, order: np.ndarray, offsets: np.ndarray) -> None:
        self._order = order
        self._offsets = offsets
        self._o = memoryview(order)
        self._off = memoryview(offsets)
        self._n = len(offsets) - 1

    def get(self, key: object, default: Any = _NONE) -> Any:
        e = _as_int(key)
        if e is None or not 0 <= e < self._n:
            return default
        a, b = self._off[e], self._off[e + 1]
        return tuple(self._o[a:b]) if b > a else default

    def __getitem__(self, key: int) -> tuple[int, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got  # type: ignore[no-any-return]

    def keys_array(self) -> np.ndarray:
        """The entities with at least one row, ascending."""
        return np.flatnonzero(np.diff(self._offsets)).astype(np.int64)

    def __iter__(self) -> Iterator[int]:
        return iter(self.keys_array().tolist())

    def __len__(self) -> int:
        return int(np.count_nonzero(np.diff(self._offsets)))

    def __contains__(self, key: object) -> bool:
        return self.get(key, None) is not None


class RelationRows(Mapping[int, tuple[int, ...]]):
    """subject -> its rows under one relation (a sorted segment of (subject, row) pairs)."""

    def __init__(self, subj: np.ndarray, rows: np.ndarray, lo: int, hi: int) -> None:
        self._subj = subj
        self._s, self._r, self._lo, self._hi = memoryview(subj), memoryview(rows), lo, hi

    def get(self, key: object, default: Any = _NONE) -> Any:
        s = _as_int(key)
        if s is None:
            return default
        a = bisect.bisect_left(self._s, s, self._lo, self._hi)
        if a == self._hi or self._s[a] != s:
            return default
        b = bisect.bisect_right(self._s, s, a, self._hi)
        return tuple(self._r[a:b])

    def __getitem__(self, key: int) -> tuple[int, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got  # type: ignore[no-any-return]

    def __contains__(self, key: object) -> bool:
        return self.get(key, None) is not None

    def __iter__(self) -> Iterator[int]:
        return iter(np.unique(self._subj[self._lo : self._hi]).tolist())

    def __len__(self) -> int:
        seg = self._subj[self._lo : self._hi]
        return int(np.count_nonzero(np.diff(seg)) + 1) if len(seg) else 0


class Forward(Mapping[str, RelationRows]):
    """relation -> subject -> rows."""

    def __init__(self, names: list[str], bounds: np.ndarray, subj: np.ndarray, rows: np.ndarray):
        b = bounds.tolist()
        self._rel = {n: RelationRows(subj, rows, b[i], b[i + 1]) for i, n in enumerate(names)}

    def __getitem__(self, key: str) -> RelationRows:
        return self._rel[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rel)

    def __len__(self) -> int:
        return len(self._rel)


class RelationSubjects(Mapping[int | str, frozenset[int]]):
    """object -> the subjects that have it under one relation (sorted unique pairs)."""

    def __init__(self, graph: KnowledgeGraph, code: int, lo: int, hi: int, n_objects: int) -> None:
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
        if b - a >= _CACHE_MIN:
            g._note_cached(b - a)
            self._cache[c] = out
        return out

    def __getitem__(self, key: int | str) -> frozenset[int]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got  # type: ignore[no-any-return]

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

    def __init__(self, rel: dict[str, RelationSubjects]) -> None:
        self._rel = rel

    def __getitem__(self, key: str) -> RelationSubjects:
        return self._rel[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._rel)

    def __len__(self) -> int:
        return len(self._rel)


class Aliases(Mapping[str, tuple[str, ...]]):
    """literal key -> its other accepted spellings (those of its first fact that has any)."""

    def __init__(self, graph: KnowledgeGraph) -> None:
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
        return got  # type: ignore[no-any-return]

    def __iter__(self) -> Iterator[str]:
        g = self._g
        return (g.lit_keys[int(k)] for k in np.flatnonzero(g.key_alias_val >= 0))

    def __len__(self) -> int:
        return int(np.count_nonzero(self._g.key_alias_val >= 0))


@dataclass(slots=True)
class _Values:
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


class KnowledgeGraph:
    """Facts of one snapshot as numpy columns and sorted indexes; build with
    :meth:`from_snapshot`.

    Rows are the kept facts in ``fact_id`` order. A node is an entity (its doc id, ``int``)
    or a literal key (``str``); inside, an object is encoded as one integer: the doc id, or
    ``-1 - k`` for the literal key of id ``k`` (keys are sorted, so ids follow key order).
    Every index is a sort of the rows (CSR offsets or sorted segments searched by bisection),
    so lookups return sorted ids and never depend on hash or insertion order.
    """

    def __init__(
        self,
        snapshot_id: str,
        source: str,
        articles: tuple[Strings, Lists, np.ndarray, list[str]],
        facts: dict[str, np.ndarray],
        values: _Values,
        relation_names: list[str],
    ) -> None:
        self.snapshot_id = snapshot_id
        self.source = source
        titles, redirects, kind_codes, kind_names = articles
        self.titles = titles
        self.redirects = redirects
        self._kind_codes = kind_codes
        self.kinds = Codes(kind_codes, kind_names)
        self._kind_index = {k: i for i, k in enumerate(kind_names)}
        self._members: dict[str, frozenset[int]] = {}
        self.lit_keys = values.keys
        self.val_aliases = values.aliases
        self.val_surfaces = values.surfaces
        self.val_measure = values.measure
        self.relation_names = relation_names
        self._rel_index = {r: i for i, r in enumerate(relation_names)}
        # Fact columns (rows in fact order).
        self.fid = facts["fact_id"]
        self.subj = facts["subject"]
        self.rel = facts["relation"]
        self.obj = facts["object"]
        self.val = facts["value"]
        self.pid = facts["passage_id"]
        self.f_id = memoryview(self.fid)
        self.f_subj = memoryview(self.subj)
        self.f_pid = memoryview(self.pid)
        self.f_rel = Names(self.rel, relation_names)
        self.f_obj = Nodes(self.obj, values.keys)
        self.f_surface = Through(self.val, values.surfaces)
        self.f_vtype = Through(self.val, Names(values.vtype, values.vtype_names))
        self.f_measure = Measures(values.measure, self.val)
        self._obj_mv = memoryview(self.obj)
        self._index(values)

    # ---- building ------------------------------------------------------------------
    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> KnowledgeGraph:
        """Load the facts of ``snapshot`` into columns, streamed from DuckDB in chunks.

        Raises:
            SynthError: The snapshot has no usable fact.
        """
        return build_graph(snapshot)

    def _index(self, values: _Values) -> None:
        m, n_rel = len(self.rel), len(self.relation_names)
        n = len(self.titles)
        rows_dt = index_dtype(m)
        rel_bounds = np.arange(n_rel + 1)
        # entity -> rows out (subject) and in (entity object), rows in fact order.
        order = np.argsort(self.subj, kind="stable").astype(rows_dt)
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(self.subj, minlength=n), out=off[1:])
        self.out_rows = RowIndex(order, off)
        ent_rows = np.flatnonzero(self.obj >= 0).astype(rows_dt)
        ent_obj = self.obj[ent_rows]
        order = ent_rows[np.argsort(ent_obj, kind="stable")]
        off = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(np.bincount(ent_obj, minlength=n), out=off[1:])
        self.in_rows = RowIndex(order, off)
        del ent_rows, ent_obj
        # relation -> subject -> rows: rows sorted by (relation, subject), stable.
        order = np.lexsort((self.subj, self.rel)).astype(rows_dt)
        self.fwd_rows = order
        self.fwd_subj = self.subj[order]
        self._fwd_bounds = np.searchsorted(self.rel[order], rel_bounds).tolist()
        self.fwd = Forward(self.relation_names, np.array(self._fwd_bounds), self.fwd_subj, order)
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
        self._inv_o, self._inv_s = memoryview(self.inv_obj), memoryview(self.inv_subj)
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
        mr, mv, ms = self.rel[has], meas[has], self.subj[has]
        del meas, has
        order = np.lexsort((ms, mv, mr))
        self.range_vals, self.range_subj = mv[order], ms[order]
        self._range_bounds = np.searchsorted(mr[order], rel_bounds).tolist()
        del mr, mv, ms, order
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
        if self._cached > _CACHE_CAP:  # bounded: start afresh rather than grow
            for rs in self._inverse.values():
                rs._cache.clear()
            self._cached = size

    # ---- reading -------------------------------------------------------------------
    def encode(self, node: object) -> int | None:
        """The integer code of an entity or a literal key, or None when it is neither in the
        graph (an unknown key, a negative or oversized id, another type)."""
        if isinstance(node, str):
            k = self.lit_keys.find(node)
            return -1 - k if k >= 0 else None
        e = _as_int(node)
        return e if e is not None and 0 <= e < len(self.titles) else None

    def fact(self, row: int) -> FactRow:
        return FactRow(
            row,
            self.f_id[row],
            self.f_subj[row],
            self.f_rel[row],
            self.f_obj[row],
            self.f_surface[row],  # type: ignore[arg-type]
            self.f_pid[row],
            self.f_vtype[row],  # type: ignore[arg-type]
        )

    def objects(self, relation: str, subject: int) -> tuple[int | str, ...]:
        """Objects of ``subject`` under ``relation`` (in fact order)."""
        rows = self.fwd[relation].get(subject) if relation in self._rel_index else ()
        obj = self.f_obj
        return tuple(obj[r] for r in rows)

    def subjects(self, relation: str, obj: int | str) -> frozenset[int]:
        """Subjects that have ``obj`` under ``relation``."""
        rs = self._inverse.get(relation)
        got = rs.get(obj) if rs is not None else None
        return got if got is not None else frozenset()

    def find_row(self, subject: int, relation: str, obj: int | str) -> int | None:
        """The first fact row ``(subject, relation, obj)``, or None."""
        c = self.encode(obj)
        if c is None or relation not in self._rel_index:
            return None
        mv = self._obj_mv
        for r in self.fwd[relation].get(subject):
            if mv[r] == c:
                return r
        return None

    def in_range(self, relation: str, lo: float, hi: float) -> frozenset[int]:
        """Subjects with a ``relation`` measure in ``[lo, hi]``."""
        i = self._rel_index.get(relation)
        if i is None:
            return frozenset()
        b0, b1 = self._range_bounds[i], self._range_bounds[i + 1]
        values = self.range_vals[b0:b1]
        a = int(np.searchsorted(values, lo, side="left"))
        b = int(np.searchsorted(values, hi, side="right"))
        return frozenset(self.range_subj[b0 + a : b0 + b].tolist())

    def members(self, kind: str) -> frozenset[int]:
        """Entities of ``kind`` (built on first use, then kept: there are few kinds)."""
        got = self._members.get(kind)
        if got is None:
            code = self._kind_index.get(kind)
            ids = np.flatnonzero(self._kind_codes == code) if code is not None else ()
            got = frozenset(ids.tolist() if code is not None else ())  # type: ignore[union-attr]
            self._members[kind] = got
        return got

    def surface(self, node: int | str) -> str:
        """The name of an entity or the surface form of a literal key."""
        if isinstance(node, int):
            return self.titles[node]
        k = self.lit_keys.find(node)
        return self.val_surfaces[int(self.key_surf_val[k])] if k >= 0 else node

    def literal_measure(self, key: str) -> float | None:
        """The measure of a literal key (that of its first fact with one), or None."""
        k = self.lit_keys.find(key)
        m = float(self.key_measure[k]) if k >= 0 else math.nan
        return None if math.isnan(m) else m

    def relations(self) -> list[str]:
        return list(self.relation_names)

    # ---- whole-graph selections (numpy, for samplers) --------------------------------
    def rows_with(self, relations: Iterable[str]) -> np.ndarray:
        """A row mask: the rows whose relation is in ``relations``."""
        codes = [self._rel_index[r] for r in relations if r in self._rel_index]
        return np.isin(self.rel, np.array(sorted(codes), dtype=self.rel.dtype))

    def entity_rows(self) -> np.ndarray:
        """A row mask: the rows whose object is an entity."""
        return self.obj >= 0

    def single_literal_rows(self) -> np.ndarray:
        """A row mask: literal rows whose subject has no other row under their relation."""
        order = self.fwd_rows
        r, s = self.rel[order], self.fwd_subj
        start = np.ones(len(order), dtype=bool)
        start[1:] = (r[1:] != r[:-1]) | (s[1:] != s[:-1])
        group = np.cumsum(start) - 1
        sizes = np.bincount(group)
        single = np.zeros(len(order), dtype=bool)
        single[order] = sizes[group] == 1
        return single & (self.obj < 0)

    def shared_object_subjects(self, rel_a: str, rel_b: str) -> frozenset[int]:
        """Subjects with some object under both ``rel_a`` and ``rel_b``."""
        a, b = self._rel_index.get(rel_a), self._rel_index.get(rel_b)
        if a is None or b is None:
            return frozenset()

        def pairs(code: int) -> np.ndarray:
            rows = self.fwd_rows[self._fwd_bounds[code] : self._fwd_bounds[code + 1]]
            return (self.subj[rows].astype(np.int64) << 32) | (
                self.obj[rows].astype(np.int64) + 2**31
            )

        both = np.intersect1d(pairs(a), pairs(b))
        return frozenset(np.unique(both >> 32).tolist())

    def nbytes(self) -> int:
        """Bytes held by the graph's arrays and strings (the members cache aside)."""
        arrays = [
            self.fid, self.subj, self.rel, self.obj, self.val, self.pid, self.fwd_rows,
            self.fwd_subj, self.inv_obj, self.inv_subj, self.range_vals, self.range_subj,
            self.key_surf_val, self.key_alias_val, self.key_measure, self._kind_codes,
            self.val_measure, self.out_rows._order, self.out_rows._offsets,
            self.in_rows._order, self.in_rows._offsets,
        ]  # fmt: skip
        strings = [self.titles, self.lit_keys, self.val_surfaces]
        return sum(a.nbytes for a in arrays) + sum(s.nbytes() for s in strings)


# ---- the build: DuckDB sorts and groups, Python sees each distinct value once ------------
CHUNK_FACTS = 1_000_000  # facts fetched per query while streaming the table

# Each fact's object, spelled as one string that tells spellings apart exactly (lengths
# prefix the fields, so no separator inside a value can make two spellings collide).
_VKEY = (
    "concat(CASE WHEN f.value_type = 'entity' AND f.object_doc_id IS NOT NULL THEN 'e' ELSE 'l'"
    " END, length(coalesce(f.value_type, '')), ':', coalesce(f.value_type, ''),"
    " length(coalesce(f.object, '')), ':', coalesce(f.object, ''),"
    " CASE WHEN f.object_title IS NULL THEN '-' ELSE '+' || f.object_title END)"
)


def _fact_filter(source: str) -> str:
    # Real data: typed facts only, located by the build in a passage of their subject.
    typed = "" if source == "world" else " AND f.typed AND p.doc_id = f.subject_doc_id"
    return (
        "FROM facts f JOIN passages p ON p.passage_id = f.passage_id"
        f" WHERE f.source = ? AND f.subject_doc_id IS NOT NULL{typed}"
    )


def _dense(column: pa.ChunkedArray, doc_ids: np.ndarray, n: int) -> pa.Array:
    """``column`` (one value per article, in doc id order) laid out at positions 0..n-1."""
    arr = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if len(doc_ids) == n and (n == 0 or (doc_ids[0] == 0 and doc_ids[-1] == n - 1)):
        return arr
    pos = np.full(n, -1, dtype=np.int64)
    pos[doc_ids] = np.arange(len(doc_ids))
    return arr.take(pa.array(pos, mask=pos < 0))


def _articles(
    snapshot: Snapshot, n: int, instance: tuple[np.ndarray, pa.Array]
) -> tuple[Strings, Lists, np.ndarray, list[str]]:
    arts = snapshot.sql(
        "SELECT doc_id, title, redirects_from, infobox_type FROM articles ORDER BY doc_id"
    )
    doc_ids = arts.column("doc_id").to_numpy()
    titles = Strings.from_arrow(_dense(arts.column("title"), doc_ids, n))
    redirects = Lists.from_arrow(_dense(arts.column("redirects_from"), doc_ids, n))
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

    type_codes = np.array([code(_kind_of(t)) for t in types.dictionary.to_pylist()] + [-1])
    idx = types.indices.fill_null(len(types.dictionary)).to_numpy(zero_copy_only=False)
    kinds = type_codes[idx].astype(np.int32)
    # An ``instance_of`` fact names the kind outright (the last one of an entity wins).
    subj, objs = instance
    if len(subj):
        enc = objs.dictionary_encode()
        obj_codes = np.array([code(k) for k in enc.dictionary.to_pylist()] + [-1])
        oi = enc.indices.fill_null(len(enc.dictionary)).to_numpy(zero_copy_only=False)
        rev = subj[::-1]
        uniq, last = np.unique(rev, return_index=True)
        inside = uniq < n
        kinds[uniq[inside]] = obj_codes[oi[::-1][last[inside]]]
    return titles, redirects, kinds, names


def _values(rows: pa.Table, source: str) -> _Values:
    """Clean each distinct object spelling once: what it reads as, or that it is dropped."""
    n = rows.num_rows
    keep = np.zeros(n, dtype=bool)
    entity = rows.column("ent").to_numpy(zero_copy_only=False).astype(bool)
    measure = np.full(n, np.nan)
    vtypes = np.zeros(n, dtype=np.int16)
    vt_names: list[str] = []
    vt_index: dict[str, int] = {}
    surfaces: list[str] = []
    key_of: list[str | None] = []
    aliases: list[str] = []
    alias_off = np.zeros(n + 1, dtype=np.int64)
    it = zip(
        rows.column("vt").to_pylist(),
        rows.column("obj").to_pylist(),
        rows.column("ot").to_pylist(),
        strict=True,
    )
    for i, (vt, obj, obj_title) in enumerate(it):
        obj = obj or ""
        surface, key, vt_out, extra = "", None, "", ()
        if entity[i]:
            keep[i], surface, vt_out = True, obj_title or obj, "entity"
        elif source == "world" or _clean_value(vt, obj):
            lit = clean_literal("text" if vt == "entity" else vt, obj)
            if lit is not None:
                keep[i], surface, key = True, lit.surface, lit.key
                vt_out = "text" if vt == "entity" else vt
                extra = lit.aliases
                if obj_title and obj_title != lit.surface and clean_literal("text", obj_title):
                    extra = (*extra, obj_title)
                if lit.measure is not None:
                    measure[i] = lit.measure
        if vt_out not in vt_index:
            vt_index[vt_out] = len(vt_names)
            vt_names.append(vt_out)
        vtypes[i] = vt_index[vt_out]
        surfaces.append(surface)
        key_of.append(key)
        aliases.extend(extra)
        alias_off[i + 1] = len(aliases)
    keys = sorted({k for k in key_of if k is not None})
    kid = {k: i for i, k in enumerate(keys)}
    key = np.array([kid[k] if k is not None else -1 for k in key_of], dtype=np.int32)
    return _Values(
        keep,
        entity,
        key,
        vtypes,
        measure,
        vt_names,
        Strings.from_list(surfaces),
        Lists(Strings.from_list(aliases), alias_off),
        Strings.from_list(keys),
    )


def build_graph(snapshot: Snapshot) -> KnowledgeGraph:
    """The graph of ``snapshot``, its facts streamed from DuckDB ``CHUNK_FACTS`` at a time.

    Raises:
        SynthError: The snapshot has no usable fact.
    """
    world = snapshot.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'")
    source = "world" if world.column("n")[0].as_py() > 0 else "infobox"
    where = _fact_filter(source)
    skip = sorted(SKIP_RELATIONS)
    kept = f"{where} AND NOT list_contains(?, f.relation)"
    inst = snapshot.sql(
        f"SELECT f.subject_doc_id AS s, f.object AS o {where} AND f.relation = 'instance_of'"
        " ORDER BY f.fact_id",
        [source],
    )
    bounds = snapshot.sql("SELECT min(doc_id) AS lo, max(doc_id) AS hi FROM articles").to_pylist()[
        0
    ]
    span = snapshot.sql(
        "SELECT min(fact_id) AS lo, max(fact_id) AS hi, count(*) AS n, max(subject_doc_id) AS s,"
        f" max(object_doc_id) AS o {kept}",
        [source, skip],
    ).to_pylist()[0]
    top = max(bounds["hi"] if bounds["hi"] is not None else -1, span["s"] or 0, span["o"] or 0)
    n_docs = top + 1
    # The distinct object spellings, in order of their first fact.
    distinct = snapshot.sql(
        f"SELECT v AS vkey, any_value(ent) AS ent, any_value(vt) AS vt, any_value(obj) AS obj,"
        " any_value(ot) AS ot, min(fid) AS first FROM (SELECT "
        f"{_VKEY} AS v, (f.value_type = 'entity' AND f.object_doc_id IS NOT NULL) AS ent,"
        " f.value_type AS vt, f.object AS obj, f.object_title AS ot, f.fact_id AS fid"
        f" {kept}) GROUP BY v ORDER BY first",
        [source, skip],
    )
    values = _values(distinct, source)
    vset = distinct.column("vkey").combine_chunks()
    del distinct
    rel_names: list[str] = []
    rel_index: dict[str, int] = {}
    parts: dict[str, list[np.ndarray]] = {
        k: [] for k in ("fact_id", "subject", "relation", "object", "value", "passage_id")
    }
    if span["n"]:
        lo, hi = int(span["lo"]), int(span["hi"])
        step = max(1, -(-(hi - lo + 1) * CHUNK_FACTS // int(span["n"])))
        for start in range(lo, hi + 1, step):
            t = snapshot.sql(
                "SELECT f.fact_id, f.subject_doc_id, f.relation, f.object_doc_id, f.passage_id,"
                f" {_VKEY} AS vkey {kept} AND f.fact_id >= ? AND f.fact_id < ?"
                " ORDER BY f.fact_id",
                [source, skip, start, start + step],
            )
            vi = pc.index_in(t.column("vkey"), value_set=vset).to_numpy(zero_copy_only=False)
            subj = t.column("subject_doc_id").to_numpy()
            odoc = t.column("object_doc_id").fill_null(-1).to_numpy()
            ent = values.entity[vi]
            ok = values.keep[vi] & ~(ent & (odoc == subj))
            rels = t.column("relation").combine_chunks().dictionary_encode()
            local_names = rels.dictionary.to_pylist()
            for name in local_names:
                if name not in rel_index:
                    rel_index[name] = len(rel_names)
                    rel_names.append(name)
            local = np.array([rel_index[x] for x in local_names], dtype=np.int32)
            rcode = local[rels.indices.to_numpy(zero_copy_only=False)] if len(local) else local
            obj = np.where(ent, odoc, -1 - values.key[vi].astype(np.int64))
            parts["fact_id"].append(t.column("fact_id").to_numpy()[ok])
            parts["subject"].append(subj[ok])
            parts["relation"].append(rcode[ok])
            parts["object"].append(obj[ok])
            parts["value"].append(vi[ok])
            parts["passage_id"].append(t.column("passage_id").to_numpy()[ok])
            del t, vi, subj, odoc, ent, ok, rels, obj
    del vset
    m = sum(len(a) for a in parts["fact_id"])
    if m == 0:
        raise SynthError(
            f"snapshot {snapshot.path} has no clean {source} fact typed by the relation "
            "vocabulary to build questions from; use a snapshot built from a generated "
            "world or from pages with infoboxes (`corpus info` counts the facts)"
        )
    facts = {k: np.concatenate(v) for k, v in parts.items()}
    del parts
    # Relation codes in name order, so that every relation listing is sorted.
    by_name = sorted(range(len(rel_names)), key=rel_names.__getitem__)
    remap = np.empty(len(rel_names), dtype=np.int16 if len(rel_names) < 2**15 else np.int32)
    remap[by_name] = np.arange(len(rel_names))
    facts["relation"] = remap[facts["relation"]]
    names = [rel_names[i] for i in by_name]
    used = np.unique(facts["relation"])
    if len(used) < len(names):  # relations whose every fact was dropped
        keep_names = [names[i] for i in used.tolist()]
        squeeze = np.full(len(names), -1, dtype=facts["relation"].dtype)
        squeeze[used] = np.arange(len(used))
        facts["relation"], names = squeeze[facts["relation"]], keep_names
    nodes_dt = index_dtype(max(n_docs, len(values.keys)))
    facts["fact_id"] = facts["fact_id"].astype(
        index_dtype(max(abs(int(facts["fact_id"].min())), int(facts["fact_id"].max())))
    )
    facts["passage_id"] = facts["passage_id"].astype(
        index_dtype(max(abs(int(facts["passage_id"].min())), int(facts["passage_id"].max())))
    )
    facts["subject"] = facts["subject"].astype(nodes_dt)
    facts["object"] = facts["object"].astype(nodes_dt)
    facts["value"] = facts["value"].astype(index_dtype(len(values.keep)))
    inst_s = inst.column("s").to_numpy()
    articles = _articles(snapshot, n_docs, (inst_s, inst.column("o").combine_chunks()))
    del inst
    return KnowledgeGraph(snapshot.snapshot_id, source, articles, facts, values, names)


_CACHE: dict[tuple[str, str], KnowledgeGraph] = {}
_CACHE_LOCK = threading.Lock()


def graph_of(snapshot: Snapshot) -> KnowledgeGraph:
    """The graph of ``snapshot``, built once per process and snapshot."""
    key = (str(snapshot.path), snapshot.snapshot_id)
    with _CACHE_LOCK:
        g = _CACHE.get(key)
        if g is None:
            _CACHE.clear()  # one graph at a time: they are large
            g = KnowledgeGraph.from_snapshot(snapshot)
            _CACHE[key] = g
        return g
