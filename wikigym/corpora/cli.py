"""``wikigym corpus ...`` commands."""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import replace
from pathlib import Path

from wikigym.cli_args import bounded
from wikigym.cliutil import SubParsers
from wikigym.corpora.index import INDEX_HEAP_MB, MIN_INDEX_MEMORY_MB
from wikigym.corpora.memory import data_limit
from wikigym.corpora.snapshot import MIN_SQL_MEMORY_MB, SQL_THREADS
from wikigym.errors import SnapshotCorruptedError, WikigymError

#: What `corpus sql` lets a query and its result take by default, in MiB.
SQL_MEMORY_MB = 1024

SYNTHETIC = "synthetic"


def add_parser(sub: SubParsers) -> None:
    """Register ``corpus`` and its subcommands."""
    corpus = sub.add_parser("corpus", help="build, inspect and search snapshots")
    csub = corpus.add_subparsers(dest="corpus_cmd", required=True, metavar="COMMAND")

    b = csub.add_parser(
        "build",
        help="build a snapshot from dumps, corpus files or a generated world",
        description=(
            "Build a snapshot. SOURCE is a MediaWiki XML(.bz2) dump, a folder of wikitext "
            "files, a KILT/DPR/HotpotQA/HF-parquet file, a generated world folder, or the word "
            "'synthetic' to generate a world (--articles, --seed) and build it."
        ),
    )
    b.add_argument("sources", nargs="+", metavar="SOURCE")
    b.add_argument("--out", required=True, type=Path, help="snapshot directory to create")
    b.add_argument("--format", default="auto", help="reader format (default: auto-detect)")
    b.add_argument(
        "--threads", type=int, default=1, help="worker processes (results do not change)"
    )
    b.add_argument("--passage-words", type=int, default=100, help="target words per passage")
    b.add_argument(
        "--index-memory-mb",
        type=bounded(int, MIN_INDEX_MEMORY_MB),
        default=None,
        help=f"the index writer's heap in MB (default {INDEX_HEAP_MB}): it bounds the build's "
        "memory and sets the segment size; fewer, larger segments search faster (results do "
        "not change)",
    )
    b.add_argument(
        "--no-stopwords",
        action="store_true",
        help="index English stop words too (slower search on large corpora; HotpotQA recall@5 "
        "+0.013 in benchmarks/results/bench_quality.md)",
    )
    b.add_argument(
        "--language",
        default="auto",
        help="the wiki's language code, e.g. de, ja (default: the dump's siteinfo, else en): "
        "picks the index analyzer (stemmer, stop words, CJK bigrams) and number formats",
    )
    b.add_argument("--articles", type=int, default=None, help="articles of a synthetic world")
    b.add_argument("--seed", type=int, default=0, help="seed of a synthetic world")
    b.add_argument(
        "--facts",
        type=Path,
        default=None,
        help="a Wikidata dump (JSON or truthy N-Triples, plain/.bz2/.gz) whose statements "
        "become facts of the articles their items have sitelinks to, in any language",
    )
    b.add_argument("--overwrite", action="store_true", help="replace --out if it exists")
    b.add_argument("--quiet", action="store_true", help="no progress bar")
    b.set_defaults(func=cmd_build)

    g = csub.add_parser("generate", help="write a generated world as a MediaWiki dump (no build)")
    g.add_argument("--articles", type=int, required=True)
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--out", type=Path, required=True, help="folder for world.xml and its facts")
    g.set_defaults(func=cmd_generate)

    i = csub.add_parser("info", help="print a snapshot's manifest as JSON")
    i.add_argument("snapshot", type=Path)
    i.set_defaults(func=cmd_info)

    s = csub.add_parser("search", help="BM25 search over a snapshot's passages")
    s.add_argument("snapshot", type=Path)
    s.add_argument("query")
    s.add_argument("-k", type=int, default=10)
    s.add_argument("--json", action="store_true", help="one JSON object per hit")
    s.set_defaults(func=cmd_search)

    q = csub.add_parser("sql", help="run SQL over articles, passages, links, facts")
    q.add_argument("snapshot", type=Path)
    q.add_argument("query")
    q.add_argument("--json", action="store_true", help="rows as JSON lines")
    q.add_argument(
        "--memory-mb",
        type=bounded(int, MIN_SQL_MEMORY_MB),
        default=SQL_MEMORY_MB,
        help="the most memory the query and its result may take, in MiB (DuckDB's memory "
        "limit, with no spilling to disk, and this process's data limit while it runs)",
    )
    q.add_argument("--threads", type=bounded(int, 1), default=SQL_THREADS, help="DuckDB's threads")
    q.set_defaults(func=cmd_sql)

    v = csub.add_parser("verify", help="recompute every hash; exit 1 naming what changed")
    v.add_argument("snapshot", type=Path)
    v.set_defaults(func=cmd_verify)


