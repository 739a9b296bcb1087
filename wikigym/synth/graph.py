"""The knowledge graph synth walks: a snapshot's facts (and links) as in-memory indexes.

Built once per snapshot with DuckDB (:meth:`Snapshot.sql`), then only read. Nodes are
entities (article doc ids, ``int``) and literal values (their key, ``str``). Each fact is a
row of parallel lists; indexes map relation -> subject -> rows, relation -> object ->
subjects, entity -> rows in and out, and relation -> sorted measures for range filters.

World snapshots use their exact ``world`` facts. Other snapshots use the facts the
vocabularies typed from every source (``infobox``, ``lead``, ``category``, ``wikidata``;
:mod:`wikigym.corpora.factsources`), each once (a fact that restates another is left out):
their relation has a phrasing and their value parsed as its type. A fact the build located
in a passage of its subject is *stated* there; one stated only by its category line or its
Wikidata statement is kept (it makes evaluation complete) with passage ``UNSTATED``, and can
never be a task's only evidence (:mod:`wikigym.synth.generate`). Raw infobox keys and
untyped links (``links_to``) never make a question.
"""

from __future__ import annotations

import bisect
import math
import re
import threading
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from wikigym.corpora.lexicon import lexicon
from wikigym.corpora.manifest import TABLE_FILES
from wikigym.corpora.memory import give_back_freed_memory
from wikigym.corpora.snapshot import Snapshot
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SynthError
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
from wikigym.synth.idsets import EMPTY, as_ids, ids_of, intersect, unique_ids
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
T = TypeVar("T")

# A range is tested on the entities the other constraints leave when it covers this many
# times more facts than they are entities (an entity has a handful of facts to read, a
# built range is sorted once); a range built before and kept is bisected into instead.
# 4 and 16 measured within noise of each other on the 1M world (16 slightly ahead).
PROBE_RATIO = 16
_CACHE_MIN = 512  # subject sets at least this large are kept once built
_CACHE_CAP = 4_000_000  # members of the kept sets at most (then the cache starts afresh)


def _packed(values: np.ndarray) -> BlockInts | np.ndarray:
    """``values`` as block offsets when they pack, else as they are."""
    got = BlockInts.pack(values)
    return got if got is not None else values


