"""Shared plumbing of the readers: source files, byte counting, decompression, JSON streams.

Every reader reads its input through :func:`open_input`, which counts the bytes taken from
disk (compressed bytes for ``.bz2``/``.gz``/``.xz``), so ``progress`` callbacks add up to
:meth:`FileSource.total_bytes` once a source is read to the end.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import io
import json
import lzma
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar, Protocol, runtime_checkable

from wikigym.corpora.records import ParsedPage, RawPage, SkippedPage
from wikigym.errors import SourceError

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

FORMATS: tuple[str, ...] = (
    "mediawiki",
    "wikitext-dir",
    "kilt",
    "dpr-jsonl",
    "dpr-tsv",
    "hf-parquet",
    "hotpotqa",
)
"""Every format :func:`wikigym.corpora.readers.open_source` knows, in documentation order."""

Progress = Callable[[int], None]
"""Called with the number of input bytes consumed since the previous call."""

SourceRecord = RawPage | ParsedPage | SkippedPage

DECOMPRESS_ERRORS: tuple[type[BaseException], ...] = (
    OSError,
    EOFError,
    lzma.LZMAError,
    zlib.error,
)
"""What a broken bz2/gzip/xz stream raises (truncated files give EOFError)."""

_MAGICS: tuple[tuple[bytes, str], ...] = (
    (b"BZh", "bz2"),
    (b"\x1f\x8b", "gzip"),
    (b"\xfd7zXZ\x00", "xz"),
)
_HASH_CHUNK = 1 << 20
_READ_BUFFER = 1 << 20


@dataclass(frozen=True)
class SourceFile:
    """One input file as recorded in a snapshot manifest.

    Attributes:
        path: The file (resolved).
        sha256: Hex sha256 of its bytes on disk.
        size: Size in bytes on disk.
    """

    path: Path
    sha256: str
    size: int


@runtime_checkable
class Source(Protocol):
    """A readable build source; see :func:`wikigym.corpora.readers.open_source`."""

    path: Path

    @property
    def format(self) -> str:
        """The format name, one of :data:`FORMATS` (a class constant of each reader)."""
        ...

    def files(self) -> list[SourceFile]:
        """Every file read, in sorted deterministic order, with its sha256."""
        ...

    def total_bytes(self) -> int:
        """Bytes on disk that :meth:`records` will read (for progress bars)."""
        ...

    def records(self, progress: Progress | None = None) -> Iterator[SourceRecord]:
        """Stream the records in a deterministic order."""
        ...


def sha256_file(path: Path) -> str:
    """Hex sha256 of a file, read in 1 MiB chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for chunk in iter(lambda: handle.read(_HASH_CHUNK), b""):
            digest.update(chunk)
    return digest.hexdigest()


class FileSource:
    """Base of the readers: a source made of a list of files, hashed on demand.

    Subclasses set ``format``, override :meth:`records` and, for folders, :meth:`paths`.
    """

    format: ClassVar[str] = ""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._files: list[SourceFile] | None = None

    def paths(self) -> list[Path]:
        """The files this source reads, in reading order."""
        return [self.path]

    def files(self) -> list[SourceFile]:
        """Every file read, in reading order (sorted for folders), with its sha256."""
        if self._files is None:
            self._files = [
                SourceFile(path=p, sha256=sha256_file(p), size=p.stat().st_size)
                for p in self.paths()
            ]
        return list(self._files)

    def total_bytes(self) -> int:
        """Bytes on disk that :meth:`records` reads."""
        return sum(p.stat().st_size for p in self.paths())

    def records(self, progress: Progress | None = None) -> Iterator[SourceRecord]:
        """Stream the records; implemented by each format."""
        raise NotImplementedError

    def __repr__(self) -> str:
        return f"{type(self).__name__}({str(self.path)!r})"


