"""Import question sets written by others as TaskSets: HotpotQA, NQ-open, generic JSONL.

HotpotQA comes in two layouts (both read from JSONL or a JSON array, optionally compressed):

- Hugging Face: ``id``, ``supporting_facts: {title: [...], sent_id: [...]}``,
  ``context: {title: [...], sentences: [[...], ...]}``;
- original: ``_id``, ``supporting_facts: [[title, sent_id], ...]``,
  ``context: [[title, [sentences]], ...]``.

Given the snapshot built from the same file (``wikigym corpus build FILE --format hotpotqa``,
the *closed world*: one article per context paragraph), each supporting fact is resolved to
its article and to the passages that hold the supporting sentence, which gives the rubric
(one entry per supporting fact) and an oracle trajectory that opens those passages and cites
exactly them. A task whose evidence does not resolve (a supporting page missing from the
snapshot, a sentence not found, or no snapshot at all) is an error, unless the caller allows
it (``allow_unresolved``, ``--allow-unresolved``): then the task carries
``evidence.unresolved`` and no oracle, since answering the gold would show nothing.

Everything is read and emitted in file order, so importing a file twice gives the same
``taskset_id``.
"""

from __future__ import annotations

import hashlib
import reprlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from wikigym.corpora.readers.base import iter_json_array, iter_json_lines, open_input
from wikigym.corpora.readers.hotpotqa import context_paragraphs
from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SourceError, TaskSetError
from wikigym.tasks.layout import DEFAULT_PAGE_CHARS, page_blocks, paginate
from wikigym.tasks.limits import MAX_CITATIONS, MAX_PART, MAX_TITLE_CHARS
from wikigym.tasks.refs import page_ref, parse_ref, passage_ref
from wikigym.tasks.taskset import (
    Evidence,
    OracleCall,
    RubricEntry,
    Task,
    TaskSet,
    check_task_id,
)

GENERATOR = "wikigym.import/1"
YES_NO = ("yes", "no")


@dataclass
class ImportReport:
    """What an import could not resolve (HotpotQA).

    Attributes:
        tasks: Tasks imported.
        supporting_facts: Supporting facts seen.
        unresolved_titles: ``(task_id, title)`` of supporting titles with no page in the
            snapshot.
        unlocated_facts: ``(task_id, title, sent_id, reason)`` of supporting facts whose
            sentence was not found (not in the question's context, or not in the page), or
            lies where ``open`` cannot show it.
        unresolved_tasks: Task ids whose evidence does not fully resolve (no snapshot given,
            or a problem above): they carry ``evidence.unresolved`` and no oracle.
    """

    tasks: int = 0
    supporting_facts: int = 0
    unresolved_titles: list[tuple[str, str]] = field(default_factory=list)
    unlocated_facts: list[tuple[str, str, int, str]] = field(default_factory=list)
    unresolved_tasks: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """One line: counts of tasks, facts and problems."""
        return (
            f"{self.tasks} tasks, {self.supporting_facts} supporting facts, "
            f"{len(self.unresolved_titles)} unresolved titles, "
            f"{len(self.unlocated_facts)} unlocated sentences, "
            f"{len(self.unresolved_tasks)} tasks without reachable evidence (no oracle)"
        )


# ---- reading rows ------------------------------------------------------------------------
def _iter_rows(path: Path) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(where, row)`` for each object of a JSONL file or a JSON array file.

    Raises:
        TaskSetError: Missing file, invalid JSON, or a row that is not an object.
    """
    if not path.is_file():
        raise TaskSetError(f"question file {path} does not exist")
    try:
        with open_input(path) as inp:
            head = inp.peek(4096).lstrip(b"\xef\xbb\xbf \t\r\n")[:1]
            rows: Iterator[tuple[str, object]]
            if head == b"[":
                rows = (
                    (f"item {n} in {path.name}", item)
                    for n, item in enumerate(iter_json_array(inp, None), 1)
                )
            else:
                rows = iter_json_lines(inp, None)
            for where, row in rows:
                where = where.strip("<>")
                if isinstance(row, ValueError):
                    raise TaskSetError(f"{where}: invalid JSON ({row}); fix or remove the line")
                if not isinstance(row, dict):
                    raise TaskSetError(
                        f"{where}: expected a JSON object per question, got {type(row).__name__}"
                    )
                yield where, row
    except SourceError as exc:
        raise TaskSetError(str(exc)) from exc


def _clip(value: object) -> str:
    """A short repr of any JSON value (bounded in depth: no recursion on nested input)."""
    short = reprlib.Repr()  # keyword arguments only from Python 3.12
    short.maxlevel, short.maxstring, short.maxother, short.maxlist, short.maxdict = 3, 60, 60, 4, 4
    return short.repr(value)[:120]


def _scalar(value: object) -> str:
    """A string or number as stripped text; ``""`` for anything else."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = str(value)
    return value.strip() if isinstance(value, str) else ""


