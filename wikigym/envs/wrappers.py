"""Context wrappers for ``WikiSearch-v1``: the whole conversation as the observation, managed or not.

The env's observation is one step's tool output; an agent that is not a chat model needs the
conversation so far. Both wrappers return it as one text and pass ``reward``, ``terminated``,
``truncated`` and ``info`` through unchanged.

* :class:`TranscriptObservation` shows everything verbatim (the baseline "without management":
  it grows with every turn).
* :class:`ManagedContext` keeps the question, the agent's actions and the passages it cited,
  replaces older tool outputs by deterministic extracts (or drops them) and fits a budget.

The transcript layout, shared by both::

    <first observation: instructions, tools, "Question: ...">

    [Turn 1] action:
    <the agent's text>
    [Turn 1] result:
    <the tool output>
    ...
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, SupportsFloat

import gymnasium as gym

from wikigym.corpora.index import ENGLISH_STOPWORDS, Hit, query_terms
from wikigym.corpora.passages import split_sentences
from wikigym.envs.actions import parse_action
from wikigym.envs.results import StepOutput
from wikigym.envs.spaces import UnicodeText
from wikigym.tasks.refs import page_ref, passage_ref
from wikigym.tools.find import FindOutput
from wikigym.tools.open import PageOutput
from wikigym.tools.search import SearchOutput

#: Size bound for transcripts of envs that do not tell their own bounds.
FALLBACK_MAX_CHARS = 1 << 30
#: A turn of the transcript, both wrappers.
ACTION_HEADER = "[Turn {n}] action:"
RESULT_HEADER = "[Turn {n}] result:"
EXTRACT_HEADER = "[Turn {n}] result (extract):"
CUT_MARKER = "\n... [cut to fit the context budget]"
ACTION_GAP = " [...] "
#: Default cap of :class:`TranscriptObservation` (characters), and its cut marker.
DEFAULT_TRANSCRIPT_CHARS = 262_144
TRANSCRIPT_CUT = "\n... [transcript cut at {n} characters]"
STOPWORDS: frozenset[str] = frozenset(ENGLISH_STOPWORDS)  # the one list (the index's)

_REF = re.compile(r"(?<![A-Za-z0-9_])([pPdD])(\d{1,18})(?![A-Za-z0-9_])")
_WORD = re.compile(r"\w+")
_CACHE_SIZE = 8192  # passages whose sentences are remembered (extracts recur every step)


# ---- reading tool outputs ---------------------------------------------------------------
@dataclass(frozen=True)
class Segment:
    """One tool output of a step, as the extracts need it (read from the env's structured
    outputs, never from the text).

    Attributes:
        kind: ``search``, ``open``, ``find`` or ``other`` (errors, python, notices).
        text: The output as the agent read it.
        head: Its first line.
        query: The search query (``search`` only).
        title: The page title (``open``/``find``).
        doc: The page's doc id such as ``d3`` (``open``/``find``), else "".
        hits: Search hits in rank order.
        blocks: ``open``/``find`` body in order: ``(passage id, text)``; a section heading
            of ``open`` is ``("", "## ...")``.
    """

    kind: str
    text: str
    head: str
    query: str = ""
    title: str = ""
    doc: str = ""
    hits: tuple[Hit, ...] = ()
    blocks: tuple[tuple[str, str], ...] = ()


def segment_of(output: StepOutput) -> Segment:
    """The :class:`Segment` of one structured output."""
    text = output.render()
    head = text.split("\n", 1)[0]
    if isinstance(output, SearchOutput):
        return Segment("search", text, head, query=output.query, hits=output.hits)
    if isinstance(output, PageOutput):
        blocks: list[tuple[str, str]] = []
        for block in output.blocks:
            if block.heading:
                blocks.append(("", f"## {' > '.join(block.heading)}"))
            blocks.append((block.ref, block.text.strip()))
        return Segment("open", text, head, title=output.title, doc=output.doc, blocks=tuple(blocks))
    if isinstance(output, FindOutput):
        found = tuple((passage_ref(m.passage_id), m.snippet.strip()) for m in output.matches)
        return Segment("find", text, head, title=output.title, doc=output.doc, blocks=found)
    return Segment("other", text, head)


def segments_of(env: gym.Env[Any, Any], observation: str) -> tuple[Segment, ...]:
    """The segments of the env's last step: its structured outputs (``last_outputs``), or
    the whole observation as one opaque segment for envs that have none."""
    outputs = getattr(env.unwrapped, "last_outputs", None)
    if outputs is None:
        return (Segment("other", observation, observation.split("\n", 1)[0]),)
    return tuple(segment_of(out) for out in outputs)


def mentioned_refs(text: str) -> tuple[str, ...]:
    """Citation ids (``p12``, ``d3``, lower-case) named in a text, first mention order."""
    return tuple(dict.fromkeys(f"{k.lower()}{int(n)}" for k, n in _REF.findall(text)))


# ---- extracts ----------------------------------------------------------------------------
def clip(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters, ending in "…" when cut."""
    if len(text) <= limit:
        return text
    return text[: max(0, limit - 1)].rstrip() + "…"