class _CountingRaw(io.RawIOBase):
    """Unbuffered file that counts the bytes read from disk."""

    def __init__(self, raw: io.FileIO) -> None:
        super().__init__()
        self._raw = raw
        self.count = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: WriteableBuffer) -> int:
        n = self._raw.readinto(buffer)
        self.count += n or 0
        return n

    def close(self) -> None:
        self._raw.close()
        super().close()


class Input:
    """An opened input file: a decompressed binary ``stream`` plus a disk byte counter.

    Attributes:
        path: The file.
        stream: Decompressed bytes (the file itself when not compressed).
        compression: ``"bz2"``, ``"gzip"``, ``"xz"`` or ``None``.
    """

    def __init__(self, path: Path) -> None:
        self.path = path
        try:
            handle = path.open("rb", buffering=0)
        except OSError as exc:
            raise SourceError(f"cannot open {path}: {exc.strerror or exc}") from exc
        self._counter = _CountingRaw(handle)
        self._buffered = io.BufferedReader(self._counter, buffer_size=_READ_BUFFER)
        head = self._buffered.peek(8)[:8]
        self.compression: str | None = next((n for m, n in _MAGICS if head.startswith(m)), None)
        # Each of these has peek (BufferedIOBase does not promise it).
        self.stream: bz2.BZ2File | gzip.GzipFile | lzma.LZMAFile | io.BufferedReader[_CountingRaw]
        if self.compression == "bz2":
            self.stream = bz2.BZ2File(self._buffered)
        elif self.compression == "gzip":
            self.stream = gzip.GzipFile(fileobj=self._buffered)
        elif self.compression == "xz":
            self.stream = lzma.LZMAFile(self._buffered)  # noqa: SIM115
        else:
            self.stream = self._buffered
        self._reported = 0

    def take(self) -> int:
        """Bytes read from disk since the previous call."""
        delta = self._counter.count - self._reported
        self._reported = self._counter.count
        return delta

    def report(self, progress: Progress | None) -> None:
        """Pass the bytes read since the last report to ``progress`` (if any)."""
        if progress is not None:
            delta = self.take()
            if delta:
                progress(delta)

    def finish(self, progress: Progress | None) -> None:
        """Report the rest of the file as read (buffers may not have touched its last bytes)."""
        if progress is not None:
            size = self.path.stat().st_size
            rest = size - self._reported
            self._reported = size
            if rest > 0:
                progress(rest)

    def read(self, n: int) -> bytes:
        """Read up to ``n`` decompressed bytes; a broken stream raises SourceError."""
        try:
            return self.stream.read(n)
        except DECOMPRESS_ERRORS as exc:
            raise broken_stream(self.path, self.compression, exc) from exc

    def peek(self, n: int) -> bytes:
        """Up to ``n`` leading decompressed bytes, not consumed; may return fewer."""
        try:
            return self.stream.peek(n)[:n]
        except DECOMPRESS_ERRORS as exc:
            raise broken_stream(self.path, self.compression, exc) from exc

    def close(self) -> None:
        """Close the stream and the file."""
        if self.stream is not self._buffered:
            self.stream.close()
        self._buffered.close()

    def __enter__(self) -> Input:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


def open_input(path: Path) -> Input:
    """Open ``path`` for streaming, decompressing bz2/gzip/xz by their magic bytes."""
    return Input(path)


def broken_stream(path: Path, compression: str | None, exc: BaseException) -> SourceError:
    """The SourceError for a stream that broke while reading (truncated or corrupt)."""
    kind = f"{compression} stream" if compression else "file"
    return SourceError(
        f"{path}: the {kind} is truncated or corrupt ({type(exc).__name__}: {exc}); "
        "download or copy the file again"
    )


def iter_lines(inp: Input, progress: Progress | None) -> Iterator[tuple[int, bytes]]:
    """Yield ``(line_number, line)`` for the non-blank lines of a decompressed input."""
    number = 0
    while True:
        try:
            line = inp.stream.readline()
        except DECOMPRESS_ERRORS as exc:
            raise broken_stream(inp.path, inp.compression, exc) from exc
        if not line:
            break
        number += 1
        if line.strip():
            yield number, line
        inp.report(progress)
    inp.finish(progress)


