"""Oracle trajectories: tool calls that solve a task in ``WikiSearch-v1``.

The oracle may use titles it knows from the evidence (it is a proof of solvability and a
cold-start SFT source), but every call must succeed in the env and every cited passage must
have been shown by an earlier call. Shape: ``search`` for the first constant, then for each
evidence fact (leaves first) a ``find`` on the page that states it, with words of that
passage (relation keywords first, then the value, then the passage's opening words), then
``answer`` with the evidence passages as citations (the first ``MAX_CITATIONS``). A fact
stated in no passage (a category line, a Wikidata statement) gets no ``find``. ``find`` shows the first
:data:`FIND_MAX_HITS` passages of a page that contain the text (case-folded), as the env does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pydantic import ValidationError

from wikigym.corpora.snapshot import PagePassage
from wikigym.errors import SynthError
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.templates import relation_text
from wikigym.tasks.limits import MAX_CITATIONS
from wikigym.tasks.refs import passage_ref
from wikigym.tasks.taskset import OracleCall, Task
from wikigym.tools import AnswerOutput, ToolBox, ToolConfig, get_tool, run_tool

FIND_MAX_HITS = ToolConfig().find_max_hits


def _prefix(text: str, n: int = 40) -> str:
    cut = text[:n]
    if len(text) > n and " " in cut:
        cut = cut[: cut.rindex(" ")]
    return cut.strip()


def _find_shows(passages: Sequence[PagePassage], needle: str) -> list[int]:
    low = needle.casefold()
    return [p.passage_id for p in passages if low in p.text.casefold()][:FIND_MAX_HITS]


def build_oracle(
    graph: KnowledgeGraph,
    rows: Sequence[int],
    passages_of: Callable[[int], list[PagePassage]],
    first_query: str,
    answer: str,
    max_calls: int | None = None,
) -> list[OracleCall]:
    """The oracle calls for evidence fact ``rows`` (leaves first).

    Raises:
        SynthError: A fact's passage is not on its subject's page, or the calls (the answer
            included) would be more than ``max_calls``: then the pages of the rows left are
            not read (calls only grow, so the check is exact).
    """
    g = graph
    calls = [OracleCall(name="search", arguments={"query": first_query, "k": 5})]
    seen: set[int] = set()
    cache: dict[int, list[PagePassage]] = {}
    citations: list[int] = []
    for r in rows:
        if not g.stated(r):  # stated by a category line or Wikidata only: nothing to find
            continue
        pid, subj, rel = g.f_pid[r], g.f_subj[r], g.f_rel[r]
        citations.append(pid)
        if pid in seen:
            continue
        if subj not in cache:
            cache[subj] = passages_of(subj)
        passages = cache[subj]
        text = next((p.text for p in passages if p.passage_id == pid), None)
        if text is None:
            raise SynthError(f"passage p{pid} of fact {g.f_id[r]} is not on page d{subj}")
        surface = g.f_surface[r]
        words = [*relation_text(rel).keywords, surface, _prefix(text)]
        for needle in words:
            if not needle or needle.casefold() not in text.casefold():
                continue
            shown = _find_shows(passages, needle)
            if pid in shown:
                break
        else:  # pragma: no cover - the passage's own opening words always find it
            raise SynthError(f"no find text shows p{pid} on page d{subj}")
        calls.append(OracleCall(name="find", arguments={"page": g.titles[subj], "text": needle}))
        seen.update(shown)
        if max_calls is not None and len(calls) + 1 > max_calls:
            raise SynthError(f"the oracle needs more than {max_calls} calls")
    cites = [passage_ref(p) for p in dict.fromkeys(citations)][:MAX_CITATIONS]
    calls.append(OracleCall(name="answer", arguments={"text": answer, "citations": cites}))
    return calls


def run_oracle_calls(task: Task, box: ToolBox) -> tuple[AnswerOutput | None, list[str]]:
    """Run ``task``'s oracle through the env's tools, as an agent would.

    Returns:
        ``(the answer, [])``, or ``(None, problems)`` when the oracle does not end
        with an answer, a call is invalid or fails, or the answer cites a passage no call showed.
    """
    if not task.oracle or task.oracle[-1].name != "answer":
        return None, ["the oracle does not end with an answer call"]
    seen: set[str] = set()
    answer: AnswerOutput | None = None
    for i, call in enumerate(task.oracle, 1):
        try:
            args = get_tool(call.name).args.model_validate(call.arguments)
        except (KeyError, ValidationError) as exc:
            return None, [f"oracle call {i} ({call.name}) is invalid: {str(exc).splitlines()[0]}"]
        result = run_tool(box, call.name, args)
        if result.error is not None:
            return None, [f"oracle call {i} ({call.name}) fails: {result.error}"]
        seen.update(result.seen)
        if result.answer is not None:
            bad = [c for c in result.answer.citations if c not in seen]
            if bad:
                return None, [f"the oracle cites {', '.join(bad)} before any call showed them"]
            answer = result.answer
    return answer, []
