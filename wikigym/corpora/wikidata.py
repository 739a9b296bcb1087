"""Wikidata statements as facts of a snapshot's articles, joined by sitelink.

``corpus build ... --facts FILE`` reads a Wikidata dump, the JSON dump (``[`` then one
entity per line) or truthy N-Triples (``wdt:`` triples, ``rdfs:label``, ``schema:about``
sitelinks), plain or ``.bz2``/``.gz``, streamed in one pass:

1. :func:`stage_wikidata` writes three staging tables (Parquet, bounded memory): the claims
   of the mapped properties (``data/wikidata_properties.json``: ``P19`` -> ``born_in``, ...;
   truthy statements only: preferred, else normal), the labels in the wiki's language
   (else ``mul``, else English: "labels in the wiki's language where present"), and the
   sitelinks to the wiki (``enwiki``, ``jawiki``, ``bgwiki``: any language).
2. :func:`join_wikidata`, at the end of the build, joins them with DuckDB: a claim whose
   subject has a sitelink to an article of the snapshot (through redirects) becomes a fact of
   that article with source ``wikidata`` and the statement ``Q262 P36 Q3561``; an item value
   is named by its label and, when it has a sitelink to this wiki, its article title. Each
   fact is located in the article's passage that states its value (else it is stated in no
   passage), and one that an article fact already states (same value, or a date either
   gives more precisely) restates it.

It is the route to typed facts for a wiki no vocabulary covers.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from wikigym.corpora.factsources import locate, surfaces
from wikigym.corpora.infobox_values import format_value
from wikigym.corpora.lexicon import lexicon
from wikigym.corpora.manifest import sha256_file
from wikigym.corpora.readers.base import Progress, open_input
from wikigym.corpora.tables import FACTS_STAGE, TableWriter
from wikigym.corpora.titles import normalize_title
from wikigym.corpora.vocabulary import vocabulary
from wikigym.errors import SourceError

JSON, NTRIPLES = "wikidata-json", "wikidata-nt"
CLAIMS = pa.schema(
    [
        ("seq", pa.int64()),
        ("qid", pa.string()),
        ("pid", pa.string()),
        ("relation", pa.string()),
        ("kind", pa.string()),  # item, date, number, text
        ("value", pa.string()),
    ]
)
LABELS = pa.schema([("qid", pa.string()), ("rank", pa.int8()), ("label", pa.string())])
SITES = pa.schema([("qid", pa.string()), ("title", pa.string())])
_ENTITY = "http://www.wikidata.org/entity/"
_DIRECT = "http://www.wikidata.org/prop/direct/"
_LABEL = "http://www.w3.org/2000/01/rdf-schema#label"
_ABOUT = "http://schema.org/about"
_TRIPLE = re.compile(
    r'^<([^>]*)>\s+<([^>]*)>\s+(<[^>]*>|"(?:[^"\\]|\\.)*"(?:@[\w-]+|\^\^<[^>]*>)?)'
)
_ESCAPES = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)")


@dataclass(frozen=True)
class PropertyMap:
    version: str
    properties: dict[str, str]
    units: dict[str, tuple[str, float]]
    person: str


@lru_cache(maxsize=1)
def property_map() -> PropertyMap:
    """The packaged property vocabulary (read once)."""
    text = (
        resources.files("wikigym.corpora")
        .joinpath("data/wikidata_properties.json")
        .read_text(encoding="utf-8")
    )
    data = json.loads(text)
    relations = vocabulary().relations
    for pid, rel in data["properties"].items():
        if rel not in relations:
            raise ValueError(f"wikidata property {pid}: {rel!r} is not a vocabulary relation")
    units = {k: (v[0], float(v[1])) for k, v in data["units"].items()}
    return PropertyMap(data["version"], data["properties"], units, data["person"])


@dataclass(frozen=True)
class WikidataFile:
    """A Wikidata dump given to a build (``--facts``)."""

    path: Path
    format: str

    @property
    def name(self) -> str:
        return self.path.name

    def describe(self) -> dict[str, Any]:
        """The manifest's ``sources`` entry."""
        return {
            "name": self.path.name,
            "format": self.format,
            "language": None,
            "files": [
                {
                    "name": self.path.name,
                    "size": self.path.stat().st_size,
                    "sha256": sha256_file(self.path),
                }
            ],
        }


