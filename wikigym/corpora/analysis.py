"""Language-aware text analysis for the index: stemmer, stop words and CJK bigrams.

The wiki's language (siteinfo's ``xml:lang``, or ``--language``) picks:

- a Snowball stemmer where Tantivy ships one (18 languages, :data:`STEMMERS`), none otherwise
  (Japanese, Chinese, Korean, Bulgarian, Polish, Czech, ...: unstemmed lower-case words);
- stop words for English only (Lucene's 33; other languages index every word);
- for Chinese, Japanese and Korean, character bigrams: scripts written without spaces give
  one token per run of kana/kanji to a word tokenizer (``日本語の文字`` would be one term, so
  ``日本`` could never match it). As Lucene's CJKAnalyzer does, each run of CJK characters
  is indexed and queried as its overlapping bigrams (``日本 本語 語の の文 文字``); a run of
  one character stays a unigram. Text in other scripts inside the same passage is untouched.
"""

from __future__ import annotations

import re

STEMMERS: dict[str, str] = {
    "ar": "arabic", "da": "danish", "nl": "dutch", "en": "english", "fi": "finnish",
    "fr": "french", "de": "german", "el": "greek", "hu": "hungarian", "it": "italian",
    "no": "norwegian", "nb": "norwegian", "nn": "norwegian", "pt": "portuguese",
    "ro": "romanian", "ru": "russian", "es": "spanish", "sv": "swedish", "ta": "tamil",
    "tr": "turkish",
}  # fmt: skip
"""ISO 639-1 code -> Tantivy stemmer name."""

CJK_LANGUAGES = frozenset({"ja", "zh", "ko", "wuu", "yue", "gan", "lzh", "cdo", "hak"})

# Han (with extension A and compatibility ideographs), the iteration mark 々, kana (with the
# prolonged sound mark ー and half-width katakana) and Hangul syllables.
CJK_RUN = re.compile(
    "[\u3005\u3040-\u309f\u30a0-\u30ff\u3400-\u4dbf\u4e00-\u9fff"
    "\uf900-\ufaff\uff66-\uff9f\uac00-\ud7af]+"
)


def language_code(raw: str | None) -> str:
    """A wiki language tag as its base code: ``"ja"``, ``"zh-yue"`` -> ``"yue"`` stays a
    CJK tag, ``"pt-BR"`` -> ``"pt"``; empty or missing -> ``"en"``."""
    if not raw or not raw.strip():
        return "en"
    tag = raw.strip().lower().replace("_", "-")
    head, _, tail = tag.partition("-")
    if head == "zh" and tail in CJK_LANGUAGES:
        return tail
    return head


def stemmer_for(language: str) -> str | None:
    """Tantivy's stemmer for ``language``, or None where none fits."""
    return STEMMERS.get(language)


def uses_bigrams(language: str) -> bool:
    """Whether text of ``language`` is indexed as CJK bigrams."""
    return language in CJK_LANGUAGES


def _bigrams(match: re.Match[str]) -> str:
    run = match.group(0)
    if len(run) == 1:
        return f" {run} "
    return " " + " ".join(run[i : i + 2] for i in range(len(run) - 1)) + " "


def cjk_bigrams(text: str) -> str:
    """Every run of CJK characters as space-separated overlapping bigrams."""
    return CJK_RUN.sub(_bigrams, text)