def _text(row: dict[str, Any], key: str, where: str, *, required: bool = True) -> str | None:
    """``row[key]`` as stripped text; None when absent and not required."""
    value = row.get(key)
    if value is None and not required:
        return None
    text = _scalar(value)
    if not text:
        got = "nothing" if value is None else _clip(value)
        raise TaskSetError(f"{where}: field {key!r} must be a non-empty string, got {got}")
    return text


def _answers(row: dict[str, Any], key: str, where: str) -> tuple[str, list[str]]:
    """The answer and aliases of ``row[key]``: a string, or a list (first = answer)."""
    value = row.get(key)
    if isinstance(value, list):
        items = [_scalar(v) for v in value]
        if not items or not all(items):
            raise TaskSetError(
                f"{where}: field {key!r} must be a non-empty string or a list of non-empty "
                f"strings, got {_clip(value)}"
            )
        answer = items[0]
        return answer, [a for a in dict.fromkeys(items[1:]) if a != answer]
    text = _text(row, key, where)
    assert text is not None
    return text, []


def _task_id(text: str | None, where: str) -> str | None:
    """``text`` if it is a valid task id (or None), else a TaskSetError naming the row."""
    try:
        return None if text is None else check_task_id(text)
    except ValueError as exc:
        raise TaskSetError(f"{where}: field 'id': {exc}") from None


def _task(where: str, **fields: Any) -> Task:
    """A Task of the row at ``where``; a field the model refuses is a TaskSetError."""
    try:
        return Task(**fields)
    except ValidationError as exc:
        first = exc.errors()[0]
        field_name = ".".join(str(p) for p in first["loc"])
        raise TaskSetError(f"{where}: field {field_name!r}: {first['msg']}") from None


def _hash_id(prefix: str, question: str, used: dict[str, int]) -> str:
    """``prefix-<16 hex of sha256(question)>``; repeated questions get ``-2``, ``-3``, ..."""
    base = f"{prefix}-{hashlib.sha256(question.encode()).hexdigest()[:16]}"
    used[base] = used.get(base, 0) + 1
    return base if used[base] == 1 else f"{base}-{used[base]}"


def _taskset(tasks: list[Task], name: str, path: Path) -> TaskSet:
    if not tasks:
        raise TaskSetError(f"{path} holds no question")
    return TaskSet(tasks, name=name)


# ---- NQ-open and generic JSONL -----------------------------------------------------------
def import_nq_open(path: str | Path) -> TaskSet:
    """Read NQ-open JSONL (``{"question": ..., "answer": [aliases...]}``) as a TaskSet.

    The first answer is the answer, the rest are aliases; ``task_id`` is ``nq-`` and 16 hex
    digits of the sha256 of the question (a repeated question gets ``-2``, ``-3``, ...).

    Raises:
        TaskSetError: Missing file, bad JSON, or a row without question or answer.
    """
    path = Path(path)
    tasks: list[Task] = []
    used: dict[str, int] = {}
    for where, row in _iter_rows(path):
        question = _text(row, "question", where)
        assert question is not None
        answer, aliases = _answers(row, "answer", where)
        tasks.append(
            _task(
                where,
                task_id=_hash_id("nq", question, used),
                question=question,
                answer=answer,
                aliases=aliases,
                generator=GENERATOR,
                source="nq-open",
            )
        )
    return _taskset(tasks, f"nq-open-{path.stem}", path)