def open_facts_file(path: str | Path) -> WikidataFile:
    """Open a Wikidata dump for ``--facts`` (JSON or truthy N-Triples, plain/bz2/gz).

    Raises:
        SourceError: Missing, or neither format.
    """
    path = Path(path)
    if not path.is_file():
        raise SourceError(f"--facts {path} is not a file; pass a Wikidata JSON or N-Triples dump")
    with open_input(path) as inp:
        head = inp.peek(4096).lstrip()
    if head.startswith((b"[", b"{")):
        return WikidataFile(path, JSON)
    if head.startswith((b"<", b"_:", b"#")):
        return WikidataFile(path, NTRIPLES)
    raise SourceError(
        f"--facts {path}: expected a Wikidata JSON dump ('[' or '{{' first) or N-Triples "
        f"('<' first), got {head[:20]!r}; pass latest-all.json(.bz2/.gz) or "
        "latest-truthy.nt(.bz2/.gz)"
    )


# ---- values ------------------------------------------------------------------------------


def _time(value: dict[str, Any]) -> str | None:
    """An ISO date of a Wikidata time value at its precision (year, month or day)."""
    text, precision = str(value.get("time", "")), int(value.get("precision", 0))
    m = re.match(r"^\+(\d{1,4})-(\d\d)-(\d\d)", text)
    if m is None or precision < 9:
        return None  # negative years, decades, centuries
    y, mo, d = int(m.group(1)), m.group(2), m.group(3)
    if not 100 <= y <= 2100:
        return None
    if precision == 9:
        return f"{y:04d}"
    if precision == 10:
        return f"{y:04d}-{mo}"
    return f"{y:04d}-{mo}-{d}"


def _quantity(value: dict[str, Any], unit_of_relation: str | None, pm: PropertyMap) -> str | None:
    try:
        amount = float(str(value.get("amount", "")))
    except ValueError:
        return None
    unit = str(value.get("unit", "1")).rsplit("/", 1)[-1]
    if unit_of_relation is not None:
        conv = pm.units.get(unit)
        if conv is None or conv[0] != unit_of_relation:
            return None
        amount *= conv[1]
    elif unit != "1" and pm.units.get(unit, ("", 0.0))[0] != "USD":
        return None
    return format_value(amount)


def _truthy(statements: list[dict[str, Any]], measure: bool) -> list[dict[str, Any]]:
    """The truthy statements (preferred, else normal); of a measure (a number) given for
    several points in time (HDI by year), the latest one."""
    best = [s for s in statements if s.get("rank") == "preferred"]
    best = best or [s for s in statements if s.get("rank", "normal") == "normal"]
    if measure and len(best) > 1:
        dated = [(_point_in_time(s), i) for i, s in enumerate(best)]
        if all(d is not None for d, _ in dated):
            return [best[max(dated)[1]]]
    return best


def _point_in_time(statement: dict[str, Any]) -> str | None:
    for q in (statement.get("qualifiers") or {}).get("P585", []):
        value = ((q or {}).get("datavalue") or {}).get("value")
        if isinstance(value, dict) and isinstance(value.get("time"), str):
            return str(value["time"]).lstrip("+").zfill(20)
    return None


class _Staging:
    def __init__(self, stage: Path) -> None:
        self.claims = TableWriter(stage / "wd_claims.parquet", CLAIMS)
        self.labels = TableWriter(stage / "wd_labels.parquet", LABELS)
        self.sites = TableWriter(stage / "wd_sites.parquet", SITES)
        self.seq = 0

    def claim(self, qid: str, pid: str, relation: str, kind: str, value: str) -> None:
        self.claims.append_row(self.seq, qid, pid, relation, kind, value)
        self.seq += 1

    def close(self) -> None:
        for w in (self.claims, self.labels, self.sites):
            w.close()