def cmd_build(args: argparse.Namespace) -> int:
    from wikigym.corpora.build import BuildConfig, build_snapshot
    from wikigym.corpora.index import IndexConfig
    from wikigym.corpora.sources import open_build_source
    from wikigym.corpora.wikidata import open_facts_file

    index = IndexConfig(stopwords=()) if args.no_stopwords else IndexConfig()
    if args.language != "auto" and not re.fullmatch(
        r"[A-Za-z]{2,3}([-_][A-Za-z0-9]{1,8})*", args.language
    ):
        raise WikigymError(
            f"--language expects a language code such as en, de or ja, got {args.language!r}"
        )
    config = BuildConfig(
        passage_words=args.passage_words,
        threads=args.threads,
        index=index,
        language=args.language,
    )
    if args.index_memory_mb is not None:
        config = replace(config, index_memory_mb=args.index_memory_mb)
    if args.sources == [SYNTHETIC] and args.facts is not None:
        raise WikigymError(
            "--facts joins Wikidata to a real wiki's articles; a generated world has its own "
            "facts: drop --facts or build a dump"
        )
    if args.sources == [SYNTHETIC]:
        from wikigym.corpora.default import DEFAULT_ARTICLES, build_world_snapshot

        articles = args.articles if args.articles is not None else DEFAULT_ARTICLES
        report = build_world_snapshot(
            articles, args.seed, args.out, config, overwrite=args.overwrite, progress=not args.quiet
        )
    else:
        if SYNTHETIC in args.sources:
            raise WikigymError("'synthetic' cannot be mixed with other sources; build it alone")
        sources = [open_build_source(p, args.format) for p in args.sources]
        facts = open_facts_file(args.facts) if args.facts is not None else None
        report = build_snapshot(
            sources,
            args.out,
            config,
            overwrite=args.overwrite,
            progress=not args.quiet,
            facts=facts,
        )
    print(report.summary())
    return 0


def cmd_generate(args: argparse.Namespace) -> int:
    from wikigym.corpora.world import WorldConfig, generate_world

    paths = generate_world(WorldConfig(articles=args.articles, seed=args.seed), args.out)
    for p in paths:
        print(p)
    return 0


def cmd_info(args: argparse.Namespace) -> int:
    from wikigym.corpora.manifest import read_manifest

    print(json.dumps(read_manifest(args.snapshot), indent=2, sort_keys=True, ensure_ascii=False))
    return 0


def cmd_search(args: argparse.Namespace) -> int:
    from wikigym.corpora.snapshot import Snapshot

    snap = Snapshot.open(args.snapshot)
    hits = snap.search(args.query, args.k)
    for rank, h in enumerate(hits, 1):
        if args.json:
            print(
                json.dumps(
                    {
                        "rank": rank,
                        "passage_id": h.passage_id,
                        "doc_id": h.doc_id,
                        "title": h.title,
                        "score": h.score,
                        "text": h.text,
                        "source_passage_id": h.source_passage_id,
                    },
                    ensure_ascii=False,
                )
            )
        else:
            snippet = h.text if len(h.text) <= 200 else h.text[:197] + "..."
            origin = f" (source id {h.source_passage_id})" if h.source_passage_id else ""
            print(
                f"{rank:>3}. [p{h.passage_id}]{origin} {h.title}  ({h.score:.3f})\n     {snippet}"
            )
    if not hits and not args.json:
        print("no hits")
    return 0


def cmd_sql(args: argparse.Namespace) -> int:
    import duckdb

    from wikigym.corpora.snapshot import Snapshot

    snap = Snapshot.open(args.snapshot, sql_memory_mb=args.memory_mb, sql_threads=args.threads)
    too_much = (
        f"it needs more than --memory-mb {args.memory_mb} MiB: select less (LIMIT, fewer "
        "or shorter columns) or raise --memory-mb"
    )
    try:
        # DuckDB's limit misses some allocations (one huge string): the process is capped too.
        with data_limit(args.memory_mb):
            table = snap.sql(args.query)
            rows = table.to_pylist()
            text = (
                "\n".join(json.dumps(r, ensure_ascii=False, default=str) for r in rows)
                if args.json
                else format_table(table.column_names, rows)
            )
            del table, rows
    except MemoryError:
        raise WikigymError(f"query failed: {too_much}") from None
    except duckdb.Error as exc:
        # DuckDB's messages run over several lines (the query, a caret): keep the first.
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        if isinstance(exc, duckdb.OutOfMemoryException):
            raise WikigymError(f"query failed: {first}; {too_much}") from None
        raise WikigymError(
            f"query failed: {first}; the tables are articles, passages, links and facts "
            '(see `wikigym corpus sql DIR "DESCRIBE articles"`), and the snapshot is '
            "read-only (no COPY, ATTACH, INSTALL, SET or access to other files)"
        ) from exc
    if text:
        print(text)
    return 0


def format_table(columns: list[str], rows: list[dict[str, object]], width: int = 60) -> str:
    """Rows as an aligned text table (cells cut at ``width`` characters)."""

    def cell(value: object) -> str:
        text = "NULL" if value is None else str(value).replace("\n", " ")
        return text if len(text) <= width else text[: width - 3] + "..."

    cells = [[cell(r[c]) for c in columns] for r in rows]
    widths = [max([len(c), *(len(row[i]) for row in cells)]) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines.append("  ".join("-" * w for w in widths))
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths, strict=True)) for row in cells]
    lines.append(f"({len(rows)} row{'s' if len(rows) != 1 else ''})")
    return "\n".join(lines)


def cmd_verify(args: argparse.Namespace) -> int:
    from wikigym.corpora.manifest import read_manifest
    from wikigym.corpora.verify import verify_snapshot

    if not args.snapshot.is_dir():
        raise WikigymError(f"snapshot directory {args.snapshot} does not exist")
    manifest = read_manifest(args.snapshot)
    problems = verify_snapshot(args.snapshot, manifest, full=True)
    if problems:
        for line in problems:
            print(line, file=sys.stderr)
        raise SnapshotCorruptedError(
            f"{args.snapshot}: {len(problems)} problem(s) against the manifest: "
            + "; ".join(problems[:5])
        )
    print(f"ok: {len(manifest.get('files', {}))} files match snapshot {manifest['snapshot_id']}")
    return 0


__all__ = ["add_parser"]
