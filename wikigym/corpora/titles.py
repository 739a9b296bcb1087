"""Title normalisation shared by the parser, the builder and page look-up.

MediaWiki titles treat ``_`` as a space, collapse runs of whitespace and upper-case the
first letter (``$wgCapitalLinks``); the rest is case-sensitive. Look-ups by users and
models are more forgiving: :func:`title_key` folds case entirely.
"""

from __future__ import annotations

import re

_WS = re.compile(r"[\s_]+")


def normalize_title(title: str) -> str:
    """Canonical form of a page title, as MediaWiki stores it.

    Args:
        title: A title as written in a link, a dump or by a user.

    Returns:
        The title with underscores as spaces, whitespace collapsed, no fragment and the
        first letter upper-cased; ``""`` if nothing is left.
    """
    title = title.split("#", 1)[0]
    title = _WS.sub(" ", title).strip()
    if not title:
        return ""
    return title[0].upper() + title[1:]


def title_key(title: str) -> str:
    """Case-insensitive look-up key of a title (used when the exact title is not found)."""
    return normalize_title(title).casefold()