def query_terms_of(query: str) -> tuple[str, ...]:
    """Distinct terms of a query (the index's reading of it), stop words left out unless
    nothing else is left."""
    words = list(dict.fromkeys(query_terms(query)))
    content = [w for w in words if w not in STOPWORDS]
    return tuple(content or words)


@functools.lru_cache(maxsize=_CACHE_SIZE)
def first_sentence(text: str) -> str:
    """The first sentence of ``text`` ("" for blank text)."""
    found = split_sentences(text)
    return found[0] if found else ""


@functools.lru_cache(maxsize=_CACHE_SIZE)
def best_sentence(text: str, terms: tuple[str, ...]) -> str:
    """The sentence of ``text`` sharing most distinct ``terms`` (ties: the earliest)."""
    best, best_score = "", -1
    wanted = frozenset(terms)
    for sentence in split_sentences(text):
        score = len(wanted.intersection(_WORD.findall(sentence.casefold())))
        if score > best_score:
            best, best_score = sentence, score
    return best


def search_extract(seg: Segment, sentence_chars: int) -> str:
    """Head line, then per hit ``[pN] Title (dN)`` and its best sentence (indented)."""
    terms = query_terms_of(seg.query)
    lines = [seg.head]
    for hit in seg.hits:
        lines.append(f"[{passage_ref(hit.passage_id)}] {hit.title} ({page_ref(hit.doc_id)})")
        sentence = best_sentence(hit.text, terms)
        if sentence:
            lines.append("   " + clip(sentence, sentence_chars))
    return "\n".join(lines)


def dead_end_stub(seg: Segment) -> str:
    """The one line that replaces a search none of whose hits was used later."""
    return f"search({seg.query!r}): {len(seg.hits)} results (not used)"


def page_extract(seg: Segment, cited: frozenset[str], sentence_chars: int) -> str:
    """Head line; cited passages whole, the others by their first sentence."""
    lines = [seg.head]
    for ref, text in seg.blocks:
        if not ref:
            lines.append(clip(text, sentence_chars))
        elif ref in cited:
            lines.append(f"[{ref}] {text}")
        else:
            first = first_sentence(text)
            lines.append(f"[{ref}] {clip(first, sentence_chars)}" if first else f"[{ref}]")
    return "\n".join(lines)


def clip_action(text: str, limit: int) -> str:
    """An action cut to ``limit`` characters: two thirds head, one third tail, " [...] " between."""
    if len(text) <= limit:
        return text
    room = max(0, limit - len(ACTION_GAP))
    head = (room * 2) // 3
    tail = room - head
    return text[:head] + ACTION_GAP + (text[len(text) - tail :] if tail else "")