def _label_rank(lang: str, language: str) -> int | None:
    return {language: 0, "mul": 1, "en": 2}.get(lang)


def _stage_entity(e: dict[str, Any], out: _Staging, site: str, language: str) -> None:
    if e.get("type") != "item" or not isinstance(e.get("id"), str):
        return
    qid = e["id"]
    labels = e.get("labels") or {}
    best = min(
        (
            (r, v.get("value"))
            for lang, v in labels.items()
            if isinstance(v, dict) and (r := _label_rank(lang, language)) is not None
        ),
        default=None,
    )
    if best and best[1]:
        out.labels.append_row(qid, best[0], best[1])
    link = (e.get("sitelinks") or {}).get(site)
    if not isinstance(link, dict) or not link.get("title"):
        return
    out.sites.append_row(qid, normalize_title(str(link["title"])))
    pm = property_map()
    relations = vocabulary().relations
    for pid, statements in (e.get("claims") or {}).items():
        relation = pm.properties.get(pid)
        if relation is None or not isinstance(statements, list):
            continue
        spec = relations[relation]
        for st in _truthy(statements, spec.value == "number"):
            snak = st.get("mainsnak") or {}
            if snak.get("snaktype") != "value":
                continue
            dv = snak.get("datavalue") or {}
            kind, value = dv.get("type"), dv.get("value")
            if kind == "wikibase-entityid" and isinstance(value, dict) and value.get("id"):
                if spec.value in ("entity", "text") and value["id"] != qid:
                    out.claim(qid, pid, relation, "item", str(value["id"]))
            elif kind == "time" and spec.value == "date" and isinstance(value, dict):
                iso = _time(value)
                if iso:
                    out.claim(qid, pid, relation, "date", iso)
            elif kind == "quantity" and spec.value == "number" and isinstance(value, dict):
                num = _quantity(value, spec.unit, pm)
                if num is not None:
                    out.claim(qid, pid, relation, "number", num)
            elif kind in ("string", "monolingualtext") and spec.value == "text":
                text = value if isinstance(value, str) else (value or {}).get("text")
                lang = None if isinstance(value, str) else (value or {}).get("language")
                if text and (lang is None or lang == language):
                    out.claim(qid, pid, relation, "text", str(text))


def _json_entities(inp_lines: Iterator[bytes], path: Path) -> Iterator[dict[str, Any]]:
    for n, raw in enumerate(inp_lines, 1):
        line = raw.strip().rstrip(b",")
        if not line or line in (b"[", b"]"):
            continue
        try:
            e = json.loads(line)
        except ValueError as exc:
            raise SourceError(
                f"{path}: line {n} is not one JSON entity ({exc}); a Wikidata JSON dump has "
                "one entity per line"
            ) from exc
        if isinstance(e, dict):
            yield e


def _unescape(text: str) -> str:
    def one(m: re.Match[str]) -> str:
        s = m.group(1)
        if s[0] in "uU":
            return chr(int(s[1:], 16))
        return {"n": "\n", "t": "\t", "r": "\r"}.get(s, s)

    return _ESCAPES.sub(one, text) if "\\" in text else text


