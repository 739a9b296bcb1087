"""A no-LLM search baseline: the difficulty calibrator of the task levels.

It reads only the question (from the task prompt) and the observations; it never receives
the :class:`~wikigym.tasks.taskset.Task` (the runner passes ``None`` to unprivileged agents).

Plan, for a question such as "What is the population of the birthplace of X?":

1. Split the question into a subject (a name) and a chain of relations, innermost first
   ("birthplace", then "population"), and guess the answer type from the question words
   (a date for "when", a number for "how many" or "population", else an entity or a
   word).
2. Search with the question; take the result title that the question names (the longest),
   else open the question's longest capitalised phrase.
3. For each relation: open the current page, score its sentences by the relation's cue
   words, and extract from the best sentence a value of the expected type (a linked page
   title for entities, an ISO date, a number without separators). The extracted entity is
   the page of the next hop.
4. Answer the last value, citing the passage it came from.

Questions that describe their subject ("the person who was born on 5 May 1901") or ask for
the page that holds a value ("Which novel first appeared in 1868?") take the search hit
whose passage states the question's verbatim constants (dates, numbers, names) as the
entity, then follow the relation asked about it, if any.

Nothing here knows the answers: questions whose subject is described rather than named,
which constrain several attributes, or which hide numbers, defeat it, which is the point.
"""

from __future__ import annotations

import re
from collections.abc import Generator, Sequence
from dataclasses import dataclass, field

from wikigym.corpora.index import ENGLISH_STOPWORDS
from wikigym.corpora.passages import split_sentences
from wikigym.envs.results import StepOutput
from wikigym.eval.agents import tool_call
from wikigym.tasks.refs import passage_ref
from wikigym.tasks.taskset import Task
from wikigym.tools import ToolErrorOutput
from wikigym.tools.open import PageOutput
from wikigym.tools.search import SearchOutput

MONTHS = (
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
)
_DATE = re.compile(r"\b(\d{1,2}) (" + "|".join(m.capitalize() for m in MONTHS) + r") (\d{3,4})\b")
_YEAR = re.compile(r"\b(\d{3,4})\b")
_NUMBER = re.compile(r"\b\d{1,3}(?:,\d{3})+(?:\.\d+)?\b|\b\d+(?:\.\d+)?\b")
_CAPS = re.compile(r"\b[A-Z][\w'’-]*(?:\s+(?:of|the|de|von|van|and)?\s*[A-Z][\w'’-]*)*")
_WORD = re.compile(r"[a-z0-9]+")

STOPWORDS: frozenset[str] = frozenset(ENGLISH_STOPWORDS)  # the one list (the index's)