def compact_action(text: str, limit: int) -> str:
    """An action as its parsed calls, ``name({json args})`` or ``(error code)``, cut to ``limit``."""
    if len(text) <= limit:
        return text
    parsed = parse_action(text, max_calls=8)
    parts = [f"{c.name}({c.args.model_dump_json(exclude_defaults=True)})" for c in parsed.calls]
    parts += [f"({e.code})" for e in parsed.errors]
    return clip("; ".join(parts), limit)


# ---- the turns ---------------------------------------------------------------------------
@dataclass
class _Turn:
    action: str
    result: str
    segments: tuple[Segment, ...]
    mentions: tuple[str, ...]
    compact: str | None = None  # computed on first need (parsing a long action costs)


def _new_turn(action: str, result: str, segments: tuple[Segment, ...]) -> _Turn:
    return _Turn(action=action, result=result, segments=segments, mentions=mentioned_refs(action))


def _as_text(action: Any) -> str:
    if isinstance(action, bytes | bytearray):
        return bytes(action).decode("utf-8", errors="replace")
    return action if isinstance(action, str) else str(action)


def _transcript_bound(env: gym.Env[Any, Any]) -> int:
    """Largest transcript the env can produce (for the observation space)."""
    obs_space = env.observation_space
    act_space = env.action_space
    steps = getattr(env.unwrapped, "max_steps", None)
    if not (
        isinstance(obs_space, gym.spaces.Text)
        and isinstance(act_space, gym.spaces.Text)
        and isinstance(steps, int)
    ):
        return FALLBACK_MAX_CHARS
    per_turn = obs_space.max_length + act_space.max_length + 64
    return obs_space.max_length + steps * per_turn


class _TurnRecorder(gym.Wrapper[str, str, str, str]):
    """Shared bookkeeping: the first observation and every (action, result) turn."""

    def __init__(self, env: gym.Env[str, str]) -> None:
        super().__init__(env)
        self._first = ""
        self._turns: list[_Turn] = []

    @property
    def turns(self) -> tuple[tuple[str, str], ...]:
        """(action, tool output) of every step of the current episode."""
        return tuple((t.action, t.result) for t in self._turns)

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        obs, info = self.env.reset(seed=seed, options=options)
        self._first = obs
        self._turns = []
        return self._observe(), info

    def step(self, action: str) -> tuple[str, SupportsFloat, bool, bool, dict[str, Any]]:
        obs, reward, terminated, truncated, info = self.env.step(action)
        self._turns.append(_new_turn(_as_text(action), obs, segments_of(self.env, obs)))
        return self._observe(), reward, terminated, truncated, info

    def _observe(self) -> str:
        raise NotImplementedError


def _turn_text(n: int, action: str | None, result: str | None, header: str = RESULT_HEADER) -> str:
    parts = []
    if action is not None:
        parts.append(f"{ACTION_HEADER.format(n=n)}\n{action}")
    if result is not None:
        parts.append(f"{header.format(n=n)}\n{result}")
    return "\n".join(parts)


class TranscriptObservation(_TurnRecorder):
    """The observation is the whole conversation so far, verbatim (no context management).

    First observation, then per step ``[Turn n] action:`` with the action text and
    ``[Turn n] result:`` with the env's observation, blocks separated by a blank line.
    Reward, termination and ``info`` are the env's.

    It is capped at ``max_chars``: when the conversation grows past it, the oldest turns are
    left out (a line ``[Transcript: N older turns left out ...]`` after the first observation
    says so), and if the newest turn alone is still too long the text is cut at the cap with a
    marker. The cap keeps huge actions (up to 2 MB each) from growing the observation
    without bound.

    Args:
        env: A text env.
        max_chars: Most characters of an observation (default 262,144, about 64k tokens).

    Raises:
        ValueError: ``max_chars`` under 1,000.
    """

    def __init__(self, env: gym.Env[str, str], max_chars: int = DEFAULT_TRANSCRIPT_CHARS) -> None:
        super().__init__(env)
        if max_chars < 1000:
            raise ValueError(f"max_chars must be >= 1000, got {max_chars}")
        self.max_chars = max_chars
        bound = min(_transcript_bound(env), max_chars)
        self.observation_space = UnicodeText(bound)

    def _observe(self) -> str:
        turns = [_turn_text(i, t.action, t.result) for i, t in enumerate(self._turns, 1)]
        text = "\n\n".join([self._first, *turns])
        if len(text) <= self.max_chars:
            return text
        # Leave out the oldest turns (at least one turn stays), newest kept.
        size = len(self._first)
        kept: list[str] = []
        for block in reversed(turns):
            if kept and size + len(block) + 2 + 160 > self.max_chars:
                break
            kept.append(block)
            size += len(block) + 2
        kept.reverse()
        left_out = len(turns) - len(kept)
        note = (
            f"[Transcript: {left_out} older turns left out to stay within "
            f"{self.max_chars} characters]"
        )
        text = "\n\n".join([self._first, note, *kept] if left_out else [self._first, *kept])
        if len(text) <= self.max_chars:
            return text
        marker = TRANSCRIPT_CUT.format(n=self.max_chars)
        return text[: self.max_chars - len(marker)] + marker