def import_jsonl(path: str | Path) -> TaskSet:
    """Read generic question JSONL as a TaskSet.

    Each line is an object with ``question`` and ``answer`` (a string, or a list whose first
    item is the answer and the rest aliases), and optionally ``id`` or ``task_id``,
    ``aliases`` (list of strings), ``level`` and ``answer_type``. Other keys are ignored.
    Without an id, the task id is ``q-`` and 16 hex digits of the sha256 of the question.

    Raises:
        TaskSetError: Missing file, bad JSON, a missing or mistyped field (the line and the
            field are named), or a repeated task id.
    """
    path = Path(path)
    tasks: list[Task] = []
    used: dict[str, int] = {}
    for where, row in _iter_rows(path):
        question = _text(row, "question", where)
        assert question is not None
        answer, aliases = _answers(row, "answer", where)
        extra = row.get("aliases", [])
        if not isinstance(extra, list) or not all(isinstance(a, str) for a in extra):
            raise TaskSetError(f"{where}: field 'aliases' must be a list of strings, got {extra!r}")
        aliases = list(dict.fromkeys(a.strip() for a in [*aliases, *extra] if a.strip()))
        key = "task_id" if "task_id" in row else "id"
        task_id = _task_id(_text(row, key, where, required=False), where)
        tasks.append(
            _task(
                where,
                task_id=task_id or _hash_id("q", question, used),
                question=question,
                answer=answer,
                aliases=[a for a in aliases if a != answer],
                answer_type=_text(row, "answer_type", where, required=False),
                level=_text(row, "level", where, required=False),
                generator=GENERATOR,
                source="jsonl",
            )
        )
    return _taskset(tasks, f"jsonl-{path.stem}", path)


# ---- HotpotQA ----------------------------------------------------------------------------
def _supporting_facts(row: dict[str, Any], where: str) -> list[tuple[str, int]]:
    """``(title, sent_id)`` pairs in either layout; ``[]`` when the row has none."""
    facts = row.get("supporting_facts")
    if facts is None:
        return []
    pairs: list[tuple[object, object]] = []
    if isinstance(facts, dict) and isinstance(facts.get("title"), list):
        ids = facts.get("sent_id")
        if isinstance(ids, list) and len(ids) == len(facts["title"]):
            pairs = list(zip(facts["title"], ids, strict=True))
        else:
            pairs = [(None, None)]
    elif isinstance(facts, list):
        pairs = [
            (f[0], f[1]) if isinstance(f, list) and len(f) == 2 else (None, None) for f in facts
        ]
    else:
        pairs = [(None, None)]
    out: list[tuple[str, int]] = []
    for title, sent_id in pairs:
        if not isinstance(title, str) or not title.strip() or not isinstance(sent_id, int):
            raise TaskSetError(
                f"{where}: 'supporting_facts' must be {{title: [...], sent_id: [...]}} or "
                f"[[title, sent_id], ...], got {_clip(facts)}"
            )
        out.append((title.strip(), sent_id))
    return out


@dataclass
class _Located:
    """A supporting title resolved in the snapshot."""

    doc_id: int | None = None
    title: str | None = None
    passage_ids: list[int] = field(default_factory=list)


@dataclass(frozen=True)
class _PageData:
    title: str
    text: str
    passages: list[tuple[int, int, int, int]]  # passage_id, char_start, char_end, block bound