def _stage_ntriples(lines: Iterator[bytes], out: _Staging, lang: str, path: Path) -> None:
    """Truthy N-Triples: ``wdt:`` claims of mapped properties (all subjects: the sitelinks
    may come anywhere in the file), labels and this wiki's sitelinks."""
    pm = property_map()
    relations = vocabulary().relations
    prefix = f"https://{lang}.wikipedia.org/wiki/"
    for raw in lines:
        line = raw.decode("utf-8", "replace")
        m = _TRIPLE.match(line)
        if m is None:
            continue
        s, p, o = m.groups()
        if p == _ABOUT and s.startswith(prefix) and o.startswith(f"<{_ENTITY}Q"):
            title = normalize_title(unquote(s[len(prefix) :]).replace("_", " "))
            out.sites.append_row(o[1 + len(_ENTITY) : -1], title)
            continue
        if not s.startswith(_ENTITY + "Q"):
            continue
        qid = s[len(_ENTITY) :]
        if p == _LABEL and o.startswith('"'):
            body, _, tag = o.rpartition("@")
            rank = _label_rank(tag, lang)
            if rank is not None:
                out.labels.append_row(qid, rank, _unescape(body[1:-1]))
            continue
        if not p.startswith(_DIRECT):
            continue
        pid = p[len(_DIRECT) :]
        relation = pm.properties.get(pid)
        if relation is None:
            continue
        spec = relations[relation]
        if o.startswith(f"<{_ENTITY}Q"):
            value = o[1 + len(_ENTITY) : -1]
            if spec.value in ("entity", "text") and value != qid:
                out.claim(qid, pid, relation, "item", value)
            continue
        if not o.startswith('"'):
            continue
        body, _, dtype = o.partition('"^^<')
        text = _unescape(body[1:]) if dtype else _unescape(o[1:].rpartition('"')[0])
        if spec.value == "date" and dtype.startswith("http://www.w3.org/2001/XMLSchema#dateTime"):
            # Truthy dumps drop a date's precision: a year alone is written as Jan 1.
            mm = re.match(r"^(\d{4})-(\d\d)-(\d\d)T", text)
            if mm and 100 <= int(mm.group(1)) <= 2100:
                iso = (
                    mm.group(1)
                    if mm.group(2, 3) == ("01", "01")
                    else f"{mm.group(1)}-{mm.group(2)}-{mm.group(3)}"
                )
                out.claim(qid, pid, relation, "date", iso)
        elif spec.value == "number" and spec.unit is None and "decimal" in dtype:
            try:
                out.claim(qid, pid, relation, "number", format_value(float(text)))
            except ValueError:
                continue
        elif spec.value == "text" and not dtype:
            tag = o.rpartition("@")[2] if "@" in o.rpartition('"')[2] else None
            if tag in (None, lang):
                out.claim(qid, pid, relation, "text", text)


def stage_wikidata(
    facts: WikidataFile, stage: Path, language: str, progress: Progress | None = None
) -> None:
    """Stream ``facts`` into the staging tables under ``stage`` (see the module doc).

    Raises:
        SourceError: A line that is not what the format says, or a broken stream.
    """
    lang = language.split("-")[0].lower()
    site = lang.replace("-", "_") + "wiki"
    out = _Staging(stage)
    try:
        with open_input(facts.path) as inp:

            def lines() -> Iterator[bytes]:
                for n, raw in enumerate(inp.stream):
                    if n % 4096 == 0:
                        inp.report(progress)
                    yield raw

            if facts.format == JSON:
                for e in _json_entities(lines(), facts.path):
                    _stage_entity(e, out, site, lang)
            else:
                _stage_ntriples(lines(), out, lang, facts.path)
            inp.finish(progress)
    finally:
        out.close()


# ---- the join ----------------------------------------------------------------------------


