"""Citation ids: how tools show corpus ids and how answers cite them.

A passage is ``p<passage_id>``, a page ``d<doc_id>``. Tasks (oracle citations), tools (what
they show), rewards and agents all speak these ids, so they have one home here, below them all.
"""

from __future__ import annotations


def passage_ref(passage_id: int) -> str:
    """The citation id of a passage (``p12``)."""
    return f"p{passage_id}"


def page_ref(doc_id: int) -> str:
    """The citation id of a page (``d3``)."""
    return f"d{doc_id}"


def parse_ref(ref: str) -> tuple[str, int] | None:
    """``("p", 12)`` for ``p12``, ``("d", 3)`` for ``d3``; None for anything else."""
    ref = ref.strip()
    if len(ref) >= 2 and ref[0] in "pPdD" and ref[1:].isdigit() and len(ref) <= 19:
        return ref[0].lower(), int(ref[1:])
    return None
