"""The tools' behaviour over a snapshot: what each call finds, as structured results.

Results (:mod:`wikigym.envs.results`) carry ids the agent can cite: passages as
``p<passage_id>``, pages as ``d<doc_id>``; the text the agent reads is their rendering
(:mod:`wikigym.envs.render`). Every id shown is recorded as *seen*, which the citation reward and the
hallucination metrics read. A model-facing failure is a :class:`ToolResult` with an
``error`` code, never an exception.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from wikigym.codes import ErrorCode, SandboxCode
from wikigym.corpora.snapshot import Page, Snapshot
from wikigym.envs.render import render
from wikigym.envs.results import (
    SHOWN_LINKS,
    AnswerOutput,
    FindMatch,
    FindOutput,
    PageOutput,
    PythonOutput,
    SearchOutput,
    ToolErrorOutput,
    ToolOutput,
)
from wikigym.envs.tool_specs import (
    AnswerArgs,
    FindArgs,
    OpenArgs,
    PythonArgs,
    SearchArgs,
)
from wikigym.sandbox.sandbox import PythonSandbox
from wikigym.tasks.layout import DEFAULT_PAGE_CHARS, page_blocks, paginate
from wikigym.tasks.limits import DEFAULT_K
from wikigym.tasks.refs import page_ref, parse_ref, passage_ref


@dataclass(frozen=True)
class ToolResult:
    """What one call produced.

    Attributes:
        output: The structured result (what wrappers, agents and importers read).
        error: A stable error code, or None.
        seen: Citation ids shown to the agent by this call (in display order).
        answer: The answer call's arguments, when the call was ``answer``.
    """

    output: ToolOutput
    error: ErrorCode | None = None
    seen: tuple[str, ...] = ()
    answer: AnswerArgs | None = None

    @property
    def text(self) -> str:
        """The observation text (the one rendering of :attr:`output`)."""
        return render(self.output)


@dataclass(frozen=True)
class ToolConfig:
    """Presentation limits of the tools.

    Attributes:
        page_chars: Characters of page text per ``open`` part (long pages are paginated
            on passage boundaries, deterministically).
        find_max_hits: Passages listed by ``find``.
        snippet_chars: Characters of a passage shown around a ``find`` match.
        python_output_chars: Characters of sandbox output shown.
        search_k: Results of a search that names no ``k`` (a Search-R1 ``<search>`` tag).
    """

    page_chars: int = DEFAULT_PAGE_CHARS
    find_max_hits: int = 10
    snippet_chars: int = 300
    python_output_chars: int = 4000
    search_k: int = DEFAULT_K


@dataclass
class ToolBox:
    """Runs validated tool calls against a snapshot (and the sandbox).

    Args:
        snapshot: The open snapshot (shared, read-only).
        sandbox: The Python sandbox, or None when the python tool is disabled.
        config: Presentation limits.
    """

    snapshot: Snapshot
    sandbox: PythonSandbox | None = None
    config: ToolConfig = field(default_factory=ToolConfig)

    # ---- tools (the registry, wikigym.envs.registry, maps each tool to its method) -------
    def search(self, args: SearchArgs) -> ToolResult:
        # A call that names no k gets the env's count (the schema's default says 5).
        k = args.k if "k" in args.model_fields_set else self.config.search_k
        hits = tuple(self.snapshot.search(args.query, k))
        return ToolResult(
            SearchOutput(args.query, hits), seen=tuple(passage_ref(h.passage_id) for h in hits)
        )

    def _page_or_error(self, ref: str | int) -> Page | ToolResult:
        # A title first; "d12" (a page id as the tools show it) only when no title matches.
        page = self.snapshot.page(ref)
        if page is None and isinstance(ref, str):
            parsed = parse_ref(ref)
            if parsed is not None and parsed[0] == "d":
                page = self.snapshot.page(parsed[1])
        if page is not None:
            return page
        hint = ""
        titles: list[str] = []
        if isinstance(ref, str):
            for h in self.snapshot.search(ref, 5):
                if h.title not in titles:
                    titles.append(h.title)
            if titles:
                hint = " Similar titles: " + "; ".join(titles[:3]) + "."
        message = (
            f"open: no page {ref!r} (by title, redirect or doc id).{hint} "
            "Use search to find the exact title."
        )
        return ToolResult(
            ToolErrorOutput(ErrorCode.NOT_FOUND, message, tuple(titles[:3])),
            error=ErrorCode.NOT_FOUND,
        )

    def open(self, args: OpenArgs) -> ToolResult:
        page = self._page_or_error(args.page)
        if isinstance(page, ToolResult):
            return page
        sections = list(page.sections)
        if args.section is not None:
            wanted = args.section.casefold()
            chosen = [s for s in sections if any(h.casefold() == wanted for h in s.path)]
            if not chosen:
                chosen = [s for s in sections if s.path and wanted in " > ".join(s.path).casefold()]
            if not chosen:
                names = [" > ".join(s.path) for s in sections if s.path]
                listing = "; ".join(dict.fromkeys(names)) or "(the page has only a lead section)"
                return _failure(
                    ErrorCode.NOT_FOUND,
                    f"open: page {page.title!r} has no section {args.section!r}. Sections: {listing}",
                )
            sections = chosen
        parts = paginate(page_blocks(page, sections), self.config.page_chars)
        if args.part > len(parts):
            return _failure(
                ErrorCode.INVALID_PART,
                f"open: page {page.title!r} has {len(parts)} part(s); part={args.part} does not exist.",
            )
        shown = tuple(parts[args.part - 1])
        links: tuple[str, ...] = ()
        more_links = False
        if args.part == 1 and args.section is None:
            uniq = list(
                dict.fromkeys(k.target_title for k in page.links if k.target_doc_id is not None)
            )
            links, more_links = tuple(uniq[:SHOWN_LINKS]), len(uniq) > SHOWN_LINKS
        output = PageOutput(
            doc_id=page.doc_id,
            title=page.title,
            resolved_from=page.resolved_from,
            is_disambiguation=page.is_disambiguation,
            part=args.part,
            parts=len(parts),
            blocks=shown,
            links=links,
            more_links=more_links,
        )
        return ToolResult(output, seen=(page_ref(page.doc_id), *(b.ref for b in shown)))

    def find(self, args: FindArgs) -> ToolResult:
        page = self._page_or_error(args.page)
        if isinstance(page, ToolResult):
            return page
        needle = args.text.casefold()
        hits = []
        for passage in page.passages:
            at = passage.text.casefold().find(needle)
            if at >= 0:
                hits.append((passage.passage_id, passage.text, at))
        if not hits:
            return ToolResult(
                FindOutput(page.doc_id, page.title, args.text, (), 0),
                error=ErrorCode.NOT_FOUND,
                seen=(page_ref(page.doc_id),),
            )
        half = self.config.snippet_chars // 2
        matches = []
        for pid, text, at in hits[: self.config.find_max_hits]:
            start = max(0, at - half)
            end = min(len(text), at + len(needle) + half)
            snippet = (
                ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
            )
            matches.append(FindMatch(pid, snippet))
        output = FindOutput(page.doc_id, page.title, args.text, tuple(matches), len(hits))
        return ToolResult(
            output, seen=(page_ref(page.doc_id), *(passage_ref(m.passage_id) for m in matches))
        )

    def python(self, args: PythonArgs, *, seed: int = 0) -> ToolResult:
        if self.sandbox is None:
            return _failure(
                ErrorCode.TOOL_DISABLED, "python: the python tool is disabled in this environment."
            )
        result = self.sandbox.run(args.code, seed=seed)
        limit = self.config.python_output_chars
        if result.error == SandboxCode.UNAVAILABLE:
            return _failure(
                ErrorCode.TOOL_DISABLED, result.stderr[:limit] or "python: sandbox unavailable"
            )
        output = PythonOutput(
            result.exit_code, result.stdout[:limit], result.stderr[:limit], result.error
        )
        return ToolResult(output, error=None if result.error is None else ErrorCode.SANDBOX_ERROR)

    def answer(self, args: AnswerArgs) -> ToolResult:
        return ToolResult(AnswerOutput(args.text, tuple(args.citations), args.abstain), answer=args)


def _failure(code: ErrorCode, message: str) -> ToolResult:
    return ToolResult(ToolErrorOutput(code, message), error=code)