def join_wikidata(
    con: duckdb.DuckDBPyConnection,
    stage: Path,
    redirect_files: list[str],
    passages: Path,
    first_fact: int,
    language: str,
) -> int:
    """Facts of the staged claims whose subject is an article of the snapshot, written to
    ``stage/facts_wikidata.parquet`` (the staged facts schema, fact ids from
    ``first_fact``, in (doc id, claim order) order). Returns how many."""
    lex = lexicon(language)
    pm = property_map()
    person = {"en": "person", "ja": "人物", "de": "Person", "fr": "personne"}.get(
        language, lex.kind_of("person") if lex else None
    ) or "person"
    rel = con.read_parquet
    rel(str(stage / "articles.parquet")).select("title, doc_id").create_view("wd_articles")
    if redirect_files:
        rel(redirect_files).select("title, doc_id").create_view("wd_redirects")
    else:
        con.execute(
            "CREATE OR REPLACE VIEW wd_redirects AS SELECT title, doc_id FROM wd_articles LIMIT 0"
        )
    rel(str(stage / "wd_claims.parquet")).create_view("wd_claims")
    rel(str(stage / "wd_labels.parquet")).create_view("wd_labels")
    rel(str(stage / "wd_sites.parquet")).create_view("wd_sites")
    rel(str(stage / "facts.parquet")).create_view("wd_article_facts")
    con.execute(
        """
        CREATE OR REPLACE TEMP TABLE wd_facts AS
        WITH titles AS (SELECT title, doc_id FROM wd_articles
                        UNION ALL SELECT title, doc_id FROM wd_redirects),
        subj AS (SELECT s.qid, min(t.doc_id) AS doc_id FROM wd_sites s
                 JOIN titles t ON t.title = s.title GROUP BY s.qid),
        label AS (SELECT qid, arg_min(label, rank) AS label FROM wd_labels GROUP BY qid),
        site AS (SELECT qid, min(title) AS title FROM wd_sites GROUP BY qid)
        SELECT c.seq, subj.doc_id, c.qid, c.pid, c.relation, c.kind, c.value,
               l.label, o.title AS object_title
        FROM wd_claims c JOIN subj ON subj.qid = c.qid
        LEFT JOIN label l ON c.kind = 'item' AND l.qid = c.value
        LEFT JOIN site o ON c.kind = 'item' AND o.qid = c.value
        """
    )
    # A measure (a number of a relation that is not a list) given several values with no
    # way to tell the current one (truthy N-Triples drop the point in time) is left out.
    measures = sorted(
        r
        for r, spec in vocabulary().relations.items()
        if spec.value == "number" and not spec.is_list
    )
    reader = con.sql(
        "SELECT * FROM wd_facts WHERE NOT (list_contains($m, relation) AND (doc_id, relation) IN "
        "(SELECT (doc_id, relation) FROM wd_facts WHERE list_contains($m, relation) "
        "GROUP BY doc_id, relation HAVING count(DISTINCT value) > 1)) "
        "QUALIFY row_number() OVER (PARTITION BY doc_id, relation, "
        "coalesce(object_title, label, value) ORDER BY seq) = 1 ORDER BY doc_id, seq",
        params={"m": measures},
    ).to_arrow_reader(16_384)
    relations = vocabulary().relations
    writer = TableWriter(stage / "facts_wikidata.parquet", FACTS_STAGE)
    texts = _doc_column(stage / "articles.parquet", "text")
    spans = _passage_starts(passages)
    n = 0
    for batch in reader:
        facts: list[dict[str, Any]] = []
        for r in batch.to_pylist():
            fact = _fact(r, relations, pm, person)
            if fact is not None:
                facts.append(fact)
        if not facts:
            continue
        _locate(facts, texts, spans)
        _restates(con, facts)
        for f in facts:
            writer.append_row(
                first_fact + n,
                f["doc_id"],
                f["relation"],
                f["object"],
                f["object_title"],
                f["value_type"],
                "wikidata",
                f["passage_id"],
                None,
                None,
                True,
                f["statement"],
                f["restates"],
            )
            n += 1
    writer.close()
    return n


def _fact(
    r: dict[str, Any], relations: dict[str, Any], pm: PropertyMap, person: str
) -> dict[str, Any] | None:
    """The fact of one joined claim (None when an item value has no name in this wiki)."""
    relation = r["relation"]
    vtype = relations[relation].value
    title = r["object_title"]
    if r["kind"] == "item":
        if relation == "instance_of":
            obj = person if r["value"] == pm.person else r["label"]
            title, vtype = None, "text"
        else:
            obj = r["label"] or title
            if vtype != "entity":
                vtype, title = "text", None
        if not obj:
            return None
    else:
        obj, title = r["value"], None
    return {
        "doc_id": r["doc_id"],
        "relation": relation,
        "object": obj,
        "object_title": title,
        "value_type": vtype,
        "statement": f"{r['qid']} {r['pid']} {r['value']}",
    }