class _ClosedWorld:
    """Supporting facts resolved in a snapshot: pages loaded in bulk, oracles built.

    Args:
        snapshot: The snapshot.
        titles: Every supporting title of the file (resolved and loaded up front, because
            one DuckDB query per page costs about as much as a query over all of them).
    """

    def __init__(self, snapshot: Snapshot, titles: list[str]) -> None:
        self.snapshot = snapshot
        self.page_chars = DEFAULT_PAGE_CHARS  # what ``open`` shows per part by default
        wanted = sorted(set(titles))
        exact = {
            r["title"]: r["doc_id"]
            for r in snapshot.sql(
                "SELECT title, doc_id FROM articles WHERE title IN (SELECT unnest(?::VARCHAR[]))",
                [wanted],
            ).to_pylist()
        }
        self.doc_of: dict[str, int | None] = {}
        for title in wanted:
            if title in exact:
                self.doc_of[title] = exact[title]
            elif _reads_as_doc_id(title):
                self.doc_of[title] = None  # resolve() would read "1998" as doc id 1998
            else:
                self.doc_of[title] = snapshot.resolve(title)  # case, underscores, redirects
        docs = sorted({d for d in self.doc_of.values() if d is not None})
        arts = snapshot.sql(
            "SELECT doc_id, title, text FROM articles WHERE doc_id IN "
            "(SELECT unnest(?::BIGINT[])) ORDER BY doc_id",
            [docs],
        ).to_pylist()
        rows = snapshot.sql(
            "SELECT passage_id, doc_id, section, char_start, char_end, length(text) AS n "
            "FROM passages WHERE doc_id IN (SELECT unnest(?::BIGINT[])) ORDER BY passage_id",
            [docs],
        ).to_pylist()
        spans: dict[int, list[tuple[int, int, int, int]]] = {d: [] for d in docs}
        for r in rows:
            # An upper bound of the passage's block in ``open``: "## heading\n[p12] text\n".
            heading = len(" > ".join(r["section"])) + 4 if r["section"] else 0
            bound = heading + len(passage_ref(r["passage_id"])) + 3 + r["n"] + 1
            spans[r["doc_id"]].append((r["passage_id"], r["char_start"], r["char_end"], bound))
        self.pages = {
            a["doc_id"]: _PageData(a["title"], a["text"], spans[a["doc_id"]]) for a in arts
        }
        self._parts: dict[int, tuple[str, dict[int, int]]] = {}

    def locate(
        self, doc_id: int, sentences: list[str] | None, sent_id: int
    ) -> tuple[list[int], str | None]:
        """Passages of ``doc_id`` that hold sentence ``sent_id`` of the paragraph.

        The sentence is placed by its offset in the joined paragraph when the article text
        is that paragraph (the closed world); otherwise by its first occurrence in the text.

        Returns:
            ``(passage_ids, None)``, or ``([], reason)`` when it cannot be placed.
        """
        if sentences is None:
            return [], "the title is not in the question's context"
        if not 0 <= sent_id < len(sentences):
            return [], f"sent_id {sent_id} is out of range ({len(sentences)} sentences)"
        sentence = sentences[sent_id].strip()
        if not sentence:
            return [], "the supporting sentence is empty"
        page = self.pages[doc_id]
        joined = "".join(sentences)
        raw = sentences[sent_id]
        lead = len(joined) - len(joined.lstrip())
        start = len("".join(sentences[:sent_id])) - lead + (len(raw) - len(raw.lstrip()))
        if page.text[start : start + len(sentence)] != sentence:
            start = page.text.find(sentence)
            if start < 0:
                return [], "the sentence does not occur in the page's text"
        end = start + len(sentence)
        return [pid for pid, s, e, _ in page.passages if s < end and e > start], None

    def open_calls(self, doc_id: int, wanted: list[int]) -> list[OracleCall]:
        """``open`` calls that show the ``wanted`` passages of a page (see :meth:`shown`)."""
        ref, part_of = self._page_parts(doc_id)
        parts = sorted({part_of[p] for p in wanted if p in part_of})
        return [
            OracleCall(name="open", arguments={"page": ref} if n == 1 else {"page": ref, "part": n})
            for n in parts
        ]

    def shown(self, doc_id: int, passage_id: int) -> bool:
        """Whether some part of the page that ``open`` accepts shows this passage."""
        return passage_id in self._page_parts(doc_id)[1]

    def _page_parts(self, doc_id: int) -> tuple[str, dict[int, int]]:
        """How the oracle names the page, and the ``open`` part of each of its passages.

        A page whose blocks fit one part (by an upper bound of their size) is all part 1;
        otherwise the parts are those of the ``open`` tool's layout, so the oracle cites only
        passages the agent has been shown.
        """
        if doc_id not in self._parts:
            page = self.pages[doc_id]
            ref = page.title
            if (
                _reads_as_doc_id(ref)
                or len(ref) > MAX_TITLE_CHARS
                or self.snapshot.resolve(ref) != doc_id
            ):
                ref = page_ref(doc_id)
            if sum(b for *_, b in page.passages) <= self.page_chars:
                part_of = {pid: 1 for pid, *_ in page.passages}
            else:
                full = self.snapshot.page(doc_id)
                if full is None:
                    raise TaskSetError(
                        f"page {page_ref(doc_id)} vanished from {self.snapshot.path}"
                    )
                parts = paginate(page_blocks(full, full.sections), self.page_chars)
                part_of = {}
                for n, part in enumerate(parts[:MAX_PART], 1):  # what ``open`` accepts
                    for block in part:
                        part_of.setdefault(block.passage_id, n)
            self._parts[doc_id] = (ref, part_of)
        return self._parts[doc_id]


def _reads_as_doc_id(title: str) -> bool:
    """Whether ``open``/``resolve`` would read this title as a doc id (``"12"``, ``"d12"``)."""
    text = title.strip()
    parsed = parse_ref(text)
    return text.isdigit() or (parsed is not None and parsed[0] == "d")