def _spans(starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """The positions ``starts[i]..ends[i] - 1`` of every span, concatenated."""
    lengths = ends - starts
    total = int(lengths.sum())
    if not total:
        return np.zeros(0, dtype=np.int64)
    shift = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return shift + np.arange(total)


def _as_int(x: object) -> int | None:
    """``x`` as a Python int when it is an integer (numpy ones too), else None."""
    if type(x) is int:
        return x
    if isinstance(x, np.integer):
        return int(x)
    return None


class RowIndex(Mapping[int, tuple[int, ...]]):
    """entity -> its fact rows (in fact order): offsets per entity into an order of rows
    (``order`` None: the rows are already in entity order, so the order is the identity
    and is not stored)."""

    def __init__(self, order: np.ndarray | None, offsets: np.ndarray) -> None:
        self._order = order
        self._offsets = offsets
        self._o = mv(order) if order is not None else None
        self._off = mv(offsets)
        self._n = len(offsets) - 1

    def get(self, key: object, default: Any = _NONE) -> Any:
        e = _as_int(key)
        if e is None or not 0 <= e < self._n:
            return default
        a, b = self._off[e], self._off[e + 1]
        if b <= a:
            return default
        return tuple(self._o[a:b]) if self._o is not None else tuple(range(a, b))

    def rows_of(self, entity: int) -> Sequence[int]:
        """The rows of ``entity`` (a valid node id) as a sequence."""
        a, b = self._off[entity], self._off[entity + 1]
        return self._o[a:b] if self._o is not None else range(a, b)

    def rows_array(self, entity: int) -> np.ndarray:
        """The rows of ``entity`` (a valid node id) as an array."""
        a, b = self._off[entity], self._off[entity + 1]
        return self._order[a:b] if self._order is not None else np.arange(a, b)

    def rows_of_all(self, entities: np.ndarray) -> np.ndarray:
        """The rows of every entity in ``entities`` (valid node ids), concatenated."""
        off = self._offsets
        spans = _spans(off[entities], off[entities + 1])
        return self._order[spans] if self._order is not None else spans

    def rows_and_owners(self, entities: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`rows_of_all`, and beside each row the entity it belongs to."""
        off = self._offsets
        starts, ends = off[entities], off[entities + 1]
        spans = _spans(starts, ends)
        owners = np.repeat(entities, ends - starts)
        return (self._order[spans] if self._order is not None else spans), owners

    def nbytes(self) -> int:
        return self._offsets.nbytes + (self._order.nbytes if self._order is not None else 0)

    def __getitem__(self, key: int) -> tuple[int, ...]:
        got = self.get(key, None)
        if got is None:
            raise KeyError(key)
        return got

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
    """subject -> its rows under one relation (its out rows, filtered: a few per subject)."""

    def __init__(self, graph: KnowledgeGraph, code: int, lo: int, hi: int) -> None:
        self._g, self._code, self._lo, self._hi = graph, code, lo, hi

    def get(self, key: object, default: Any = _NONE) -> Any:
        e = _as_int(key)
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

    def __init__(self, graph: KnowledgeGraph, bounds: list[int]) -> None:
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

    def __init__(self, graph: KnowledgeGraph, kinds: list[str]) -> None:
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
        return got

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
        # Nodes below n_pages are articles; the rest are entities without a page (names
        # of unresolved links, values of real facts), set by build_graph.
        self.n_pages = len(titles)
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
        self._fid = _packed(facts["fact_id"])
        self.subj = facts["subject"]
        self.rel = facts["relation"]
        self.obj = facts["object"]
        self.val = facts["value"]
        # Source code per row (index into REAL_SOURCES); None for a world (all "world").
        self.src: np.ndarray | None = facts.get("source")
        self._pid = _packed(facts["passage_id"])
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
            self.f_surface[row],
            self.f_pid[row],
            self.f_vtype[row],
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

    def objects_of_all(self, relation: str, subjects: Iterable[object]) -> set[int | str]:
        """The objects of every entity in ``subjects`` under ``relation`` (one numpy pass
        over their out rows; other items are ignored)."""
        code = self._rel_index.get(relation)
        ids = self._entity_codes(subjects)
        if ids is None:
            ids = np.fromiter(
                (e for x in subjects if (e := _as_int(x)) is not None and 0 <= e < self.n_nodes),
                dtype=np.int64,
            )
        if code is None or not len(ids):
            return set()
        rows = self.out_rows.rows_of_all(ids)
        return self._decode(np.unique(self.obj[rows[self.rel[rows] == code]]))

    def subjects_of_all(self, relation: str, objects: Iterable[object]) -> set[int]:
        """The subjects that have some item of ``objects`` under ``relation`` (one numpy
        pass; items not in the graph are ignored)."""
        i = self._rel_index.get(relation)
        codes = self._entity_codes(objects)
        if codes is None:  # some literal keys among them: encode one by one
            codes = np.fromiter(
                (c for x in objects if (c := self.encode(x)) is not None), dtype=np.int64
            )
        if i is None or not len(codes):
            return set()
        rs = self._inverse[relation]
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return set(self.inv_subj[rs._lo + _spans(a, b)].tolist())

    def _entity_codes(self, items: Iterable[object]) -> np.ndarray | None:
        """The entities among ``items`` as codes when every item is an ``int`` (those outside
        the graph dropped), else None."""
        items = items if isinstance(items, Collection) else list(items)
        # fromiter would also take "12", 1.5 or True: only plain ints take this path.
        if not all(type(x) is int for x in items):
            return None
        try:
            ids = np.fromiter(items, dtype=np.int64, count=len(items))
        except OverflowError:  # an int past 64 bits: not a node, left to the slow path
            return None
        return ids[(ids >= 0) & (ids < self.n_nodes)]

    def _decode(self, codes: np.ndarray) -> set[int | str]:
        keys = self.lit_keys
        return {c if c >= 0 else keys[-1 - c] for c in codes.tolist()}

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

    def in_range(self, relation: str, lo: float, hi: float) -> frozenset[int]:
        """Subjects with a ``relation`` measure in ``[lo, hi]``."""
        a, b = self._range_span(relation, lo, hi)
        # Spans repeat (decades, centuries, round numbers): large sets are kept, keyed by
        # the rows they cover, within the same bound as the subject sets.
        key = (a, b)
        got = self._ranges.get(key)
        if got is None:
            got = frozenset(self.range_subj[a:b].tolist())
            if b - a >= _CACHE_MIN:
                self._ranges_held += b - a
                if self._ranges_held > _CACHE_CAP:  # bounded: start afresh rather than grow
                    self._ranges.clear()
                    self._ranges_held = b - a
                self._ranges[key] = got
        return got

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

    def stated(self, row: int) -> bool:
        """Whether fact ``row`` is stated in a passage (else only by its category line or
        Wikidata statement: never a task's only evidence)."""
        return self.f_pid[row] != UNSTATED

    def source_of(self, row: int) -> str:
        """The source that states fact ``row`` (``world``, ``infobox``, ``lead``,
        ``category``, ``wikidata``)."""
        return self.source if self.src is None else REAL_SOURCES[int(self.src[row])]

    # ---- whole-graph selections (numpy, for samplers) --------------------------------
    def rows_with(self, relations: Iterable[str]) -> np.ndarray:
        """A row mask: the rows whose relation is in ``relations``."""
        codes = [self._rel_index[r] for r in relations if r in self._rel_index]
        return np.isin(self.rel, np.array(sorted(codes), dtype=self.rel.dtype))

    def entity_rows(self) -> np.ndarray:
        """A row mask: the rows whose object is an entity."""
        return self.obj >= 0

    def relation_counts(self, usable: np.ndarray) -> np.ndarray:
        """Per node: in how many relations it has facts, counted once per relation on each
        side (as the subject, and as an entity object), for the relations whose codes are
        ``True`` in ``usable``. One pass over the (relation, subject)-sorted rows and the
        (relation, object)-sorted pairs: no sort."""
        counts = np.zeros(self.n_nodes, dtype=np.int64)
        fb = self._fwd_bounds
        for i, name in enumerate(self.relation_names):
            if not usable[i]:
                continue
            s = self.subj[self.fwd_rows[fb[i] : fb[i + 1]]]
            if len(s):
                first = np.ones(len(s), dtype=bool)
                np.not_equal(s[1:], s[:-1], out=first[1:])
                counts[s[first]] += 1
            rs = self._inverse[name]
            o = self.inv_obj[rs._lo : rs._hi]
            o = o[o >= 0]
            if len(o):
                first = np.ones(len(o), dtype=bool)
                np.not_equal(o[1:], o[:-1], out=first[1:])
                counts[o[first]] += 1
        return counts

    def single_literal_rows(self) -> np.ndarray:
        """A row mask: literal rows (or rows of an entity without a page: a name, asked
        as a literal is) whose subject has no other row under their relation."""
        order = self.fwd_rows
        r, s = self.rel[order], self.subj[order]
        start = np.ones(len(order), dtype=bool)
        start[1:] = (r[1:] != r[:-1]) | (s[1:] != s[:-1])
        group = np.cumsum(start) - 1
        sizes = np.bincount(group)
        single = np.zeros(len(order), dtype=bool)
        single[order] = sizes[group] == 1
        return single & ((self.obj < 0) | (self.obj >= self.n_pages))

    def shared_object_subjects(self, rel_a: str, rel_b: str) -> frozenset[int]:
        """Subjects with some object under both ``rel_a`` and ``rel_b``."""
        return frozenset(self.shared_object_ids(rel_a, rel_b).tolist())

    def shared_object_ids(self, rel_a: str, rel_b: str) -> np.ndarray:
        """:meth:`shared_object_subjects` as sorted ids."""
        a, b = self._rel_index.get(rel_a), self._rel_index.get(rel_b)
        if a is None or b is None:
            return EMPTY
        fb = self._fwd_bounds
        rows_a, rows_b = self.fwd_rows[fb[a] : fb[a + 1]], self.fwd_rows[fb[b] : fb[b + 1]]
        sa, sb = self.subj[rows_a], self.subj[rows_b]
        if not len(sa) or not len(sb):
            return EMPTY
        # Only subjects under both relations can qualify (both segments are sorted).
        both_a = sb[np.minimum(np.searchsorted(sb, sa), len(sb) - 1)] == sa
        both_b = sa[np.minimum(np.searchsorted(sa, sb), len(sa) - 1)] == sb

        def pairs(rows: np.ndarray) -> np.ndarray:
            return np.sort(
                (self.subj[rows].astype(np.int64) << 32) | (self.obj[rows].astype(np.int64) + 2**31)
            )

        ka, kb = pairs(rows_a[both_a]), pairs(rows_b[both_b])
        hit = ka[kb[np.minimum(np.searchsorted(kb, ka), len(kb) - 1)] == ka] if len(kb) else ka[:0]
        return unique_ids(hit >> 32)

    def functional(self, relation: str) -> bool:
        """Whether every subject of ``relation`` has at most one fact under it (one numpy
        pass over its (relation, subject)-sorted rows; kept once computed)."""
        key = ("functional", relation)
        got = self._relation_stats.get(key)
        if got is None:
            i = self._rel_index.get(relation)
            got = True
            if i is not None:
                fb = self._fwd_bounds
                s = self.subj[self.fwd_rows[fb[i] : fb[i + 1]]]
                got = not bool(np.any(s[1:] == s[:-1]))
            self._relation_stats[key] = got
        return bool(got)

    def object_kind(self, relation: str) -> str | None:
        """The commonest kind among the entity objects of ``relation``'s facts (ties: the
        kind name first in order; kept once computed)."""
        key = ("object_kind", relation)
        if key not in self._relation_stats:
            i = self._rel_index.get(relation)
            best: str | None = None
            if i is not None:
                fb = self._fwd_bounds
                o = self.obj[self.fwd_rows[fb[i] : fb[i + 1]]]
                k = self._kind_codes[o[o >= 0]]
                names = self.kinds.names
                counts = np.bincount(k[k >= 0], minlength=len(names))
                counts[[c for c, name in enumerate(names) if not name]] = 0
                if len(counts) and counts.max() > 0:
                    best = min(names[c] for c in np.flatnonzero(counts == counts.max()).tolist())
            self._relation_stats[key] = best
        got = self._relation_stats[key]
        return got if isinstance(got, str) else None

    def relation_kind(self, relation: str, side: str) -> str | None:
        """The one kind that every subject (``side="subject"``) or every entity object
        (``side="object"``) of ``relation`` has, or None (several kinds, or some entity
        without one). A set of such entities needs no filtering by that kind."""
        key = (side, relation)
        if key not in self._relation_kind:
            i = self._rel_index.get(relation)
            one: str | None = None
            if i is not None:
                fb = self._fwd_bounds
                rows = self.fwd_rows[fb[i] : fb[i + 1]]
                ents = self.subj[rows] if side == "subject" else self.obj[rows]
                codes = np.unique(self._kind_codes[ents[ents >= 0]])
                if len(codes) == 1 and codes[0] >= 0:
                    one = self.kinds.names[int(codes[0])]
            self._relation_kind[key] = one
        return self._relation_kind[key]

    def least_measures(self, relation: str, entities: np.ndarray) -> np.ndarray:
        """The least ``relation`` measure of each of ``entities`` (NaN: none), looked up in
        the relation's measured subjects (their least measures kept once computed)."""
        got = self._least.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                got = (np.zeros(0, dtype=self.subj.dtype), np.zeros(0))
            else:
                b = self._range_bounds
                subj, vals = self.range_subj[b[i] : b[i + 1]], self.range_vals[b[i] : b[i + 1]]
                # Sorted by measure: a subject's first position holds its least measure.
                uniq, first = np.unique(subj, return_index=True)
                got = (uniq, vals[first])
            self._least[relation] = got
        subj, vals = got
        out = np.full(len(entities), np.nan)
        if len(subj):
            j = np.minimum(np.searchsorted(subj, entities), len(subj) - 1)
            hit = subj[j] == entities
            out[hit] = vals[j[hit]]
        return out

    def measured_subjects(self, relation: str) -> frozenset[int]:
        """Subjects with a measured ``relation`` fact (kept once built: one per relation)."""
        got = self._measured.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                return frozenset()
            b = self._range_bounds
            got = frozenset(self.range_subj[b[i] : b[i + 1]].tolist())
            self._measured[relation] = got
        return got

    # ---- entity sets as sorted id arrays (wikigym.synth.idsets) ------------------------
    def _kept(
        self, key: tuple[str, int, int], size: int, build: Callable[[], np.ndarray]
    ) -> np.ndarray:
        """``build()``, kept when ``size`` is large (spans and objects repeat), within the
        same bound as the subject sets (then the kept arrays start afresh)."""
        if size < _CACHE_MIN:
            return build()
        got = self._id_sets.get(key)
        if got is None:
            got = build()
            got.flags.writeable = False
            self._id_sets_held += size
            if self._id_sets_held > _CACHE_CAP:
                self._id_sets.clear()
                self._id_sets_held = size
            self._id_sets[key] = got
        return got

    def subject_ids(self, relation: str, obj: int | str) -> np.ndarray:
        """:meth:`subjects` as sorted ids."""
        rs = self._inverse.get(relation)
        c = self.encode(obj)
        if rs is None or c is None:
            return EMPTY
        return self._subjects_of_code(rs, c)

    def subject_count(self, relation: str, code: int) -> int:
        """How many subjects have the encoded object ``code`` under ``relation`` (two
        bisections: no set is built)."""
        rs = self._inverse.get(relation)
        if rs is None:
            return 0
        a = bisect.bisect_left(self._inv_o, code, rs._lo, rs._hi)
        return bisect.bisect_right(self._inv_o, code, a, rs._hi) - a

    def most_subjects_of_codes(self, relation: str, codes: np.ndarray) -> int:
        """The most subjects any one encoded object of ``codes`` (sorted) has under
        ``relation``: a lower bound on the size of :meth:`subject_ids_of_codes` that bisects
        and builds no set."""
        rs = self._inverse.get(relation)
        if rs is None or not len(codes):
            return 0
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return int((b - a).max())

    def _subjects_of_code(self, rs: RelationSubjects, c: int) -> np.ndarray:
        a = bisect.bisect_left(self._inv_o, c, rs._lo, rs._hi)
        if a == rs._hi or self._inv_o[a] != c:
            return EMPTY
        b = bisect.bisect_right(self._inv_o, c, a, rs._hi)
        # A segment of the (relation, object, subject)-sorted pairs: sorted unique already.
        return self._kept(("s", a, b), b - a, lambda: as_ids(self.inv_subj[a:b]))

    def subject_ids_of_codes(self, relation: str, codes: np.ndarray) -> np.ndarray:
        """The subjects (sorted ids) that have some encoded object of ``codes`` under
        ``relation``."""
        rs = self._inverse.get(relation)
        if rs is None or not len(codes):
            return EMPTY
        if len(codes) == 1:
            return self._subjects_of_code(rs, int(codes[0]))
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return unique_ids(self.inv_subj[rs._lo + _spans(a, b)])

    def object_codes_of_ids(self, relation: str, ids: np.ndarray) -> np.ndarray:
        """The encoded objects (sorted unique: literal keys first) of the entities ``ids``
        (valid node ids) under ``relation``."""
        code = self._rel_index.get(relation)
        if code is None or not len(ids):
            return EMPTY
        if len(ids) == 1:
            obj, rel = self._obj_mv, self.f_rel_codes
            got = [obj[r] for r in self.out_rows.rows_of(int(ids[0])) if rel[r] == code]
            return ids_of(got)
        rows = self.out_rows.rows_of_all(ids)
        return unique_ids(self.obj[rows[self.rel[rows] == code]])

    def decode(self, code: int) -> int | str:
        """The node of an encoded object (a doc id, or a literal key)."""
        return self._decode_one(code)

    def _decode_one(self, code: int) -> int | str:
        return code if code >= 0 else self.lit_keys[-1 - code]

    def object_ids(self, relation: str, subject: int) -> np.ndarray:
        """The entity objects of ``subject`` under ``relation``, as sorted ids."""
        return ids_of(o for o in self.objects(relation, subject) if isinstance(o, int))

    def range_ids(self, relation: str, lo: float, hi: float) -> np.ndarray:
        """:meth:`in_range` as sorted ids."""
        a, b = self._range_span(relation, lo, hi)
        if a == b:
            return EMPTY
        return self._kept(("r", a, b), b - a, lambda: unique_ids(self.range_subj[a:b]))

    def kept(self, key: tuple[object, ...], build: Callable[[], T]) -> T:
        """``build()``, kept for the graph's life under ``key``: for the few values derived
        from the whole graph that every TaskSet drawn from it needs again (the sampler's
        pools), so a process that generates several pays for them once."""
        if key not in self._kept_values:
            self._kept_values[key] = build()
        return self._kept_values[key]  # type: ignore[return-value]

    def range_rows(self, relation: str, lo: float, hi: float) -> int:
        """How many measured facts of ``relation`` fall in ``[lo, hi]`` (two bisections: an
        upper bound on the size of :meth:`range_ids`, which is not built)."""
        a, b = self._range_span(relation, lo, hi)
        return b - a

    def probe_pays(self, n_ids: int, relation: str, lo: float, hi: float) -> bool:
        """Whether :meth:`ids_in_range` on ``n_ids`` entities reads their facts rather than
        bisecting into the range's set: the range covers PROBE_RATIO times more facts than
        that, and its set is not kept from before."""
        a, b = self._range_span(relation, lo, hi)
        return PROBE_RATIO * n_ids <= b - a and ("r", a, b) not in self._id_sets

    def ids_in_range(self, ids: np.ndarray, relation: str, lo: float, hi: float) -> np.ndarray:
        """The members of ``ids`` (sorted valid node ids) with a ``relation`` measure in
        ``[lo, hi]``: ``intersect(ids, range_ids(relation, lo, hi))``. When
        :meth:`probe_pays`, read from the facts of ``ids`` (O(their facts)) rather than
        built from the range (O(its size), which for "born before 1900" is a good part of
        the graph); else the range's set, built (and kept) or kept, is bisected into."""
        code = self._rel_index.get(relation)
        if code is None or not len(ids):
            return EMPTY
        if not self.probe_pays(len(ids), relation, lo, hi):
            return intersect(ids, self.range_ids(relation, lo, hi))
        rows, owners = self.out_rows.rows_and_owners(ids)
        mine = self.rel[rows] == code
        m = self.val_measure[self.val[rows[mine]]]
        inside = (m >= lo) & (m <= hi)  # NaN (no measure) compares false
        return unique_ids(owners[mine][inside])

    def member_ids(self, kind: str) -> np.ndarray:
        """:meth:`members` as sorted ids (kept: there are few kinds)."""
        got = self._member_ids.get(kind)
        if got is None:
            code = self._kind_index.get(kind)
            got = EMPTY if code is None else as_ids(np.flatnonzero(self._kind_codes == code))
            got.flags.writeable = False
            self._member_ids[kind] = got
        return got

    def ids_of_kind(self, ids: np.ndarray, kind: str | None) -> np.ndarray:
        """The members of ``ids`` (valid node ids) whose kind is ``kind`` (None: those
        without a kind)."""
        codes = self._kind_codes[ids]
        if kind is None:
            return ids[codes < 0]
        # One gather and compare: O(len(ids)), where intersecting with member_ids(kind)
        # bisects a set of up to every entity once per id.
        code = self._kind_index.get(kind)
        return ids[codes == code] if code is not None else ids[:0]

    def measured_ids(self, relation: str) -> np.ndarray:
        """:meth:`measured_subjects` as sorted ids (kept: one per relation)."""
        got = self._measured_ids.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                return EMPTY
            b = self._range_bounds
            got = unique_ids(self.range_subj[b[i] : b[i + 1]])
            got.flags.writeable = False
            self._measured_ids[relation] = got
        return got

    def entity_object_ids(self, relation: str) -> np.ndarray:
        """The distinct entity objects of ``relation``, as sorted ids (kept)."""
        got = self._object_ids.get(relation)
        if got is None:
            rs = self._inverse.get(relation)
            if rs is None:
                return EMPTY
            seg = self.inv_obj[rs._lo : rs._hi]
            seg = seg[seg >= 0]
            keep = np.ones(len(seg), dtype=bool)
            keep[1:] = seg[1:] != seg[:-1]
            got = as_ids(seg[keep])
            got.flags.writeable = False
            self._object_ids[relation] = got
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


# ---- the build: DuckDB scans and groups in bounded pieces, numpy joins and sorts ---------
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
UNSTATED = -1  # the passage of a fact stated in no passage (a category line, Wikidata)
REAL_SOURCES = ("infobox", "lead", "category", "wikidata")


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


def _dense(column: pa.ChunkedArray, doc_ids: np.ndarray, n: int) -> pa.Array:
    """``column`` (one value per article, in doc id order) laid out at positions 0..n-1."""
    arr = column.combine_chunks() if column.num_chunks else pa.array([], column.type)
    if len(doc_ids) == n and (n == 0 or (doc_ids[0] == 0 and doc_ids[-1] == n - 1)):
        return arr
    pos = np.full(n, -1, dtype=np.int64)
    pos[doc_ids] = np.arange(len(doc_ids))
    return arr.take(pa.array(pos, mask=pos < 0))


def _language(snapshot: Snapshot) -> str:
    language = snapshot.manifest.get("language") if isinstance(snapshot.manifest, dict) else None
    return str(language or "en")


def _instance_kind(cls: str | None, language: str | None) -> str | None:
    """The kind an ``instance_of`` value names: a world's as it is; a real wiki's class
    through the lexicon's English noun (``都道府県`` -> prefecture), else as an infobox type."""
    if cls is None or language is None:
        return cls
    lex = lexicon(language)
    noun = lex.kind_of(cls) if lex is not None else None
    return noun or _kind_of(cls)


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

    type_codes = np.array([code(_kind_of(t)) for t in types.dictionary.to_pylist()] + [-1])
    idx = types.indices.fill_null(len(types.dictionary)).to_numpy(zero_copy_only=False)
    kinds = type_codes[idx].astype(np.int32)
    if virtuals is not None:
        kinds = np.concatenate([kinds, np.array([code(k) for k in virtuals[1]], np.int32)])
    # An ``instance_of`` fact names the kind outright (the last one of an entity wins).
    subj, objs = instance
    if len(subj):
        enc = objs.dictionary_encode()
        obj_codes = np.array(
            [code(_instance_kind(k, language)) for k in enc.dictionary.to_pylist()] + [-1]
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
                and _clean_value("text", name := obj_title or obj)
                and clean_literal("text", name) is not None
            ):
                # An entity without a page in the snapshot (a link to an article it does
                # not hold, a name): a node of its own, so that chains can pass through it.
                keep[i] = entity[i] = virtual[i] = True
                surface, vt_out, vnames[i] = name, "entity", name
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

    def finish(self, used: np.ndarray) -> tuple[_Values, pa.Array]:
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
        values = _Values(
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


def build_graph(snapshot: Snapshot) -> KnowledgeGraph:
    """The graph of ``snapshot``: facts streamed from DuckDB ``CHUNK_FACTS`` at a time, the
    distinct object spellings grouped in DuckDB in hash pieces of ``PIECE_FACTS`` facts, so
    that neither DuckDB nor Python ever holds more than one piece of the table.

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
    graph = KnowledgeGraph(snapshot.snapshot_id, source, articles, facts, values, names)
    graph.n_pages = n_docs
    del articles, facts, values
    give_back_freed_memory()
    return graph


_CACHE: dict[tuple[str, str], KnowledgeGraph] = {}
_CACHE_LOCK = threading.Lock()


def forget_graphs() -> None:
    """Drop the graph :func:`graph_of` keeps (its memory goes back once nothing else holds it)."""
    with _CACHE_LOCK:
        _CACHE.clear()


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
