"""The reference agent: a planner given the query's structure, resolving every node through the
env's tools under a step budget.

It sees what a careful human would be told: the formal query of the task (its nodes,
relations, named constants and ranges: :func:`wikigym.eval.runner.query_view` strips the
answer, the evidence and the oracle), never the graph and never the answer. Each node is
resolved the way its type says a search agent finds it (:mod:`wikigym.synth.solving`): a
named entity is a page; a forward hop reads the relation off the page of each member
("the birthplace of X": open X, read "born in"); an inverse hop searches for pages that state
the relation with the object ("born in X": search, keep the hits whose passage says so); an
intersection gathers candidates from its cheapest member that a search can gather and tests
each against the others on the candidate's own page; ranges, type filters, negations and
"same" are tested, never gathered; superlatives, counts, sums and differences are computed
from what was read. Reading is :mod:`wikigym.eval.reader` (English cue phrases, values by
type).

What makes it fail is what makes search hard: a hop whose subjects a search does not surface,
an intermediate set too wide to test within the budget, a clue (a range, a partial name) that
can only be tested, never searched for. So its success per level (``synth calibrate --agent
reference``, ``benchmarks/bench_reference.py``) says how hard the levels are for search.

Deterministic: the same task, budget and snapshot give the same actions (every collection is
a list in the order it was read; no set is iterated).
"""

from __future__ import annotations

from collections.abc import Generator, Sequence
from typing import Any

from wikigym.envs.results import StepOutput
from wikigym.eval.agents import tool_call
from wikigym.eval.reader import (
    PageText,
    cue_words,
    is_kind,
    norm_name,
    read_values,
    same_literal,
    sentence_states,
    states,
)
from wikigym.synth.node import Node
from wikigym.synth.query import unwrap
from wikigym.synth.solving import SEARCH_BUDGET, Found, Lit, Plan, Planned
from wikigym.synth.values import date_surface, format_number
from wikigym.tasks.refs import passage_ref
from wikigym.tasks.taskset import Task
from wikigym.tools.open import PageOutput
from wikigym.tools.search import SearchOutput

DEFAULT_MAX_STEPS = SEARCH_BUDGET  # the reference agent's budget in benchmarks and calibration
SEARCH_K = 20  # hits per search (the tool's most)
ABSTAIN_TEXT = "The pages I read state nothing that satisfies every condition."
MAX_CITATIONS = 4
MAX_LINKS_FOLLOWED = 6  # linked pages read when a search surfaces no subject


class OutOfSteps(Exception):
    """The step budget is spent (one call is kept for the answer)."""


