"""wikigym.corpora: content-addressed Wikipedia snapshots (Parquet + Tantivy + DuckDB)."""

from wikigym.corpora.build import BuildConfig, BuildReport, build_snapshot
from wikigym.corpora.snapshot import Hit, Page, PageLink, PageSection, Passage, Snapshot
from wikigym.corpora.sources import open_build_source

__all__ = [
    "BuildConfig",
    "BuildReport",
    "Hit",
    "Page",
    "PageLink",
    "PageSection",
    "Passage",
    "Snapshot",
    "build_snapshot",
    "open_build_source",
]
