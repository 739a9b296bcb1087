"""A page as tools name it: by title or doc id (``PageRef``), looked up with one clear miss."""

from __future__ import annotations

from typing import Annotated, Any

from pydantic import BeforeValidator, WithJsonSchema
from pydantic_core import PydanticCustomError

from wikigym.codes import ErrorCode
from wikigym.corpora.snapshot import Page
from wikigym.tasks.limits import MAX_TITLE_CHARS
from wikigym.tasks.refs import parse_ref
from wikigym.tools.base import ToolBox, ToolErrorOutput, ToolResult

_PAGE_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS},
        {"type": "integer", "minimum": 0},
    ],
    "description": "The page: its title (string) or its doc id (integer).",
}


def check_page(value: object) -> str | int:
    """Validate a page reference with one clear message instead of one per union member."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PydanticCustomError(
            "page_type",
            "page must be a page title (string) or a doc id (integer), got {kind}",
            {"kind": type(value).__name__},
        )
    if isinstance(value, int):
        if value < 0:
            raise PydanticCustomError("page_id", "a doc id must be >= 0, got {v}", {"v": value})
        return value
    title = value.strip()
    if not title:
        raise PydanticCustomError("page_empty", "page title must not be empty", {})
    if len(title) > MAX_TITLE_CHARS:
        raise PydanticCustomError(
            "page_too_long",
            "page title must have at most {n} characters, got {m}",
            {"n": MAX_TITLE_CHARS, "m": len(title)},
        )
    return title


PageRef = Annotated[str | int, BeforeValidator(check_page), WithJsonSchema(_PAGE_SCHEMA)]
"""A page named by its title (str, stripped, 1..300 chars) or by its doc id (int >= 0)."""


def page_or_error(box: ToolBox, ref: str | int) -> Page | ToolResult:
    """The page ``ref`` names, or a ``not_found`` result offering similar titles.

    A title first; ``"d12"`` (a page id as the tools show it) only when no title matches.
    """
    snapshot = box.snapshot
    page = snapshot.page(ref)
    if page is None and isinstance(ref, str):
        parsed = parse_ref(ref)
        if parsed is not None and parsed[0] == "d":
            page = snapshot.page(parsed[1])
    if page is not None:
        return page
    hint = ""
    titles: list[str] = []
    if isinstance(ref, str):
        for h in snapshot.search(ref, 5):
            if h.title not in titles:
                titles.append(h.title)
        if titles:
            hint = " Similar titles: " + "; ".join(titles[:3]) + "."
    message = (
        f"open: no page {ref!r} (by title, redirect or doc id).{hint} "
        "Use search to find the exact title."
    )
    return ToolResult(
        ToolErrorOutput(ErrorCode.NOT_FOUND, message, tuple(titles[:3])),
        error=ErrorCode.NOT_FOUND,
    )
