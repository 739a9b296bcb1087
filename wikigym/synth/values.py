"""Literal values: cleaning, surface forms, and obfuscation into ranges.

A literal is kept under a *key* (the string the evaluator compares: ISO dates, digit strings,
the text itself) with an optional numeric *measure* (the year of a date, the value of a
number) that range filters compare. Surface forms are what questions and answers show.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

import numpy as np

_MONTHS = (
    "January", "February", "March", "April", "May", "June", "July", "August", "September",
    "October", "November", "December",
)  # fmt: skip
_ISO_DATE = re.compile(r"^(\d{3,4})(?:-(\d{2})(?:-(\d{2}))?)?$")
_NUMBER = re.compile(r"^\d{1,3}(?:,\d{3})+(?:\.\d+)?$|^\d+(?:\.\d+)?$")
_BAD_TEXT = re.compile(r"[\[\]{}<>|=()\n]|https?:|^\W|\W$")
MAX_TEXT_CHARS = 40


@dataclass(frozen=True, slots=True)
class Literal:
    """A cleaned literal value.

    Attributes:
        key: What the evaluator compares (ISO date, plain digits, or the text).
        measure: Year of a date or value of a number; None for text.
        surface: How the value is written in questions and answers.
        aliases: Other accepted spellings of the value as an answer.
    """

    key: str
    measure: float | None
    surface: str
    aliases: tuple[str, ...] = ()


def format_number(value: float) -> str:
    """``8672730`` -> ``8,672,730``; keeps up to two decimals for non-integers."""
    if float(value).is_integer():
        return f"{int(value):,}"
    return f"{value:,.2f}".rstrip("0").rstrip(".")


def date_surface(key: str) -> str:
    """``1929-02-02`` -> ``2 February 1929``; ``1929-02`` -> ``February 1929``; ``1929`` ->
    ``1929``."""
    m = _ISO_DATE.match(key)
    if not m or not m.group(2):
        return key
    if not m.group(3):
        return f"{_MONTHS[int(m.group(2)) - 1]} {int(m.group(1))}"
    return f"{int(m.group(3))} {_MONTHS[int(m.group(2)) - 1]} {int(m.group(1))}"


def clean_literal(value_type: str, text: str) -> Literal | None:
    """A :class:`Literal` for a fact object, or None when the value is not clean enough.

    Dates must be ISO (``YYYY``, ``YYYY-MM`` or ``YYYY-MM-DD``); numbers plain or comma-grouped digits;
    texts short, without markup, brackets or leading/trailing punctuation.
    """
    text = text.strip()
    if not text:
        return None
    if value_type == "date":
        m = _ISO_DATE.match(text)
        if not m:
            return None
        if m.group(2) and not 1 <= int(m.group(2)) <= 12:
            return None
        if m.group(3) and not 1 <= int(m.group(3)) <= 31:
            return None
        surface = date_surface(text)
        aliases: tuple[str, ...] = (text,) if surface != text else ()
        if m.group(3):
            mon = _MONTHS[int(m.group(2)) - 1]
            aliases = (*aliases, f"{mon} {int(m.group(3))}, {int(m.group(1))}")
        return Literal(text, float(m.group(1)), surface, aliases)
    if value_type == "number":
        if not _NUMBER.match(text):
            return None
        plain = text.replace(",", "")
        value = float(plain)
        if not math.isfinite(value):
            return None
        surface = format_number(value)
        return Literal(
            plain, value, surface, tuple(a for a in dict.fromkeys((plain, text)) if a != surface)
        )
    if len(text) > MAX_TEXT_CHARS or _BAD_TEXT.search(text) or "," in text:
        return None
    return Literal(text, None, text)


# ---- obfuscation -------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Span:
    """A closed interval that hides an exact value."""

    lo: float
    hi: float


def year_span(year: int, rng: np.random.Generator) -> Span:
    """The decade of ``year`` or a five-to-ten-year window around it (never starting at it)."""
    if rng.random() < 0.6:
        start = year - year % 10
        return Span(start, start + 9)
    width = int(rng.integers(5, 11))
    lo = year - int(rng.integers(1, width))
    return Span(lo, lo + width)


def number_span(value: float, rng: np.random.Generator) -> Span:
    """A range of round numbers around ``value`` with neither end equal to it."""
    magnitude = 10 ** max(0, math.floor(math.log10(max(value, 1.0))) - 1)
    steps = int(rng.integers(2, 6))  # width in units of `magnitude`
    lo_units = math.floor(value / magnitude) - int(rng.integers(1, steps))
    lo = max(0, lo_units) * magnitude
    hi = lo + steps * magnitude
    if hi <= value:
        hi = (math.floor(value / magnitude) + 1) * magnitude
    return Span(float(lo), float(hi))


def span_phrase(span: Span, unit: str, rng_choice: int = 0) -> str:
    """The words of a span: ``in the 1920s``, ``between 1921 and 1926``, ``between 40,000 and
    60,000``."""
    if unit == "year":
        lo, hi = int(span.lo), int(span.hi)
        if lo % 10 == 0 and hi == lo + 9 and rng_choice % 2 == 0:
            return f"in the {lo}s"
        return f"between {lo} and {hi}"
    return f"between {format_number(span.lo)} and {format_number(span.hi)}"
