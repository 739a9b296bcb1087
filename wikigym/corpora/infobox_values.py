"""Parsers of infobox values (plain text after template expansion) into typed values.

The wikitext parser renders the value templates first: ``{{birth date|1809|2|12}}``,
``{{death date and age|...}}`` and ``{{start date|...}}`` become ISO dates,
``{{convert|392.7|km2|...}}`` becomes ``392.7 km2``, and ``<br>``, ``{{plainlist}}``,
``{{hlist}}`` and ``{{ubl}}`` lists become ``a, b, c``. What is left is parsed here:

- :func:`parse_date`: ISO dates, English day-month-year and month-day-year, the month names
  of German, French, Spanish, Italian, Portuguese and Dutch, Japanese/Chinese ``1962年7月5日``,
  and a year alone (a four-digit number is a year only where the relation is a date).
- :func:`parse_number`: the first number of a value in the wiki's locale (``4,561`` in
  English, ``4.561`` and ``392,7`` in German, ``4 561`` in French), with ``million`` /
  ``billion`` (and ``Mio.``, ``Mrd.``, ``万``, ``億``) multipliers and units converted to
  the relation's unit.
- :func:`split_items`: the items of a list value; :func:`item_spans`: where each starts
  and ends (so that the link an item starts with names it).
"""

from __future__ import annotations

import math
import re

# Languages whose numbers write the decimal separator as a comma (thousands: '.' or ' ').
DECIMAL_COMMA = frozenset(
    {
        "de", "fr", "es", "it", "pt", "nl", "ru", "bg", "pl", "cs", "sk", "sv", "da", "no",
        "nb", "nn", "fi", "tr", "ro", "hu", "uk", "hr", "sr", "sl", "el", "id", "vi", "ca",
        "eu", "gl", "lt", "lv", "et", "be", "kk",
    }
)  # fmt: skip

_MONTHS: dict[str, int] = {}
for _names in (
    "january february march april may june july august september october november december",
    "jan feb mar apr may jun jul aug sep oct nov dec",
    "januar februar märz april mai juni juli august september oktober november dezember",
    "janvier février mars avril mai juin juillet août septembre octobre novembre décembre",
    "enero febrero marzo abril mayo junio julio agosto septiembre octubre noviembre diciembre",
    "gennaio febbraio marzo aprile maggio giugno luglio agosto settembre ottobre novembre dicembre",
    "janeiro fevereiro março abril maio junho julho agosto setembro outubro novembro dezembro",
    "januari februari maart april mei juni juli augustus september oktober november december",
):
    for _i, _name in enumerate(_names.split()):
        _MONTHS.setdefault(_name, _i + 1)
_MONTHS["sept"] = 9
_MONTH = "|".join(sorted(map(re.escape, _MONTHS), key=len, reverse=True))

_ISO = re.compile(r"(?<![\d-])(\d{3,4})-(\d{1,2})(?:-(\d{1,2}))?(?![\d-])")
_DMY = re.compile(
    rf"(?<!\d)(\d{{1,2}})\.?\s+(?:de\s+)?({_MONTH})\.?,?\s+(?:de\s+)?(\d{{3,4}})(?!\d)", re.I
)
_MDY = re.compile(
    rf"(?<![\w])({_MONTH})\.?\s+(\d{{1,2}})(?:st|nd|rd|th)?,?\s+(\d{{3,4}})(?!\d)", re.I
)
_MY = re.compile(rf"(?<![\w])({_MONTH})\.?\s+(\d{{3,4}})(?!\d)", re.I)
_CJK_DATE = re.compile(r"(\d{3,4})年(?:\s*(\d{1,2})月(?:\s*(\d{1,2})日)?)?")
_YEAR = re.compile(r"(?<![\d.,])(\d{3,4})(?![\d.,])")
_BC = re.compile(r"\b(?:BC|BCE|B\.C\.|v\. Chr\.|av\. J\.-C\.|紀元前)", re.I)


