"""Build sources: reader formats plus the generated world, behind one small interface."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from wikigym.corpora.manifest import sha256_file
from wikigym.corpora.readers import FORMATS, detect_format, open_source
from wikigym.corpora.readers.mediawiki import iter_mediawiki
from wikigym.corpora.records import ParsedPage, RawPage, SkippedPage, WorldFact
from wikigym.errors import SourceError

Progress = Callable[[int], None]
WORLD_FORMAT = "world"
BUILD_FORMATS: tuple[str, ...] = (*FORMATS, WORLD_FORMAT)


@dataclass
class BuildSource:
    """One source of a build.

    Attributes:
        name: File or folder name (no directories: manifests must not depend on paths).
        format: Reader format.
    """

    name: str
    format: str
    _inner: Any

    def total_bytes(self) -> int:
        return int(self._inner.total_bytes())

    def records(
        self, progress: Progress | None = None
    ) -> Iterator[RawPage | ParsedPage | SkippedPage]:
        return self._inner.records(progress)

    def language(self) -> str | None:
        """The language the source declares (a dump's siteinfo), or None."""
        declared = getattr(self._inner, "language", None)
        return declared() if callable(declared) else None

    def describe(self) -> dict[str, Any]:
        """Manifest entry: format, declared language and the name, size and sha256 of each
        file read."""
        return {
            "name": self.name,
            "format": self.format,
            "language": self.language(),
            "files": [
                {"name": f.path.name, "size": f.size, "sha256": f.sha256}
                for f in self._inner.files()
            ],
            **getattr(self._inner, "extra", {}),
        }


@dataclass(frozen=True)
class _WorldFile:
    path: Path
    sha256: str
    size: int


class WorldSource:
    """A generated world: ``world.xml`` read as a real dump, plus ``world.facts.jsonl``.

    The facts file has one line per page of the dump, in the same order, so the two
    stream side by side in bounded memory.
    """

    format = WORLD_FORMAT

    def __init__(self, path: Path) -> None:
        self.path = path
        self.xml = path / "world.xml"
        self.facts = path / "world.facts.jsonl"
        meta = path / "world.json"
        for required in (self.xml, self.facts, meta):
            if not required.is_file():
                raise SourceError(
                    f"{path} is not a generated world: {required.name} is missing; "
                    "create one with `wikigym corpus generate --articles N --seed S --out DIR`"
                )
        self.extra = {"generator": json.loads(meta.read_text(encoding="utf-8"))}

    def files(self) -> list[_WorldFile]:
        return [
            _WorldFile(p, sha256_file(p), p.stat().st_size)
            for p in (self.path / "world.json", self.facts, self.xml)
        ]

    def total_bytes(self) -> int:
        return self.xml.stat().st_size

    def language(self) -> str:
        """Generated worlds are written in English."""
        return "en"

    def records(self, progress: Progress | None = None) -> Iterator[RawPage | SkippedPage]:
        with self.facts.open(encoding="utf-8") as facts:
            for page in iter_mediawiki(self.xml, progress):
                if isinstance(page, SkippedPage):
                    yield page
                    continue
                line = facts.readline()
                if not line:
                    raise SourceError(
                        f"{self.facts} ends before {self.xml.name} does (at page {page.title!r}); "
                        "regenerate the world"
                    )
                row = json.loads(line)
                if row.get("title") != page.title:
                    raise SourceError(
                        f"{self.facts} is out of step with {self.xml.name}: expected facts of "
                        f"{page.title!r}, got {row.get('title')!r}; regenerate the world"
                    )
                world_facts = tuple(WorldFact(**f) for f in row.get("facts", []))
                yield replace(page, world_facts=world_facts) if world_facts else page


def open_build_source(path: str | Path, format: str = "auto") -> BuildSource:
    """Open a dump, corpus file, folder or generated world for building.

    Raises:
        SourceError: Unknown format, missing file, or a file that is not what it claims.
    """
    path = Path(path)
    if not path.exists():
        raise SourceError(f"source {path} does not exist; pass a dump, folder or corpus file")
    if format == WORLD_FORMAT or (
        format == "auto" and path.is_dir() and (path / "world.json").is_file()
    ):
        return BuildSource(path.name, WORLD_FORMAT, WorldSource(path))
    if format != "auto" and format not in FORMATS:
        raise SourceError(
            f"unknown format {format!r}; expected one of auto, {', '.join(BUILD_FORMATS)}"
        )
    fmt = detect_format(path) if format == "auto" else format
    return BuildSource(path.name, fmt, open_source(path, fmt))