# ---- managed context ---------------------------------------------------------------------
@dataclass(frozen=True)
class _Fact:
    ref: str
    title: str
    text: str


@dataclass
class _Plan:
    """Which reductions apply to one rendering (see ManagedContext's budget rules)."""

    extracted: set[int] = field(default_factory=set)
    dropped_results: set[int] = field(default_factory=set)
    compact_actions: set[int] = field(default_factory=set)
    clipped_facts: set[int] = field(default_factory=set)
    recent_cap: int | None = None
    dropped_turns: set[int] = field(default_factory=set)
    dropped_facts: set[int] = field(default_factory=set)
    question_only: bool = False


def _adding(attr: str, index: int) -> Callable[[_Plan], None]:
    """A plan step: add ``index`` to the set ``attr`` of the plan."""

    def apply(plan: _Plan) -> None:
        getattr(plan, attr).add(index)

    return apply


class ManagedContext(_TurnRecorder):
    """The observation is the conversation, managed to fit a budget, deterministically.

    Layout: the first observation (instructions, tools, question), then a block
    ``[Cited passages]`` (when any), then the turns as in :class:`TranscriptObservation`,
    except that results of older turns become extracts, stubs, or are left out (a line
    ``[Context: results of N older turns left out]`` after the first observation counts them).

    Rules, applied to every observation from the recorded turns (nothing depends on time,
    dict/set order or memory; the same actions give the same observations):

    1. Kept always: the first observation verbatim, and every action, cut to
       ``max_action_chars`` (two thirds head, one third tail, joined by " [...] ").
    2. Cited passages: each passage id (``pN``) named in any action of the episode whose text a
       tool output showed, in order of first mention, as ``[pN] Title: text`` (the longest
       text shown for it, ties: the earliest; cut to ``max_fact_chars``).
    3. While the whole conversation fits the budget it is shown verbatim: nothing is
       compacted under budget. The last ``keep_last`` results always stay verbatim; an older
       result, when the budget needs it (rule 4), is replaced by its extract, made per tool
       output (read from the env's structured outputs, ``last_outputs``):

       * a search: a dead end if no hit of it was used later: no later action names the hit's
         passage or doc id and no later open/find output is on the hit's page. A dead end
         becomes ``search('q'): N results (not used)``; otherwise the head line, then per hit
         ``[pN] Title (dN)`` and the hit's sentence sharing the most distinct query words
         (case-folded ``\\w+`` words, stop words out; ties: the earliest), cut to
         ``sentence_chars``;
       * an open or find: the head line, then per passage its full text if a later action names
         its id, else its first sentence (cut to ``sentence_chars``); ``open``'s section lines
         are kept, its links line and part hint dropped;
       * anything else (errors, python, notices): its first line cut to ``sentence_chars``.

       Sentences are split after ``.``, ``!`` or ``?`` (and closing quotes) before white space,
       and at line breaks.
    4. Budget (``budget_chars`` characters and/or ``budget_tokens`` by ``count_tokens``): while
       the observation is over it, reduce in this order, each step oldest first and each only as
       far as needed: (a0) replace older results by their extracts (rule 3); (a) leave out the
       extracts of older turns; (b) shorten older actions to
       their parsed calls (``search({"query": ...})``), cut to ``compact_action_chars``;
       (c) cut the last ``keep_last`` results at the end (all to one common length, with a
       marker), down to ``min_result_chars``; (d) cut cited passages to ``sentence_chars``;
       (e) leave out whole older turns (their actions too), then cited passages; then cut the
       recent results below ``min_result_chars``; (f) keep only the ``Question:`` part of the
       first observation; (g) cut the observation to the budget. Steps (d) to (g) happen only
       when the question, the actions, the cited passages and ``min_result_chars`` of the
       latest result do not fit: budgets below the first observation's size reach (f); size
       them above it plus ~100 characters per turn for the actions.

    Args:
        env: A text env whose observations are :mod:`wikigym.tools` outputs.
        budget_chars: Most characters of an observation; None for no character budget.
        keep_last: How many of the latest results stay verbatim (>= 0).
        budget_tokens: Most tokens of an observation, counted by ``count_tokens``.
        count_tokens: Tokens of a text (for example a tokenizer's ``len(encode(text))``);
            required with ``budget_tokens``.
        max_action_chars: Longest kept action.
        compact_action_chars: Longest shortened action (rule 4b).
        max_fact_chars: Longest cited passage text.
        sentence_chars: Longest extract sentence.
        min_result_chars: What the latest results keep before cited passages are cut and
            whole old turns left out (rule 4d, 4e).

    Raises:
        ValueError: No budget, a budget under 200 characters / 50 tokens, ``budget_tokens``
            without ``count_tokens``, or a negative size.
    """

    def __init__(
        self,
        env: gym.Env[str, str],
        budget_chars: int | None = 16_000,
        keep_last: int = 1,
        *,
        budget_tokens: int | None = None,
        count_tokens: Callable[[str], int] | None = None,
        max_action_chars: int = 300,
        compact_action_chars: int = 80,
        max_fact_chars: int = 600,
        sentence_chars: int = 240,
        min_result_chars: int = 1000,
    ) -> None:
        super().__init__(env)
        if budget_chars is None and budget_tokens is None:
            raise ValueError("give budget_chars or budget_tokens (or both); got neither")
        if budget_chars is not None and budget_chars < 200:
            raise ValueError(f"budget_chars must be >= 200 (or None), got {budget_chars}")
        if budget_tokens is not None:
            if count_tokens is None:
                raise ValueError(
                    "budget_tokens needs count_tokens, a function text -> number of tokens "
                    "(for example lambda s: len(tokenizer.encode(s)))"
                )
            if budget_tokens < 50:
                raise ValueError(f"budget_tokens must be >= 50 (or None), got {budget_tokens}")
        if keep_last < 0:
            raise ValueError(f"keep_last must be >= 0, got {keep_last}")
        sizes = {
            "max_action_chars": max_action_chars,
            "compact_action_chars": compact_action_chars,
            "max_fact_chars": max_fact_chars,
            "sentence_chars": sentence_chars,
            "min_result_chars": min_result_chars,
        }
        for name, value in sizes.items():
            if value < 20:
                raise ValueError(f"{name} must be >= 20, got {value}")
        self.budget_chars = budget_chars
        self.budget_tokens = budget_tokens
        self.count_tokens = count_tokens
        self.keep_last = keep_last
        self.max_action_chars = max_action_chars
        self.compact_action_chars = compact_action_chars
        self.max_fact_chars = max_fact_chars
        self.sentence_chars = sentence_chars
        self.min_result_chars = min_result_chars
        self._shown: dict[str, _Fact] = {}  # passage id -> longest text shown, turn by turn
        self._shown_turns = 0
        bound = budget_chars if budget_chars is not None else _transcript_bound(env)
        self.observation_space = UnicodeText(bound)

    # ---- size ----------------------------------------------------------------------------
    def fits(self, text: str) -> bool:
        """Whether ``text`` is within the budget(s)."""
        if self.budget_chars is not None and len(text) > self.budget_chars:
            return False
        if self.budget_tokens is not None:
            assert self.count_tokens is not None
            return self.count_tokens(text) <= self.budget_tokens
        return True

    # ---- the parts -----------------------------------------------------------------------
    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        self._shown = {}
        self._shown_turns = 0
        return super().reset(seed=seed, options=options)

    def _facts(self) -> list[_Fact]:
        shown = self._shown
        for turn in self._turns[self._shown_turns :]:
            for seg in turn.segments:
                found = [(passage_ref(h.passage_id), h.title, h.text) for h in seg.hits]
                found += [(ref, seg.title, text) for ref, text in seg.blocks if ref]
                for ref, title, text in found:
                    if ref not in shown or len(text) > len(shown[ref].text):
                        shown[ref] = _Fact(ref, title, text)
        self._shown_turns = len(self._turns)
        order = dict.fromkeys(ref for t in self._turns for ref in t.mentions if ref[0] == "p")
        return [shown[ref] for ref in order if ref in shown]

    def _extracts(self) -> list[str | None]:
        """Extract per turn (None for the verbatim recent ones)."""
        n = len(self._turns)
        later_refs: list[frozenset[str]] = [frozenset()] * n
        later_docs: list[frozenset[str]] = [frozenset()] * n
        refs: set[str] = set()
        docs: set[str] = set()
        for i in range(n - 1, -1, -1):
            later_refs[i] = frozenset(refs)
            later_docs[i] = frozenset(docs)
            refs.update(self._turns[i].mentions)
            docs.update(s.doc for s in self._turns[i].segments if s.doc)
        out: list[str | None] = []
        for i, turn in enumerate(self._turns):
            if i >= n - self.keep_last:
                out.append(None)
                continue
            parts = []
            for seg in turn.segments:
                if seg.kind == "search":
                    used = any(
                        passage_ref(h.passage_id) in later_refs[i]
                        or page_ref(h.doc_id) in later_refs[i]
                        or page_ref(h.doc_id) in later_docs[i]
                        for h in seg.hits
                    )
                    parts.append(
                        search_extract(seg, self.sentence_chars) if used else dead_end_stub(seg)
                    )
                elif seg.kind in ("open", "find"):
                    parts.append(page_extract(seg, later_refs[i], self.sentence_chars))
                else:
                    parts.append(clip(seg.head, self.sentence_chars))
            out.append("\n".join(parts))
        return out

    def _compact(self, i: int) -> str:
        turn = self._turns[i]
        if turn.compact is None:
            turn.compact = compact_action(turn.action, self.compact_action_chars)
        return turn.compact

    def _render(self, plan: _Plan, extracts: list[str | None], facts: list[_Fact]) -> str:
        first = self._first
        if plan.question_only:
            at = first.rfind("Question:")
            first = first[at:] if at >= 0 else first[-self.sentence_chars :]
        blocks = [first]
        left_out = sum(
            1
            for i in range(len(self._turns))
            if i in plan.dropped_turns or (i in plan.dropped_results and extracts[i] is not None)
        )
        if left_out:
            blocks.append(f"[Context: results of {left_out} older turns left out]")
        lines = []
        for j, fact in enumerate(facts):
            if j in plan.dropped_facts:
                continue
            limit = self.sentence_chars if j in plan.clipped_facts else self.max_fact_chars
            lines.append(clip(f"[{fact.ref}] {fact.title}: {fact.text}", limit))
        if lines:
            blocks.append("[Cited passages]\n" + "\n".join(lines))
        for i, turn in enumerate(self._turns):
            if i in plan.dropped_turns:
                continue
            n = i + 1
            action = (
                self._compact(i)
                if i in plan.compact_actions
                else clip_action(turn.action, self.max_action_chars)
            )
            extract = extracts[i]
            if extract is None:
                result = turn.result
                if plan.recent_cap is not None and len(result) > plan.recent_cap:
                    result = result[: plan.recent_cap] + CUT_MARKER
                blocks.append(_turn_text(n, action, result))
            elif i in plan.dropped_results:
                blocks.append(_turn_text(n, action, None))
            elif i in plan.extracted:
                blocks.append(_turn_text(n, action, extract, EXTRACT_HEADER))
            else:
                blocks.append(_turn_text(n, action, turn.result))
        return "\n\n".join(blocks)

    def _first_fitting(
        self, base: _Plan, ops: Sequence[Callable[[_Plan], None]], render: Callable[[_Plan], str]
    ) -> tuple[int, str] | None:
        """Fewest leading ``ops`` after which the rendering fits (binary search), or None."""

        def plan_after(k: int) -> _Plan:
            plan = replace(
                base,
                extracted=set(base.extracted),
                dropped_results=set(base.dropped_results),
                compact_actions=set(base.compact_actions),
                clipped_facts=set(base.clipped_facts),
                dropped_turns=set(base.dropped_turns),
                dropped_facts=set(base.dropped_facts),
            )
            for op in ops[:k]:
                op(plan)
            return plan

        full = render(plan_after(len(ops)))
        if not self.fits(full):
            return None
        lo, hi, best = 0, len(ops), full
        while lo < hi:
            mid = (lo + hi) // 2
            text = render(plan_after(mid))
            if self.fits(text):
                hi, best = mid, text
            else:
                lo = mid + 1
        return lo, best

    def _largest_cap(
        self, plan: _Plan, render: Callable[[_Plan], str], lo: int, hi: int
    ) -> int | None:
        """Largest ``recent_cap`` in ``[lo, hi]`` whose rendering fits, or None (binary search)."""
        plan.recent_cap = lo
        if not self.fits(render(plan)):
            return None
        while lo < hi:
            mid = (lo + hi + 1) // 2
            plan.recent_cap = mid
            if self.fits(render(plan)):
                lo = mid
            else:
                hi = mid - 1
        return lo

    def _observe(self) -> str:
        extracts = self._extracts()
        facts = self._facts()

        def render(plan: _Plan) -> str:
            return self._render(plan, extracts, facts)

        n = len(self._turns)
        older = [i for i in range(n) if extracts[i] is not None]
        ops: list[Callable[[_Plan], None]] = []
        ops += [_adding("extracted", i) for i in older]
        ops += [_adding("dropped_results", i) for i in older]
        ops += [_adding("compact_actions", i) for i in older]
        found = self._first_fitting(_Plan(), ops, render)
        if found is not None:
            return found[1]
        plan = _Plan()
        for op in ops:
            op(plan)
        # (c) cut the recent results, to no less than the floor, to the longest that fits.
        longest = max(
            (len(self._turns[i].result) for i in range(n) if extracts[i] is None), default=0
        )
        floor = min(self.min_result_chars, longest)
        cap = self._largest_cap(plan, render, floor, longest)
        if cap is not None:
            plan.recent_cap = cap
            return render(plan)
        # (d), (e) with the recent results at the floor: cut cited passages, leave out whole
        # older turns, then cited passages; then cut the recent results below the floor.
        plan.recent_cap = floor
        ops2: list[Callable[[_Plan], None]] = []
        ops2 += [_adding("clipped_facts", j) for j in range(len(facts))]
        ops2 += [_adding("dropped_turns", i) for i in older]
        ops2 += [_adding("dropped_facts", j) for j in range(len(facts))]
        found = self._first_fitting(plan, ops2, render)
        if found is not None:
            return found[1]
        for op in ops2:
            op(plan)
        cap = self._largest_cap(plan, render, 0, floor)
        if cap is not None:
            plan.recent_cap = cap
            return render(plan)
        plan.recent_cap = 0
        # (f) the question alone stands for the first observation; (g) a plain cut.
        plan.question_only = True
        text = render(plan)
        if self.fits(text):
            return text
        lo, hi = 0, len(text)
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.fits(text[:mid]):
                lo = mid
            else:
                hi = mid - 1
        return text[:lo]
