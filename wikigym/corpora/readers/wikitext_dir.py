"""Folder of wikitext files, one page per file.

The file name is the title: the extension (``.txt``, ``.wiki``, ``.wikitext``) is stripped
and ``_`` becomes a space, as in Wikipedia URLs. ``-`` is kept as it is, although some
collections (e.g. the wtf_wikipedia test cache) use it for spaces, because real titles
contain hyphens ("Alanine—oxo-acid-transaminase", "Jean-Paul Sartre") and the two cannot be
told apart. Files are read in sorted file-name order; other files and sub-folders are ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from wikigym.corpora.readers.base import FileSource, Progress
from wikigym.corpora.readers.mediawiki import redirect_target
from wikigym.corpora.records import RawPage, SkippedPage
from wikigym.errors import SourceError

WIKITEXT_SUFFIXES: tuple[str, ...] = (".txt", ".wiki", ".wikitext")


def wikitext_files(folder: Path) -> list[Path]:
    """The wikitext files directly inside ``folder``, sorted by file name."""
    return sorted(
        (
            p
            for p in folder.iterdir()
            if p.suffix.lower() in WIKITEXT_SUFFIXES and not p.name.startswith(".") and p.is_file()
        ),
        key=lambda p: p.name,
    )


def title_from_filename(name: str) -> str:
    """``Arts_Club_of_Chicago.txt`` -> ``Arts Club of Chicago`` (hyphens are kept)."""
    stem = name
    for suffix in WIKITEXT_SUFFIXES:
        if stem.lower().endswith(suffix):
            stem = stem[: -len(suffix)]
            break
    return stem.replace("_", " ").strip()


class WikitextDirSource(FileSource):
    """A folder of ``Title.txt`` wikitext files; yields RawPage and SkippedPage."""

    format = "wikitext-dir"

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        if not path.is_dir():
            raise SourceError(f"{path} is not a folder; the wikitext-dir format reads a folder")
        self._paths = wikitext_files(path)
        if not self._paths:
            raise SourceError(
                f"folder {path} holds no wikitext files: expected names ending in "
                f"{', '.join(WIKITEXT_SUFFIXES)}"
            )

    def paths(self) -> list[Path]:
        """The wikitext files, sorted by file name."""
        return list(self._paths)

    def records(self, progress: Progress | None = None) -> Iterator[RawPage | SkippedPage]:
        """Yield one RawPage per file; a file that is not UTF-8 becomes a SkippedPage."""
        for path in self._paths:
            title = title_from_filename(path.name)
            data = path.read_bytes()
            if progress is not None:
                progress(len(data))
            try:
                text = data.decode("utf-8-sig")
            except UnicodeDecodeError as exc:
                yield SkippedPage(
                    title=title or path.name,
                    reason=f"not UTF-8 (byte {exc.start}: {exc.reason})",
                    source=str(path),
                )
                continue
            if not title:
                yield SkippedPage(title=path.name, reason="empty title", source=str(path))
                continue
            yield RawPage(
                title=title, wikitext=text, source_id=path.name, redirect=redirect_target(text)
            )