def _hotpot_task(
    row: dict[str, Any], where: str, world: _ClosedWorld | None, report: ImportReport
) -> Task:
    """One HotpotQA row as a Task (resolved in ``world`` when given); problems go to ``report``."""
    if "id" not in row and "_id" not in row:
        raise TaskSetError(f"{where}: no 'id' (or '_id') field; HotpotQA rows carry their id")
    task_id = _task_id(_text(row, "id" if "id" in row else "_id", where), where)
    question = _text(row, "question", where)
    answer = _text(row, "answer", where)
    assert task_id is not None and question is not None and answer is not None
    facts = _supporting_facts(row, where)
    paragraphs = context_paragraphs(row) if "context" in row else []
    if paragraphs is None:
        raise TaskSetError(
            f"{where}: 'context' must be {{title: [...], sentences: [[...], ...]}} or "
            "[[title, [sentences]], ...]"
        )
    context: dict[str, list[str]] = {}
    for para_title, para_sentences in paragraphs:
        context.setdefault(para_title.strip(), para_sentences)
    report.tasks += 1
    report.supporting_facts += len(facts)

    located: dict[str, _Located] = {}  # per supporting title, in order
    rubric: list[RubricEntry] = []
    unresolved: list[str] = []  # one "title (sentence N): why" per fact not placed
    for title, sent_id in facts:
        sentences = context.get(title)
        loc = located.get(title)
        fact = f"{title} (sentence {sent_id})"
        if loc is None:
            loc = located[title] = _Located()
            if world is not None:
                loc.doc_id = world.doc_of[title]
                if loc.doc_id is None:
                    report.unresolved_titles.append((task_id, title))
                else:
                    loc.title = world.pages[loc.doc_id].title
        pids: list[int] = []
        if world is None:
            unresolved.append(f"{fact}: no snapshot was given to resolve it in")
        elif loc.doc_id is None:
            unresolved.append(f"{fact}: no page with this title in the snapshot")
        else:
            pids, reason = world.locate(loc.doc_id, sentences, sent_id)
            if reason is None and not pids:
                reason = "no passage of the page holds the sentence"
            if reason is None and not all(world.shown(loc.doc_id, p) for p in pids):
                reason = "the sentence lies beyond the parts of the page that open shows"
            if reason is not None:
                report.unlocated_facts.append((task_id, title, sent_id, reason))
                unresolved.append(f"{fact}: {reason}")
            loc.passage_ids.extend(p for p in pids if p not in loc.passage_ids)
        if sentences is None or not 0 <= sent_id < len(sentences):
            continue  # no sentence text: nothing to put in the rubric
        rubric.append(
            RubricEntry(
                text=sentences[sent_id].strip(),
                passage_ids=pids,
                entities=[loc.title or title],
            )
        )
    if not facts:
        unresolved.append("the question has no supporting facts to show its answer")

    doc_ids = list(dict.fromkeys(loc.doc_id for loc in located.values() if loc.doc_id is not None))
    passage_ids = list(dict.fromkeys(p for loc in located.values() for p in loc.passage_ids))
    # The oracle shows that the evidence is reachable: it opens the parts of each supporting
    # page that hold the supporting sentences and answers citing exactly those passages. A
    # task with any fact not placed has none: answering the gold would prove nothing.
    oracle: list[OracleCall] = []
    if world is not None and not unresolved and len(passage_ids) <= MAX_CITATIONS:
        for loc in located.values():
            assert loc.doc_id is not None
            oracle.extend(world.open_calls(loc.doc_id, loc.passage_ids))
        citations = [passage_ref(p) for p in passage_ids]
        oracle.append(OracleCall(name="answer", arguments={"text": answer, "citations": citations}))
    elif world is not None and not unresolved:
        unresolved.append(f"the evidence has more than {MAX_CITATIONS} passages to cite")
    if unresolved:
        report.unresolved_tasks.append(task_id)
    difficulty: dict[str, float | int | str] = {"pages": len(located)}
    kind = row.get("type")
    if isinstance(kind, str) and kind:
        difficulty["type"] = kind
    return _task(
        where,
        task_id=task_id,
        question=question,
        answer=answer,
        answer_type="yes/no" if answer.casefold() in YES_NO else "span",
        level=_text(row, "level", where, required=False),
        evidence=Evidence(
            doc_ids=doc_ids,
            passage_ids=passage_ids,
            titles=[loc.title or title for title, loc in located.items()],
            unresolved=unresolved,
        ),
        rubric=rubric,
        oracle=oracle,
        difficulty=difficulty,
        snapshot_id=None if world is None else world.snapshot.snapshot_id,
        generator=GENERATOR,
        source="hotpotqa",
    )


