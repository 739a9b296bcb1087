"""Per-source counts of a build: what came in, what went out, and why anything was dropped."""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

# Formats whose pages are wikitext, where an infobox could give facts.
WIKITEXT_FORMATS = frozenset({"mediawiki", "wikitext-dir", "world"})
_DETAIL = re.compile(r"\s*[:(].*$", re.DOTALL)


def reason_class(reason: str) -> str:
    """The kind of a skip reason, without its details (``invalid JSON: ...`` -> ``invalid
    JSON``), so drops are counted by cause."""
    return _DETAIL.sub("", reason).strip() or reason


@dataclass
class SourceCounts:
    """Counts of one source of a build.

    Attributes:
        name: Source name (as in the manifest's ``sources``).
        format: Reader format.
        pages_read: Records that came in (pages, rows that failed to read, redirects).
        pages_skipped: Records dropped, counted by cause in ``dropped``.
        redirects: Redirect pages kept (as titles of their targets).
        articles: Articles that went out.
        passages: Passages that went out.
        source_passages: Passages that carry the source's own id (DPR, KILT).
        facts: Facts extracted.
        typed: Typed facts by source (``infobox``, ``lead``, ``category``, ``world``).
        language: The build's language (which vocabularies apply).
        dropped: Skipped records by cause.
    """

    name: str
    format: str
    pages_read: int = 0
    pages_skipped: int = 0
    redirects: int = 0
    articles: int = 0
    passages: int = 0
    source_passages: int = 0
    facts: int = 0
    typed: Counter[str] = field(default_factory=Counter)
    language: str = "en"
    dropped: Counter[str] = field(default_factory=Counter)

    def drop(self, reason: str) -> None:
        """Count one skipped record under the kind of its reason."""
        self.pages_skipped += 1
        self.dropped[reason_class(reason)] += 1

    def notes(self) -> list[str]:
        """One line per thing a user should know (no facts from a wikitext dump, drops)."""
        lines = []
        if self.articles and not sum(self.typed.values()):
            lines.append(
                f"{self.name}: 0 typed facts ({self.facts:,} untyped): {self.why_untyped()}"
            )
        for reason, n in sorted(self.dropped.items()):
            lines.append(f"{self.name}: dropped {n:,} ({reason})")
        return lines

    def to_dict(self) -> dict[str, Any]:
        """The manifest entry (drops sorted by cause)."""
        return {
            "name": self.name,
            "format": self.format,
            "pages_read": self.pages_read,
            "pages_skipped": self.pages_skipped,
            "redirects": self.redirects,
            "articles": self.articles,
            "passages": self.passages,
            "source_passages": self.source_passages,
            "facts": self.facts,
            "typed_facts": dict(sorted(self.typed.items())),
            "dropped": dict(sorted(self.dropped.items())),
        }

    def why_untyped(self) -> str:
        """Which sources would type facts for this source (none did)."""
        from wikigym.corpora.categories import category_vocabulary
        from wikigym.corpora.lexicon import languages

        covered = ", ".join(languages())
        wikidata = (
            "give `corpus build --facts FILE` a Wikidata dump (JSON or truthy N-Triples, "
            ".bz2/.gz) to type facts by sitelink"
        )
        if self.format not in WIKITEXT_FORMATS:
            return (
                f"{self.format} pages carry no infobox, categories or wikitext lead to read; "
                + wikidata
            )
        if self.language not in category_vocabulary().languages():
            return (
                f"the infobox keys, category patterns and lead readers cover {covered}, "
                f"not {self.language!r}; " + wikidata
            )
        return (
            f"no infobox key, category or lead sentence of {self.articles:,} articles is in "
            f"the {self.language} vocabularies; " + wikidata
        )
