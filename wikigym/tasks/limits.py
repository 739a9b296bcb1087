"""Bounds of tool-call arguments.

The tools' argument models (:mod:`wikigym.tools`) enforce them, and every task
source that writes an oracle trajectory (importers, one-hop defaults, synth) must stay within
them, so they live here, below both.
"""

from __future__ import annotations

MAX_QUERY_CHARS = 1000
MAX_K = 20
DEFAULT_K = 5
MAX_TITLE_CHARS = 300
MAX_SECTION_CHARS = 300
MAX_PART = 10_000
MAX_FIND_CHARS = 500
MAX_CODE_CHARS = 20_000
MAX_ANSWER_CHARS = 2000
MAX_CITATIONS = 20
MAX_CITATION_CHARS = 200