def import_hotpotqa(
    path: str | Path, snapshot: Snapshot | None = None, *, allow_unresolved: bool = False
) -> TaskSet:
    """Read HotpotQA questions as a TaskSet; see :func:`import_hotpotqa_report`."""
    return import_hotpotqa_report(path, snapshot, allow_unresolved=allow_unresolved)[0]


def import_hotpotqa_report(
    path: str | Path, snapshot: Snapshot | None = None, *, allow_unresolved: bool = False
) -> tuple[TaskSet, ImportReport]:
    """Read HotpotQA questions (either layout, JSONL or JSON array) as a TaskSet.

    Each task: ``task_id`` = the HotpotQA id, question, answer, ``level`` (HotpotQA's
    easy/medium/hard), ``answer_type`` (``yes/no`` or ``span``), ``difficulty`` = ``{type:
    bridge|comparison, pages: distinct supporting titles}``, ``evidence.titles`` = the
    supporting titles in order, and a rubric entry per supporting fact (the sentence, with
    its title as entity).

    Args:
        path: The question file.
        snapshot: The snapshot built from the same file (the closed world). Titles resolve
            to doc ids and sentences to passage ids (evidence and rubric), ``snapshot_id`` is
            set, and each task whose every supporting fact is placed gets an oracle: open the
            parts of each supporting page that show the supporting passages, answer citing
            them. None: nothing resolves (only with ``allow_unresolved``).
        allow_unresolved: Import tasks whose evidence does not resolve in ``snapshot`` (or
            with no snapshot) instead of failing: they carry ``evidence.unresolved`` (one
            line per fact not placed) and no oracle.

    Returns:
        The TaskSet and a report of the supporting facts that could not be resolved.

    Raises:
        TaskSetError: Missing file, bad JSON, or a row without id, question or answer, or
            with malformed supporting facts or context (the row is named); tasks whose
            evidence does not resolve, without ``allow_unresolved`` (counted, with a remedy).
    """
    path = Path(path)
    world = None
    if snapshot is not None:  # a first pass collects the titles to load in bulk
        titles = [t for where, row in _iter_rows(path) for t, _ in _supporting_facts(row, where)]
        world = _ClosedWorld(snapshot, titles)
    report = ImportReport()
    tasks = [_hotpot_task(row, where, world, report) for where, row in _iter_rows(path)]
    taskset = _taskset(tasks, f"hotpotqa-{path.stem}", path)
    if report.unresolved_tasks and not allow_unresolved:
        raise TaskSetError(_unresolved_message(path, snapshot, report))
    return taskset, report


def _unresolved_message(path: Path, snapshot: Snapshot | None, report: ImportReport) -> str:
    """One line: how many tasks do not resolve, an example, and the two remedies."""
    remedy = (
        f"pass the snapshot built from this file (`wikigym corpus build {path} --format "
        "hotpotqa --out DIR`, then --corpus DIR), or --allow-unresolved (allow_unresolved="
        "True) to import them marked as unresolved, without oracles"
    )
    n, total = len(report.unresolved_tasks), report.tasks
    if snapshot is None:
        return (
            f"{path.name}: the evidence of {n} of {total} tasks cannot resolve without a "
            f"snapshot; {remedy}"
        )
    example = ""
    if report.unresolved_titles:
        tid, title = report.unresolved_titles[0]
        example = f", e.g. {tid}: no page {title[:80]!r}"
    elif report.unlocated_facts:
        tid, title, sid, why = report.unlocated_facts[0]
        example = f", e.g. {tid}: {title[:80]!r} sentence {sid}: {why}"
    return (
        f"{path.name}: {n} of {total} tasks have evidence that does not resolve in snapshot "
        f"{snapshot.path} ({len(report.unresolved_titles)} supporting titles with no page, "
        f"{len(report.unlocated_facts)} sentences not found{example}); {remedy}"
    )


__all__ = [
    "ImportReport",
    "import_hotpotqa",
    "import_hotpotqa_report",
    "import_jsonl",
    "import_nq_open",
]