# Question words -> phrases that state the relation in prose (plain English knowledge).
CUES: dict[str, tuple[str, ...]] = {
    "born": ("born", "birth"),
    "birthplace": ("born", "birth"),
    "birth": ("born", "birth"),
    "die": ("died", "death"),
    "died": ("died", "death"),
    "death": ("died", "death"),
    "located": ("located in", "is a city in", "is a mountain in", "is a town in", " in "),
    "country": ("located in", "is a city in", "is a mountain in", "citizen", "nationality"),
    "capital": ("capital",),
    "founded": ("founded", "established", "dates from", "first settlement"),
    "founder": ("founded by", "founder", "established by", "formed by"),
    "founding": ("founded", "established", "dates from"),
    "headquartered": ("headquarters", "headquartered", "campus", "based in"),
    "headquarters": ("headquarters", "headquartered", "campus", "based in"),
    "wrote": ("wrote", "written by", "author"),
    "author": ("wrote", "written by", "author"),
    "directed": ("directed", "director"),
    "director": ("directed", "director"),
    "population": ("population", "people live", "inhabitants"),
    "spouse": ("married", "spouse"),
    "married": ("married", "spouse"),
    "nationality": ("citizen", "nationality", "national of"),
    "mayor": ("mayor",),
    "elevation": ("metres above", "rises to", "elevation"),
    "length": ("length", "kilometres long"),
    "educated": ("educated", "studied", "attended"),
    "employer": ("joined", "worked for", "employed", "employer"),
    "publication": ("released in", "published in", "first released", "appeared in"),
    "area": ("square kilometres", "area"),
    "award": ("received", "awarded"),
    "received": ("received", "awarded"),
    "language": ("written in", "language"),
    "publisher": ("publisher", "published by"),
    "production": ("produced by",),
    "ceo": ("chief executive",),
    "executive": ("chief executive",),
    "range": ("part of",),
    "twinned": ("twinned",),
    "member": ("played in", "member"),
    "label": ("record label",),
    "performer": ("album by", "performed by", "single by"),
    "organiser": ("organised by", "organized by"),
    "mouth": ("reaches the sea", "mouth"),
    "flows": ("flows through", "passes"),
    "ascent": ("first ascent",),
    "currency": ("currency",),
    "independence": ("independence",),
    "employees": ("employs", "employees"),
    "attendance": ("visitors", "attendance"),
    "casualties": ("casualties",),
    "speakers": ("speakers",),
    "occupation": (" is a ", " is an ", " was a ", " was an "),
    "instance": (" is a ", " is an ", " was a ", " was an "),
    "genre": (" is a ", " is an ", " was a ", " was an ", "work of"),
    "industry": (" is a ", " is an "),
    "date": ("held on", "fought on", "concluded on", "signed on", "took place on"),
}
_NUMBER_WORDS = frozenset(
    [
        "population",
        "area",
        "elevation",
        "length",
        "employees",
        "attendance",
        "casualties",
        "speakers",
        "height",
        "many",
        "much",
        "number",
    ]
)
_YEAR_WORDS = frozenset(["year", "founded", "founding", "established", "publication", "ascent"])
_DATE_WORDS = frozenset(["date", "born", "die", "died", "birth", "death", "independence"])
_KIND_WORDS = frozenset(["occupation", "instance", "genre", "industry", "type", "kind", "field"])
_KIND_TAIL = re.compile(r"\s+(band|company|record|album|group|ensemble)$")
_KIND_PHRASE = re.compile(
    r"\b(?:is|was) (?:a work of |an? )([a-z][a-z -]*?)(?=[.,;]| located| in | by | of | with |$)"
)
_GENERIC_KINDS = frozenset(
    ["film", "album", "novel", "band", "company", "record", "work", "book", "single"]
)
_MONTH_NAMES = frozenset(m.capitalize() for m in MONTHS)


@dataclass(frozen=True)
class Hop:
    """One relation of the chain: its words, cue phrases and the answer type it yields."""

    words: tuple[str, ...]
    cues: tuple[str, ...]
    kind: str  # entity | date | year | number | word


@dataclass
class Plan:
    """What the question asks, as far as the heuristic can tell."""

    subject: str
    hops: list[Hop] = field(default_factory=list)


def question_of(prompt: str) -> str:
    """The question in a WikiSearch task prompt (the text after the last ``Question:``)."""
    at = prompt.rfind("Question:")
    return prompt[at + len("Question:") :].strip() if at >= 0 else prompt.strip()


def _words(text: str) -> list[str]:
    return _WORD.findall(text.lower())


def _hop(phrase: str, qword: str) -> Hop:
    words = tuple(w for w in _words(phrase) if w not in STOPWORDS)
    cues: list[str] = []
    for w in words:
        cues.extend(CUES.get(w, ()))
    if not cues:  # the relation's own words (4-letter stems) stand in for its cue phrases
        cues = [w[:5] for w in words if len(w) > 3]
    ws = set(words)
    if qword in ("who", "where"):
        kind = "entity"
        if qword == "who" and ws & {"founded", "established"}:
            cues = ["founded by", "founder", "established by", "formed by"]
    elif (qword == "when" and ws & {"born", "die", "died"}) or (ws & _DATE_WORDS and "date" in ws):
        kind = "date"
    elif ws & _YEAR_WORDS or (qword == "when" and not ws & _DATE_WORDS):
        kind = "year" if "date" not in ws else "date"
    elif ws & _NUMBER_WORDS or qword == "how":
        kind = "number"
    elif ws & _KIND_WORDS:
        kind = "word"
    else:
        kind = "entity"
    return Hop(words=words, cues=tuple(dict.fromkeys(cues)), kind=kind)


_SUBJECT = re.compile(
    r"[A-Z][\w'’-]*(?:(?:,?\s+(?:(?:of|the|from|in|to|and|on|at|for|a|an|de|von|van)\s+)*)"
    r"[A-Z0-9][\w'’-]*)*(?:\s+\([^)]*\))?"
)
_QWORDS = frozenset(["what", "who", "where", "when", "which", "in", "how"])