class ReferenceAgent:
    """See the module docstring.

    Args:
        max_steps: The env's step budget; the agent answers before it is spent.
        search_k: Hits asked of each search.
    """

    privileged = False
    sees_query = True
    name = "reference"
    _started: bool
    _plan: Generator[str, Any, str]

    def __init__(self, max_steps: int = DEFAULT_MAX_STEPS, search_k: int = SEARCH_K) -> None:
        self.max_steps = max_steps
        self.search_k = search_k
        self._reset_state(None)

    # ---- the Agent protocol ----------------------------------------------------------
    def reset(self, task_prompt: str, task: Task | None) -> None:
        root = unwrap(task.query) if task is not None and task.query else None
        self._reset_state(root)

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        try:
            if not self._started:
                self._started = True
                return next(self._plan)
            return self._plan.send(tuple(outputs))
        except StopIteration as stop:
            return str(stop.value)
        except OutOfSteps:
            return tool_call("answer", {"text": "unknown", "citations": self._citations()})

    def _reset_state(self, root: Node | None) -> None:
        self.root = root
        self.used = 0
        self._started = False
        self._pages: dict[str, PageText | None] = {}
        self._alias: dict[str, str] = {}  # a name asked for -> the title opened
        self._members: dict[Planned, list[Found] | None] = {}
        self._holds: dict[tuple[Planned, Found], bool] = {}
        self._ranks: dict[Planned, int | None] = {}
        self._support: list[int] = []  # passages that stated what was used, latest last
        self._plan: Generator[str, Any, str] = self._run()

    def _run(self) -> Generator[str, Any, str]:
        if self.root is None:
            return tool_call("answer", {"text": "unknown", "citations": []})
        answer = yield from self.root.solve(self)  # type: ignore[misc]
        if answer is None:
            return tool_call(
                "answer", {"text": ABSTAIN_TEXT, "citations": self._citations(), "abstain": True}
            )
        return tool_call("answer", {"text": answer, "citations": self._citations()})

    def _citations(self) -> list[str]:
        pids = list(dict.fromkeys(reversed(self._support)))[:MAX_CITATIONS]
        return [passage_ref(p) for p in pids]

    # ---- tool calls --------------------------------------------------------------------
    def _call(self, name: str, args: dict[str, Any]) -> Plan[tuple[StepOutput, ...]]:
        if self.used >= self.max_steps - 1:
            raise OutOfSteps
        self.used += 1
        outs = yield tool_call(name, args)
        return tuple(outs) if isinstance(outs, tuple | list) else ()

    def _page(self, name: str) -> Plan[PageText | None]:
        key = self._alias.get(name, name)
        if key in self._pages:
            return self._pages[key]
        outs = yield from self._call("open", {"page": name})
        page = next((o for o in outs if isinstance(o, PageOutput)), None)
        if page is None:
            self._pages[key] = None
            return None
        text = PageText(
            page.title, tuple((b.passage_id, b.text) for b in page.blocks), tuple(page.links)
        )
        self._pages[page.title] = text
        self._alias[name] = page.title
        return text

    def _search(self, query: str) -> Plan[list[tuple[str, int, str]]]:
        outs = yield from self._call("search", {"query": query, "k": self.search_k})
        for o in outs:
            if isinstance(o, SearchOutput):
                return [(h.title, h.passage_id, h.text) for h in o.hits]
        return []

    # ---- the Solver (wikigym.synth.solving) ---------------------------------------------
    def members(self, node: Planned) -> Plan[list[Found] | None]:
        if node not in self._members:
            self._members[node] = yield from node.find_members(self)
        return self._members[node]

    def holds(self, node: Planned, item: Found) -> Plan[bool]:
        key = (node, item)
        if key not in self._holds:
            self._holds[key] = yield from node.test(self, item)
        return self._holds[key]

    def rank(self, node: Planned) -> int | None:
        if node not in self._ranks:
            self._ranks[node] = node.search_rank(self)
        return self._ranks[node]

    def values(self, page: str, relation: str) -> Plan[list[Found]]:
        text = yield from self._page(page)
        if text is None:
            return []
        found = read_values(text, relation)
        self._support.extend(pid for _, pid in found[:1])
        return [x for x, _ in found]

    def states(self, page: str, relation: str, target: Found) -> Plan[bool]:
        text = yield from self._page(page)
        if text is None:
            return False
        pid = states(text, relation, target)
        if pid is not None:
            self._support.append(pid)
        return pid is not None

    def subjects(self, relation: str, target: Found) -> Plan[list[str]]:
        """A search for the object with the relation's words, then the pages the object's own
        page links to (the link graph: a city's page lists people born there), each opened
        and read."""
        name = target if isinstance(target, str) else target.text
        hits = yield from self._search(f"{name} {cue_words(relation)}")
        out: list[str] = []
        for title, pid, text in hits:
            if title not in out and sentence_states(title, text, relation, target):
                out.append(title)
                self._support.append(pid)
        if not isinstance(target, str):
            return out
        page = yield from self._page(target)
        links = [x for x in (page.links if page is not None else ()) if x not in out]
        for link in links[:MAX_LINKS_FOLLOWED]:
            if (yield from self.states(link, relation, target)):
                out.append(self._alias.get(link, link))
        return out

    def instances(self, kind: str) -> Plan[list[str]]:
        hits = yield from self._search(f"is a {kind}")
        out: list[str] = []
        for title, _, text in hits:
            if title not in out and is_kind(PageText(title, ((0, text),)), kind):
                out.append(title)
        return out

    def is_kind(self, page: str, kind: str) -> Plan[bool]:
        text = yield from self._page(page)
        return text is not None and is_kind(text, kind)

    def measure(self, page: str, relation: str) -> Plan[float | None]:
        got = [x.measure for x in (yield from self.values(page, relation)) if isinstance(x, Lit)]
        measured = [m for m in got if m is not None]
        return min(measured) if measured else None

    def entity(self, doc_id: int, title: str) -> Found:
        return title

    def literal(self, key: str, value_type: str) -> Found:
        if value_type == "date":
            year = key.lstrip("-").split("-", 1)[0]
            return Lit(date_surface(key), float(year) if year.isdigit() else None)
        if value_type == "number":
            try:
                value = float(key.replace(",", ""))
            except ValueError:
                return Lit(key)
            return Lit(format_number(value), value)  # "39,767", as pages write it
        return Lit(key)

    def same(self, a: Found, b: Found) -> bool:
        if isinstance(a, str) and isinstance(b, str):
            a, b = self._alias.get(a, a), self._alias.get(b, b)
            return a == b or norm_name(a) == norm_name(b)
        if isinstance(a, Lit) and isinstance(b, Lit):
            return same_literal(a, b)
        return False


__all__ = ["DEFAULT_MAX_STEPS", "OutOfSteps", "ReferenceAgent"]