def _too_deep() -> ValueError:
    """The error of JSON nested deeper than Python's parser can go (it raises RecursionError)."""
    return ValueError("JSON nested too deeply to be read (no question or page is that deep)")


def iter_json_lines(
    inp: Input, progress: Progress | None
) -> Iterator[tuple[str, object | ValueError]]:
    """Yield ``(where, row)`` per non-blank JSONL line; a bad line gives its ``ValueError``.

    ``where`` names the line (``<line 7 in file.jsonl>``) for SkippedPage titles.

    Raises:
        SourceError: When the first line is not JSON: the file is not JSON lines at all
            (later bad lines are reported one by one instead).
    """
    first = True
    for number, line in iter_lines(inp, progress):
        where = f"<line {number} in {inp.path.name}>"
        try:
            row: object | ValueError = json.loads(line)
        except (ValueError, RecursionError) as raised:  # JSONDecodeError, UnicodeDecodeError
            exc = raised if isinstance(raised, ValueError) else _too_deep()
            if first:
                raise SourceError(
                    f"{inp.path}: not JSON lines: line {number} is not JSON ({exc}); "
                    "check the file or pass the right --format"
                ) from exc
            row = exc
        first = False
        yield where, row


def iter_json_array(
    inp: Input, progress: Progress | None, chunk: int = 1 << 20
) -> Iterator[object]:
    """Stream the items of a top-level JSON array without loading the whole file.

    Raises:
        SourceError: When the file is not a JSON array or ends inside it.
    """
    decoder = json.JSONDecoder()
    text = io.TextIOWrapper(inp.stream, encoding="utf-8-sig")
    buffer = ""
    position = 0
    eof = False

    def fill() -> bool:
        """Append the next chunk (dropping what was consumed); False at end of file."""
        nonlocal buffer, position, eof
        if eof:
            return False
        try:
            piece = text.read(chunk)
        except DECOMPRESS_ERRORS as exc:
            raise broken_stream(inp.path, inp.compression, exc) from exc
        except UnicodeDecodeError as exc:
            raise SourceError(f"{inp.path}: not UTF-8 JSON ({exc.reason})") from exc
        inp.report(progress)
        if not piece:
            eof = True
            return False
        buffer = buffer[position:] + piece
        position = 0
        return True

    def skip_separators() -> str:
        """Advance past whitespace and commas; the next character, '' at end of file."""
        nonlocal position
        while True:
            while position < len(buffer) and buffer[position] in " \t\r\n,":
                position += 1
            if position < len(buffer):
                return buffer[position]
            if not fill():
                return ""

    first = skip_separators()
    if first != "[":
        raise SourceError(
            f"{inp.path}: expected a JSON array starting with '[', found {first or 'nothing'!r}"
        )
    position += 1
    while True:
        nxt = skip_separators()
        if nxt == "]":
            inp.finish(progress)
            return
        if not nxt:
            raise SourceError(
                f"{inp.path}: the JSON array ends before its closing ']' (truncated?)"
            )
        while True:
            try:
                item, end = decoder.raw_decode(buffer, position)
            except RecursionError:
                raise SourceError(f"{inp.path}: an item of the array is {_too_deep()}") from None
            except json.JSONDecodeError as exc:
                # An item cut by the chunk boundary: read more and retry; at EOF it is broken.
                if fill():
                    continue
                raise SourceError(
                    f"{inp.path}: invalid JSON inside the array ({exc.msg}); "
                    "the file is truncated or not JSON"
                ) from exc
            # A number or literal ending exactly at the buffer end may continue in the next chunk.
            if end < len(buffer) or not fill():
                break
        position = end
        yield item