def guess_subject(question: str) -> str:
    """The longest name-like phrase of the question (capitalised words, qualifiers)."""
    spans = []
    for m in _SUBJECT.finditer(question):
        span = m.group(0).strip()
        first, _, rest = span.partition(" ")
        if first.lower() in _QWORDS:  # "What", "In which": not part of a name
            span = rest.strip()
            if not span or not span[0].isupper():
                continue
        spans.append(span)
    return max(spans, key=len) if spans else question


def analyse(question: str, subject: str | None = None) -> Plan:
    """Split a question into its subject and relation chain (innermost relation first).

    Args:
        question: The question text.
        subject: The subject when already known (a page title the question names);
            guessed from the capitalised phrases otherwise.
    """
    q = question.strip().rstrip("?").strip()
    qword = q.split(" ", 1)[0].lower() if q else ""
    if subject is None or subject.lower() not in q.lower():
        subject = guess_subject(q)
    at = q.lower().find(subject.lower())
    rest = (q[:at] + " " + q[at + len(subject) :]).strip() if at >= 0 else q
    # "What is the A of the B of X" -> ["B", "A"]: the phrases between the "of the"s.
    m = re.match(
        r"^(?:what|which|who|where|when)\s+(?:is|was|are|were)\s+the\s+(.*?)\s*$", rest, re.I
    )
    hops: list[Hop] = []
    if m:
        chain = re.sub(r"\s+of$", "", m.group(1).strip())
        parts = [p for p in re.split(r"\s+of\s+the\s+", chain) if p.strip()]
        for i, part in enumerate(reversed(parts)):
            hops.append(_hop(part, qword if i == len(parts) - 1 else "which"))
    if not hops:
        hops = [_hop(rest, qword)]
    return Plan(subject=subject, hops=hops)


# ---- observation parsing ------------------------------------------------------------------
@dataclass
class PageView:
    """An ``open`` result: title, passages (id, text) and link titles."""

    title: str
    passages: list[tuple[int, str]]
    links: list[str]
    next_part: int | None


def parse_search(outputs: Sequence[StepOutput]) -> list[tuple[int, str, str]]:
    """(passage id, page title, lead line) of each search hit, best first.

    The baseline reads a hit by the first line of its passage (the line the search result
    leads with); it opens the page to read on. Its calibration of the levels rests on this.
    """
    for out in outputs:
        if isinstance(out, SearchOutput):
            return [(h.passage_id, h.title, h.text.split("\n", 1)[0].strip()) for h in out.hits]
    return []


def parse_page(outputs: Sequence[StepOutput]) -> PageView | None:
    """The page of an ``open`` result, or None when the step showed no page."""
    for out in outputs:
        if isinstance(out, PageOutput):
            passages = [(b.passage_id, b.text) for b in out.blocks]
            return PageView(out.title, passages, list(out.links), out.next_part)
    return None


def suggested_titles(outputs: Sequence[StepOutput]) -> tuple[str, ...]:
    """The titles an unknown-page error offers instead, best first."""
    for out in outputs:
        if isinstance(out, ToolErrorOutput) and out.suggestions:
            return out.suggestions
    return ()


def _surfaces(title: str) -> list[str]:
    """How a linked title may read in prose: itself, without qualifiers or a 'language' tail."""
    forms = [title, re.sub(r"\s*\(.*\)$", "", title), title.split(",")[0]]
    forms += [f.removesuffix(" language") for f in forms]
    return [f for f in dict.fromkeys(forms) if f]


def _iso(m: re.Match[str]) -> str:
    return f"{int(m.group(3)):04d}-{MONTHS.index(m.group(2).lower()) + 1:02d}-{int(m.group(1)):02d}"


def _nearest(cands: list[tuple[int, str]], at: int) -> str | None:
    """The candidate whose position is closest to the cue (after it on ties)."""
    if not cands:
        return None
    return min(cands, key=lambda c: (abs(c[0] - at), c[0] < at))[1]