def _iso(year: int, month: int | None = None, day: int | None = None) -> str | None:
    if not 100 <= year <= 2100:
        return None
    if month is None:
        return f"{year:04d}"
    if not 1 <= month <= 12:
        return None
    if day is None:
        return f"{year:04d}-{month:02d}"
    if not 1 <= day <= 31:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def parse_date(text: str, language: str = "en") -> str | None:
    """The first date of ``text`` as ISO ``YYYY-MM-DD``, ``YYYY-MM`` or ``YYYY``; None when
    there is none (or it is BC, which ISO years of this format cannot say)."""
    if not text or _BC.search(text):
        return None
    candidates: list[tuple[int, str]] = []
    for m in _ISO.finditer(text):
        iso = _iso(int(m.group(1)), int(m.group(2)), int(m.group(3)) if m.group(3) else None)
        if iso:
            candidates.append((m.start(), iso))
            break
    for m in _CJK_DATE.finditer(text):
        month = int(m.group(2)) if m.group(2) else None
        iso = _iso(int(m.group(1)), month, int(m.group(3)) if m.group(3) else None)
        if iso:
            candidates.append((m.start(), iso))
            break
    for pattern, order in ((_DMY, "dmy"), (_MDY, "mdy")):
        found = pattern.search(text)
        if found:
            if order == "dmy":
                day_s, month_s, year_s = found.group(1), found.group(2), found.group(3)
            else:
                month_s, day_s, year_s = found.group(1), found.group(2), found.group(3)
            iso = _iso(int(year_s), _MONTHS[month_s.lower()], int(day_s))
            if iso:
                candidates.append((found.start(), iso))
    if candidates:
        return min(candidates)[1]
    found = _MY.search(text)
    if found:
        return _iso(int(found.group(2)), _MONTHS[found.group(1).lower()])
    year = _YEAR.search(text)
    return _iso(int(year.group(1))) if year else None


_MULTIPLIERS: dict[str, float] = {
    "thousand": 1e3, "million": 1e6, "millions": 1e6, "billion": 1e9, "billions": 1e9,
    "trillion": 1e12, "mio": 1e6, "mio.": 1e6, "millionen": 1e6, "mrd": 1e9, "mrd.": 1e9,
    "milliarden": 1e9, "millones": 1e6, "milliards": 1e9, "milioni": 1e6, "miliardi": 1e9,
    "万": 1e4, "億": 1e8, "千": 1e3,
}  # fmt: skip
# Units of infobox numbers, as factors to a base unit (km2, km, m).
UNITS: dict[str, tuple[str, float]] = {
    "km2": ("km2", 1.0), "km²": ("km2", 1.0), "sq km": ("km2", 1.0), "ha": ("km2", 0.01),
    "sq mi": ("km2", 2.589988), "sqmi": ("km2", 2.589988), "mi2": ("km2", 2.589988),
    "mi²": ("km2", 2.589988), "acre": ("km2", 0.004046856), "acres": ("km2", 0.004046856),
    "km": ("km", 1.0), "mi": ("km", 1.609344), "m": ("m", 1.0), "ft": ("m", 0.3048),
    "per sq mi": ("km2", 1 / 2.589988),
}  # fmt: skip
_NUM_EN = re.compile(r"(?<![\d.,])-?\d{1,3}(?:,\d{3})+(?:\.\d+)?|(?<![\d.,])-?\d+(?:\.\d+)?")
_NUM_COMMA = re.compile(
    r"(?<![\d.,])-?\d{1,3}(?:[.\u00a0\u202f ]\d{3})+(?:,\d+)?(?![\d])|(?<![\d.,])-?\d+(?:,\d+)?"
)
_CJK_NUM = re.compile(r"(\d[\d,]*(?:\.\d+)?)\s*(億|万|千)")
_AFTER = re.compile(r"\s*([^\W\d_][\w.²]*\.?|万|億|千)", re.UNICODE)
_UNIT_AFTER = re.compile(r"\s*(sq\s?mi|sq\s?km|km²|km2|mi²|mi2|acres?|ha|km|mi|ft|m)(?![\w²])")


_RANK = re.compile(r"第?\d+\s*(?:位|番目)|\b\d+(?:st|nd|rd|th)\b|\(\s*\d{4}[^)]*\)")