class _Ordered:
    """Values keyed by ascending doc id, read forward once (a merge join's other side)."""

    def __init__(self, rows: Iterator[tuple[int, Any]]) -> None:
        self._rows = rows
        self._head: tuple[int, Any] | None = next(rows, None)

    def get(self, doc: int) -> Any:
        while self._head is not None and self._head[0] < doc:
            self._head = next(self._rows, None)
        if self._head is not None and self._head[0] == doc:
            return self._head[1]
        return None


def _doc_column(path: Path, column: str) -> _Ordered:
    def rows() -> Iterator[tuple[int, Any]]:
        src = pq.ParquetFile(path)
        for i in range(src.metadata.num_row_groups):
            t = src.read_row_group(i, columns=["doc_id", column], use_threads=False)
            yield from zip(t.column(0).to_pylist(), t.column(1).to_pylist(), strict=True)

    return _Ordered(rows())


def _passage_starts(path: Path) -> _Ordered:
    """doc id -> (passage char starts, passage ids), the passages read in order."""

    def rows() -> Iterator[tuple[int, tuple[list[int], list[int]]]]:
        src = pq.ParquetFile(path)
        doc = -1
        starts: list[int] = []
        pids: list[int] = []
        for i in range(src.metadata.num_row_groups):
            t = src.read_row_group(
                i, columns=["passage_id", "doc_id", "char_start"], use_threads=False
            )
            for pid, d, cs in zip(*(t.column(k).to_pylist() for k in range(3)), strict=True):
                if d != doc:
                    if doc >= 0:
                        yield doc, (starts, pids)
                    doc, starts, pids = d, [], []
                starts.append(cs)
                pids.append(pid)
        if doc >= 0:
            yield doc, (starts, pids)

    return _Ordered(rows())


def _locate(facts: list[dict[str, Any]], texts: _Ordered, spans: _Ordered) -> None:
    """Set each fact's ``passage_id``: the passage of its article whose text states its
    value (facts in doc order; articles and passages read forward beside them)."""
    for f in facts:
        f["passage_id"] = None
        text = texts.get(f["doc_id"])
        found = spans.get(f["doc_id"])
        if not text or not found:
            continue
        at = locate(
            text.casefold(), surfaces(f["object"], f["object_title"], f["value_type"], None)
        )
        if at is not None:
            k = max(0, bisect.bisect_right(found[0], at) - 1)
            f["passage_id"] = found[1][k]


def _restates(con: duckdb.DuckDBPyConnection, facts: list[dict[str, Any]]) -> None:
    """Set each fact's ``restates``: the first article fact of its subject with the same
    relation and value (or a date either gives more precisely)."""
    for f in facts:
        f["restates"] = None
    if not facts:
        return
    lo, hi = facts[0]["doc_id"], facts[-1]["doc_id"]
    # Staged article facts are in doc order: the range reads a few row groups.
    table = (
        con.sql(
            "SELECT fact_id, subject_doc_id, relation, object, object_title, value_type "
            "FROM wd_article_facts WHERE subject_doc_id BETWEEN $lo AND $hi AND typed "
            "AND restates IS NULL ORDER BY fact_id",
            params={"lo": lo, "hi": hi},
        )
        .to_arrow_table()
        .to_pylist()
    )
    by: dict[tuple[int, str], list[dict[str, Any]]] = {}
    for a in table:
        by.setdefault((a["subject_doc_id"], a["relation"]), []).append(a)
    for f in facts:
        key = (f["object_title"] or f["object"]).casefold()
        for a in by.get((f["doc_id"], f["relation"]), ()):
            same = (a["object_title"] or a["object"]).casefold() == key
            dated = (
                f["value_type"] == "date"
                and a["value_type"] == "date"
                and (
                    a["object"].startswith(f["object"] + "-")
                    or f["object"].startswith(a["object"] + "-")
                )
            )
            if same or dated:
                f["restates"] = a["fact_id"]
                break