def extract(sentence: str, cue_at: int, hop: Hop, page: PageView) -> str | None:
    """A value of the hop's type in ``sentence``, nearest to the cue at ``cue_at``."""
    if hop.kind == "date":
        dates = [(m.start(), _iso(m)) for m in _DATE.finditer(sentence)]
        if dates:
            return _nearest(dates, cue_at)
        return _nearest([(m.start(), m.group(1)) for m in _YEAR.finditer(sentence)], cue_at)
    if hop.kind == "year":
        return _nearest([(m.start(), m.group(1)) for m in _YEAR.finditer(sentence)], cue_at)
    if hop.kind == "number":
        spans = [(d.start(), d.end()) for d in _DATE.finditer(sentence)]
        nums = [
            (m.start(), m.group(0).replace(",", ""))
            for m in _NUMBER.finditer(sentence)
            if not any(a <= m.start() < b for a, b in spans)
        ]
        return _nearest(nums, cue_at)
    if hop.kind == "word":
        m = _KIND_PHRASE.search(sentence)
        return None if m is None else _KIND_TAIL.sub("", m.group(1).strip())
    own = set(_words(page.title))
    cands: list[tuple[int, str]] = []
    for title in page.links:
        if set(_words(title)) <= own:
            continue
        for form in _surfaces(title):
            at = sentence.find(form)
            if at >= 0:
                cands.append((at, title))
                break
    if not cands:
        for m in _CAPS.finditer(sentence):
            span = m.group(0).strip()
            if m.start() > 0 and span not in _MONTH_NAMES and not set(_words(span)) <= own:
                cands.append((m.start(), span))
    return _nearest(cands, cue_at)


def _cue_pattern(cue: str) -> re.Pattern[str]:
    """A cue as a pattern: whole words (so "died" does not match "studied")."""
    if cue.strip() != cue:  # spaced cues (" is a ") match as written
        return re.compile(re.escape(cue))
    return re.compile(r"(?<![a-z0-9])" + re.escape(cue) + r"(?![a-z0-9])")


def _quality(value: str, hop: Hop, page: PageView) -> int:
    """How much a value looks like the answer type (ties between equally cued sentences)."""
    if hop.kind == "date":  # a full date beats a bare year ("(born 1939)")
        return int("-" in value)
    if hop.kind == "entity":  # a linked page beats a capitalised phrase
        return int(value in page.links)
    if hop.kind == "word":  # "a musical film" beats "a film"
        return int(value not in _GENERIC_KINDS)
    return 0


def best_value(page: PageView, hop: Hop) -> tuple[str, int] | None:
    """(value, passage id) from the page's sentence that best states the hop's relation."""
    best: tuple[int, int, int, str, int] | None = None  # (-score, -quality, order, value, pid)
    order = 0
    for pid, text in page.passages:
        for sentence in split_sentences(text.replace("\n", ". ")):
            order += 1
            low = sentence.lower()
            hits = [m.start() for c in hop.cues if (m := _cue_pattern(c).search(low))]
            if not hits:
                continue
            value = extract(sentence, min(hits), hop, page)
            if value is None:
                continue
            quality = _quality(value, hop, page)
            key = (-len(hits), -quality, order, value, pid)
            if best is None or key < best:
                best = key
    return None if best is None else (best[3], best[4])


_DESCRIBED = re.compile(r"\b(?:the|a|an)\s+(?:[a-z]+\s+){0,2}?(?:who|that|which|whose|where)\b")
_HEAD_OF = re.compile(
    r"^(what|which|who|where|when)\s+(?:is|was|are|were)\s+the\s+(.+?)\s+of\s*$", re.I
)
_HEAD_VERB = re.compile(r"^(when|where)\s+(?:did|was|were|is)\s*$", re.I)


def constants(question: str, named: list[str]) -> list[str]:
    """What the question states verbatim: dates, numbers and names (to find in passages)."""
    found = [m.group(0) for m in _DATE.finditer(question)]
    spans = [(m.start(), m.end()) for m in _DATE.finditer(question)]
    found += [
        m.group(0)
        for m in _NUMBER.finditer(question)
        if not any(a <= m.start() < b for a, b in spans)
    ]
    found += named
    subject = guess_subject(question.rstrip("?"))
    if subject != question.rstrip("?") and subject[:1].isupper():
        found.append(subject)
    return list(dict.fromkeys(found))