def _cjk_number(text: str) -> float | None:
    """``1億2,500万`` -> 125000000: a Chinese/Japanese number with 億/万/千 groups."""
    total = 0.0
    end = -1
    for m in _CJK_NUM.finditer(text):
        if end >= 0 and m.start() != end:
            break
        total += float(m.group(1).replace(",", "")) * _MULTIPLIERS[m.group(2)]
        end = m.end()
    if end < 0:
        return None
    tail = re.match(r"(\d+)", text[end:])
    return total + float(tail.group(1)) if tail else total


def parse_number(
    text: str, language: str = "en", unit: str | None = None, key_unit: str | None = None
) -> float | None:
    """The first number of ``text`` in the locale of ``language``.

    Args:
        text: The plain infobox value.
        language: Base language code (decimal comma or point).
        unit: The relation's unit (``km2``, ``km``, ``m``); a value written in another
            unit of the same dimension (``sq mi``, ``mi``, ``ft``) is converted.
        key_unit: The unit the key itself says the value is in (``area_sq_mi``).

    Returns:
        The value, or None when ``text`` holds no number.
    """
    if not text:
        return None
    # Ranks ("3位", "1st", "(第6位)") and years in parentheses ("(2015 est.)") are not values.
    text = _RANK.sub(" ", text.replace("\u2212", "-"))
    if re.search(r"\d\s*[億万]", text):
        value = _cjk_number(text)
        if value is not None:
            return value
    pattern = _NUM_COMMA if language in DECIMAL_COMMA else _NUM_EN
    m = pattern.search(text)
    if not m:
        return None
    raw = m.group(0)
    if language in DECIMAL_COMMA:
        plain = re.sub(r"[.\u00a0\u202f ]", "", raw).replace(",", ".")
    else:
        plain = raw.replace(",", "")
    try:
        value = float(plain)
    except ValueError:
        return None
    if not math.isfinite(value):
        return None
    rest = text[m.end() :]
    after = _AFTER.match(rest)
    if after and after.group(1).lower() in _MULTIPLIERS:
        value *= _MULTIPLIERS[after.group(1).lower()]
    if unit is not None:
        written = key_unit
        found = _UNIT_AFTER.match(rest)
        if found:
            written = re.sub(r"\s", " ", found.group(1)).replace("sqmi", "sq mi")
        if written is not None and written in UNITS:
            base, factor = UNITS[written]
            if base == unit:
                value *= factor
    return value


def format_value(value: float) -> str:
    """A number as the snapshot stores it: plain digits, at most three decimals."""
    if float(value).is_integer():
        return str(int(value))
    return f"{value:.3f}".rstrip("0").rstrip(".")


_PAREN = re.compile(r"\s*[(（][^()（）]*[)）]")
_ITEM_SPLIT = re.compile(r"\s*(?:,|;|、|・|/|\n| and | und | et | y | e )\s*")


def clean_item(text: str) -> str:
    """An item without parenthetical notes and surrounding punctuation."""
    text = _PAREN.sub("", text)
    return text.strip(" \t,;:.、。・「」『』\"'")


def split_items(text: str) -> list[str]:
    """The items of a list value (``a, b and c``, ``a・b``), cleaned, in order, distinct."""
    items = [clean_item(t) for t in _ITEM_SPLIT.split(_PAREN.sub("", text))]
    return list(dict.fromkeys(t for t in items if t))


_SEPARATOR = re.compile(r"\s*(?:,|;|、|・|/| and | und | et | y | e )\s*")
_OPEN, _CLOSE = "(（[", ")）]"


def item_spans(text: str) -> list[tuple[int, int]]:
    """``(start, end)`` of each item of a list value: the text between separators (``,``
    ``;`` ``、`` ``・`` ``/`` and the words for *and*) outside parentheses, stripped of
    spaces, empty items left out. ``"[[A]] (x, y), B"`` is two items, not three."""
    spans: list[tuple[int, int]] = []
    depth = 0
    start = 0
    pos = 0
    n = len(text)
    while pos < n:
        ch = text[pos]
        if ch in _OPEN:
            depth += 1
        elif ch in _CLOSE:
            depth = max(0, depth - 1)
        elif depth == 0:
            m = _SEPARATOR.match(text, pos)
            if m and m.end() > pos:
                spans.append((start, pos))
                start = pos = m.end()
                continue
        pos += 1
    spans.append((start, n))
    out = []
    for a, b in spans:
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if a < b:
            out.append((a, b))
    return out
