"""Split section text into passages of about N words, on sentence boundaries.

Passages never cross sections, so a hit can always name its section. Sentences are kept
whole when they fit, so a fact stated in one sentence lies in one passage (synth relies on
it); a sentence longer than the budget is cut on word boundaries.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

# A sentence ends at . ! ? (optionally followed by a closing quote or bracket) before
# whitespace and a capital, digit or opening quote; at a CJK full stop (。！？, and a closing
# bracket after it), spaces or not; paragraph breaks always end one.
_SENTENCE_END = re.compile(
    r"(?<=[.!?])[\"')\]]?\s+(?=[\"'(\[]?[A-Z0-9À-ÖØ-Þ])"
    r"|(?<=[。！？])[」』）]?\s*(?=\S)"
    r"|\n\s*\n"
)
# Words: runs of non-space characters, except that CJK text (written without spaces)
# counts two characters as a word, so a 100-word passage holds ~200 kana/kanji.
_CJK = (
    "\u3005\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af"
)
_CJK_PUNCT = "\u3000-\u3004\u3006-\u303f\uff01-\uff65"
_WORD = re.compile(f"[{_CJK}]{{1,2}}[{_CJK_PUNCT}]*|[^\\s{_CJK}]+")


def _sentence_spans(text: str) -> Iterator[tuple[int, int]]:
    start = 0
    for m in _SENTENCE_END.finditer(text):
        end = m.start()
        if end > start:
            yield start, end
        start = m.end()
    if start < len(text):
        yield start, len(text)


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` (stripped, non-empty), by the boundaries passages are cut on.

    The one sentence splitter: passages, the context wrapper's extracts and the heuristic
    agent all split here.
    """
    return [part for s, e in _sentence_spans(text) if (part := text[s:e].strip())]


def split_passages(text: str, words: int) -> list[tuple[int, int]]:
    """Cut ``text`` into spans of about ``words`` words.

    Args:
        text: Plain text of one section.
        words: Target words per passage (a passage holds at most this many unless one
            sentence is longer, in which case that sentence is cut).

    Returns:
        ``(start, end)`` character spans into ``text``, in order, each stripped of
        surrounding whitespace and non-empty. A final passage under a quarter of the
        budget is merged into the previous one.
    """
    if words < 1:
        raise ValueError(f"passage words must be >= 1, got {words}")
    units: list[tuple[int, int, int]] = []  # (start, end, n_words)
    for s, e in _sentence_spans(text):
        spans = [(m.start(), m.end()) for m in _WORD.finditer(text, s, e)]
        if not spans:
            continue
        for i in range(0, len(spans), words):
            chunk = spans[i : i + words]
            units.append((chunk[0][0], chunk[-1][1], len(chunk)))
    passages: list[list[int]] = []  # [start, end, n_words]
    for s, e, n in units:
        if passages and passages[-1][2] + n <= words:
            passages[-1][1] = e
            passages[-1][2] += n
        else:
            passages.append([s, e, n])
    if len(passages) >= 2 and passages[-1][2] < max(1, words // 4):
        last = passages.pop()
        passages[-1][1] = last[1]
        passages[-1][2] += last[2]
    return [(s, e) for s, e, _ in passages]
