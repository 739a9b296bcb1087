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

import re
import threading
from collections import defaultdict
from dataclasses import dataclass

import numpy as np

from wikigym.corpora.snapshot import Snapshot
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SynthError
from wikigym.synth.values import Literal, clean_literal

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
    """One fact of the graph (a view over the parallel lists)."""

    row: int
    fact_id: int
    subject: int
    relation: str
    obj: int | str
    surface: str
    passage_id: int
    value_type: str


class KnowledgeGraph:
    """Facts of one snapshot as indexes; build with :meth:`from_snapshot`."""

    def __init__(self, snapshot_id: str, source: str, titles: list[str]) -> None:
        self.snapshot_id = snapshot_id
        self.source = source
        self.titles = titles
        self.redirects: list[tuple[str, ...]] = [() for _ in titles]
        self.kinds: list[str | None] = [None] * len(titles)
        self.kind_members: dict[str, frozenset[int]] = {}
        # Parallel fact columns.
        self.f_id: list[int] = []
        self.f_subj: list[int] = []
        self.f_rel: list[str] = []
        self.f_obj: list[int | str] = []
        self.f_surface: list[str] = []
        self.f_pid: list[int] = []
        self.f_vtype: list[str] = []
        self.f_measure: list[float | None] = []
        self.literal_aliases: dict[str, tuple[str, ...]] = {}
        # Indexes.
        self.fwd: dict[str, dict[int, tuple[int, ...]]] = {}
        self.inv: dict[str, dict[int | str, frozenset[int]]] = {}
        self.out_rows: dict[int, tuple[int, ...]] = {}
        self.in_rows: dict[int, tuple[int, ...]] = {}
        self.ranges: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        self.rel_types: dict[str, str] = {}
        self.literal_surface: dict[str, str] = {}

    # ---- building ------------------------------------------------------------------
    @classmethod
    def from_snapshot(cls, snapshot: Snapshot) -> KnowledgeGraph:
        """Load the facts (and, off-world, links) of ``snapshot`` into indexes.

        Raises:
            SynthError: The snapshot has no usable fact.
        """
        arts = snapshot.sql(
            "SELECT doc_id, title, redirects_from, infobox_type FROM articles ORDER BY doc_id"
        )
        doc_ids = arts.column("doc_id").to_pylist()
        titles_col = arts.column("title").to_pylist()
        n = (max(doc_ids) + 1) if doc_ids else 0
        titles = [""] * n
        for d, t in zip(doc_ids, titles_col, strict=True):
            titles[d] = t
        world = snapshot.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'")
        source = "world" if world.column("n")[0].as_py() > 0 else "infobox"
        g = cls(snapshot.snapshot_id, source, titles)
        for d, r, t in zip(
            doc_ids,
            arts.column("redirects_from").to_pylist(),
            arts.column("infobox_type").to_pylist(),
            strict=True,
        ):
            g.redirects[d] = tuple(r or ())
            g.kinds[d] = _kind_of(t)
        g._load_facts(snapshot, source)
        if not g.f_id:
            raise SynthError(
                f"snapshot {snapshot.path} has no clean {source} fact typed by the relation "
                "vocabulary to build questions from; use a snapshot built from a generated "
                "world or from pages with infoboxes (`corpus info` counts the facts)"
            )
        g._index()
        return g

    def _load_facts(self, snapshot: Snapshot, source: str) -> None:
        # Real data: typed facts only, located by the build in a passage of their subject.
        typed = "" if source == "world" else " AND f.typed AND p.doc_id = f.subject_doc_id"
        t = snapshot.sql(
            "SELECT f.fact_id, f.subject_doc_id, f.relation, f.object, f.object_title,"
            " f.object_doc_id, f.value_type, f.passage_id FROM facts f"
            " JOIN passages p ON p.passage_id = f.passage_id"
            f" WHERE f.source = ? {typed} ORDER BY f.fact_id",
            [source],
        )
        cols = [t.column(i).to_pylist() for i in range(t.num_columns)]
        instance: dict[int, str] = {}
        for fid, subj, rel, obj, obj_title, obj_doc, vtype, pid in zip(*cols, strict=True):
            if rel == "instance_of":
                instance[subj] = obj
            if rel in SKIP_RELATIONS or subj is None:
                continue
            if vtype == "entity" and obj_doc is not None:
                if obj_doc == subj:
                    continue
                self._add(fid, subj, rel, int(obj_doc), obj_title or obj, pid, "entity", None)
                continue
            if source != "world" and not _clean_value(vtype, obj):
                continue
            lit = clean_literal("text" if vtype == "entity" else vtype, obj)
            if lit is None:
                continue
            aliases = lit.aliases
            if obj_title and obj_title != lit.surface and clean_literal("text", obj_title):
                aliases = (*aliases, obj_title)
            self._add_literal(fid, subj, rel, lit, aliases, pid, vtype)
        for d, kind in instance.items():
            if d < len(self.kinds):
                self.kinds[d] = kind

    def _add_literal(
        self,
        fid: int,
        subj: int,
        rel: str,
        lit: Literal,
        aliases: tuple[str, ...],
        pid: int,
        vtype: str,
    ) -> None:
        vt = "text" if vtype == "entity" else vtype
        self._add(fid, subj, rel, lit.key, lit.surface, pid, vt, lit.measure)
        if aliases:
            self.literal_aliases.setdefault(lit.key, aliases)

    def _add(
        self,
        fid: int,
        subj: int,
        rel: str,
        obj: int | str,
        surface: str,
        pid: int,
        vtype: str,
        measure: float | None,
    ) -> None:
        self.f_id.append(fid)
        self.f_subj.append(subj)
        self.f_rel.append(rel)
        self.f_obj.append(obj)
        self.f_surface.append(surface)
        self.f_pid.append(pid)
        self.f_vtype.append(vtype)
        self.f_measure.append(measure)

    def _index(self) -> None:
        fwd: dict[str, dict[int, list[int]]] = defaultdict(lambda: defaultdict(list))
        inv: dict[str, dict[int | str, set[int]]] = defaultdict(lambda: defaultdict(set))
        out_rows: dict[int, list[int]] = defaultdict(list)
        in_rows: dict[int, list[int]] = defaultdict(list)
        measures: dict[str, list[tuple[float, int]]] = defaultdict(list)
        for i, (subj, rel, obj, m) in enumerate(
            zip(self.f_subj, self.f_rel, self.f_obj, self.f_measure, strict=True)
        ):
            fwd[rel][subj].append(i)
            inv[rel][obj].add(subj)
            out_rows[subj].append(i)
            if isinstance(obj, int):
                in_rows[obj].append(i)
            else:
                self.literal_surface.setdefault(obj, self.f_surface[i])
            if m is not None:
                measures[rel].append((m, subj))
            self.rel_types.setdefault(rel, self.f_vtype[i])
        self.fwd = {r: {s: tuple(v) for s, v in d.items()} for r, d in fwd.items()}
        self.inv = {r: {o: frozenset(v) for o, v in d.items()} for r, d in inv.items()}
        self.out_rows = {k: tuple(v) for k, v in out_rows.items()}
        self.in_rows = {k: tuple(v) for k, v in in_rows.items()}
        for rel, pairs in measures.items():
            pairs.sort()
            self.ranges[rel] = (
                np.array([p[0] for p in pairs], dtype=np.float64),
                np.array([p[1] for p in pairs], dtype=np.int64),
            )
        members: dict[str, list[int]] = defaultdict(list)
        for d, k in enumerate(self.kinds):
            if k is not None:
                members[k].append(d)
        self.kind_members = {k: frozenset(v) for k, v in members.items()}

    # ---- reading -------------------------------------------------------------------
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
        rows = self.fwd.get(relation, {}).get(subject, ())
        return tuple(self.f_obj[r] for r in rows)

    def subjects(self, relation: str, obj: int | str) -> frozenset[int]:
        """Subjects that have ``obj`` under ``relation``."""
        return self.inv.get(relation, {}).get(obj, frozenset())

    def find_row(self, subject: int, relation: str, obj: int | str) -> int | None:
        """The first fact row ``(subject, relation, obj)``, or None."""
        for r in self.fwd.get(relation, {}).get(subject, ()):
            if self.f_obj[r] == obj:
                return r
        return None

    def in_range(self, relation: str, lo: float, hi: float) -> frozenset[int]:
        """Subjects with a ``relation`` measure in ``[lo, hi]``."""
        if relation not in self.ranges:
            return frozenset()
        values, subjects = self.ranges[relation]
        a = int(np.searchsorted(values, lo, side="left"))
        b = int(np.searchsorted(values, hi, side="right"))
        return frozenset(subjects[a:b].tolist())

    def members(self, kind: str) -> frozenset[int]:
        return self.kind_members.get(kind, frozenset())

    def surface(self, node: int | str) -> str:
        """The name of an entity or the surface form of a literal key."""
        if isinstance(node, int):
            return self.titles[node]
        return self.literal_surface.get(node, node)

    def relations(self) -> list[str]:
        return sorted(self.fwd)


_CACHE: dict[tuple[str, str], KnowledgeGraph] = {}
_CACHE_LOCK = threading.Lock()


def graph_of(snapshot: Snapshot) -> KnowledgeGraph:
    """The graph of ``snapshot``, built once per process and snapshot."""
    key = (str(snapshot.path), snapshot.snapshot_id)
    with _CACHE_LOCK:
        g = _CACHE.get(key)
        if g is None:
            g = KnowledgeGraph.from_snapshot(snapshot)
            _CACHE.clear()  # one graph at a time: they are large
            _CACHE[key] = g
        return g