def reverse_pick(
    hits: list[tuple[int, str, str]], question: str, named: list[str]
) -> tuple[str, list[str]] | None:
    """The search hit whose passage states the question's constants: (its title, citation)."""
    consts = constants(question, named)
    excluded = {c.lower() for c in consts}
    cues = {w[:5] for w in _words(question) if w not in STOPWORDS and len(w) > 3}
    cues -= {w[:5] for c in consts for w in _words(c)}
    best: tuple[float, int, str, int] | None = None
    for order, (pid, title, text) in enumerate(hits):
        if title.lower() in excluded:
            continue
        score = 2.0 * sum(c in text for c in consts)
        if score == 0:
            continue
        stems = {w[:5] for w in _words(text)}
        score += 0.5 * len(cues & stems)
        key = (-score, order, title, pid)
        if best is None or key < best:
            best = key
    return None if best is None else (best[2], [passage_ref(best[3])])


def head_hops(question: str, described: re.Match[str]) -> list[Hop]:
    """Relations asked about a described entity ("What was the occupation of the person who
    ...", "When did the person who ... die?"); empty when the description is the answer."""
    head = question[: described.start()].strip()
    qword = head.split(" ", 1)[0].lower() if head else ""
    if m := _HEAD_OF.match(head):
        return [_hop(m.group(2), qword)]
    if _HEAD_VERB.match(head):
        last = _words(question)[-1:] or [""]
        return [_hop(last[0], qword)]
    return []


class HeuristicAgent:
    """Search, open the named page, follow the relation chain, answer the best candidate.

    Args:
        max_steps: The env's step budget; the agent answers before it is spent.
    """

    privileged = False
    name = "heuristic"

    def __init__(self, max_steps: int = 12) -> None:
        self.max_steps = max_steps
        self._plan: Generator[str, tuple[StepOutput, ...], None] | None = None
        self._steps = 0
        self._guess: tuple[str, list[str]] = ("unknown", [])

    def reset(self, task_prompt: str, task: Task | None) -> None:
        # The task is deliberately ignored: the baseline sees only the question.
        self._plan = self._run(question_of(task_prompt))
        self._steps = 0
        self._guess = ("unknown", [])
        next(self._plan)

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        self._steps += 1
        if self._plan is None or self._steps >= self.max_steps:
            return self._answer()
        try:
            return self._plan.send(tuple(outputs))
        except StopIteration:
            self._plan = None
            return self._answer()

    def _answer(self) -> str:
        text, cites = self._guess
        return tool_call("answer", {"text": text, "citations": cites})

    def _run(self, question: str) -> Generator[str, tuple[StepOutput, ...], None]:
        yield ""  # primed by reset(); the first send() carries the task prompt
        outs = yield tool_call("search", {"query": question, "k": 10})
        hits = parse_search(outs)
        low_q = question.lower()
        named = list(dict.fromkeys(t for _, t, _ in hits if t.lower() in low_q))
        described = _DESCRIBED.search(question)
        if described is not None:
            # "the person who was born on ...": find the page that states the constants.
            picked = reverse_pick(hits, question, named)
            if picked is None:
                return
            self._guess = picked
            hops = head_hops(question, described)
            if hops:
                yield from self._follow(picked[0], hops)
            return
        plan = analyse(question, max(named, key=len) if named else None)
        solved = yield from self._follow(plan.subject, plan.hops)
        if not solved and (picked := reverse_pick(hits, question, named)) is not None:
            self._guess = picked  # "Which person was born on ...?": the answer is a page

    def _follow(self, entity: str, hops: list[Hop]) -> Generator[str, tuple[StepOutput, ...], bool]:
        """Open ``entity`` and follow ``hops``; True when every hop gave a value."""
        for i, hop in enumerate(hops):
            page = None
            part = 1
            while True:
                args: dict[str, object] = {"page": entity}
                if part > 1:
                    args["part"] = part
                outs = yield tool_call("open", args)
                view = parse_page(outs)
                if view is None:
                    similar = suggested_titles(outs)
                    if part == 1 and similar and entity != similar[0]:
                        entity = similar[0]
                        continue
                    break
                page = view if page is None else PageView(
                    page.title, page.passages + view.passages, page.links or view.links,
                    view.next_part,
                )  # fmt: skip
                found = best_value(page, hop)
                if found is not None or view.next_part is None or part >= 3:
                    break
                part = view.next_part
            if page is None:
                return False
            found = best_value(page, hop)
            if found is None:
                return False
            value, pid = found
            self._guess = (value, [passage_ref(pid)])
            if i < len(hops) - 1:
                entity = value
        return True
