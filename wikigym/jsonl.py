"""One reader of JSON-lines files: streamed in bounded pieces, every line numbered.

TaskSet files, trajectory files and SFT chat exports are JSON lines, and each is read here, so
each is read the same way: one line at a time (never the whole file at once), a line or a
file over its cap refused with the line number, text decoded as UTF-8, blank lines skipped.
What a line must hold (a task, a trajectory step, a chat) is the caller's, and so is the error
type: the reader raises the caller's own, with a message that says what was expected.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

MAX_LINE_BYTES = 256 * 1024 * 1024
"""The default cap on one line (a task or a chat is far smaller; a cap keeps memory bounded)."""


def json_lines(
    path: Path,
    error: Callable[[str], Exception],
    *,
    what: str,
    max_line_bytes: int = MAX_LINE_BYTES,
    max_file_bytes: int | None = None,
    max_lines: int | None = None,
) -> Iterator[tuple[int, str]]:
    """``(line number, text)`` of each non-blank line of ``path``, in order, streamed.

    Args:
        path: The file (its existence is the caller's to check, with its own message).
        error: Makes the caller's exception from a one-line message.
        what: What the file should be (``"a TaskSet file"``), for the messages.
        max_line_bytes: Longest line read.
        max_file_bytes: Largest file read (None: no cap).
        max_lines: Most lines read, blank ones included (None: no cap).

    Raises:
        Exception: ``error(message)`` for an unreadable file, a line too long, a file too
            large or too long, or text that is not UTF-8.
    """
    total = 0
    number = 0
    try:
        with path.open("rb") as f:
            while True:
                raw = f.readline(max_line_bytes + 1)
                if not raw:
                    return
                number += 1
                total += len(raw)
                if max_lines is not None and number > max_lines:
                    raise error(f"{path}: more than {max_lines} lines; not {what}")
                if len(raw) > max_line_bytes:
                    raise error(
                        f"{path}:{number}: line longer than {max_line_bytes} bytes; not {what}"
                    )
                if max_file_bytes is not None and total > max_file_bytes:
                    raise error(f"{path}: larger than {max_file_bytes} bytes; not {what}")
                if not raw.strip():
                    continue
                try:
                    text = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    raise error(
                        f"{path}:{number}: not UTF-8 text ({exc.reason} at byte {exc.start})"
                    ) from exc
                yield number, text
    except OSError as exc:
        raise error(f"cannot read {path}: {exc.strerror or exc}") from exc
