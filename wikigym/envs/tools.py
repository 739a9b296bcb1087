"""The tools' behaviour over a snapshot: what each call shows the agent.

Outputs are plain text with ids the agent can cite: passages as ``p<passage_id>``, pages as
``d<doc_id>``. Every id shown is recorded as *seen*, which the citation reward and the
hallucination metrics read. A model-facing failure is a :class:`ToolResult` with an
``error`` code, never an exception.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field

from wikigym.corpora.snapshot import Page, Snapshot
from wikigym.envs.codes import ErrorCode, SandboxCode
from wikigym.envs.sandbox import PythonSandbox
from wikigym.envs.tool_specs import (
    AnswerArgs,
    FindArgs,
    OpenArgs,
    PythonArgs,
    SearchArgs,
    ToolArgs,
    ToolName,
)
from wikigym.tasks.layout import DEFAULT_PAGE_CHARS, page_blocks, paginate
from wikigym.tasks.refs import page_ref, parse_ref, passage_ref

# Readers of the printed formats below, for code that sees tool outputs as text, as a model
# does (the heuristic agent, the context-management wrapper). Keep them in step with the
# f-strings of the tools; tests/test_envs.py checks that every output parses.
SEARCH_HIT_LINE = re.compile(r"^\d+\. \[p(\d+)\] (.*) \(d(\d+)\)$")
"""A search hit line: groups (passage id, title, doc id)."""
PASSAGE_LINE = re.compile(r"^\[p(\d+)\] ?(.*)$")
"""A passage line of ``open`` or ``find``: groups (passage id, text)."""
MORE_PARTS = re.compile(r"open with part=(\d+) to read on")
"""The note under a page part that has a next part: group (next part)."""
PAGE_HEAD_LINE = re.compile(
    r"^# (.*) \((d\d+)\)(?: \[from .*\])?(?: \[disambiguation page\])?(?: part \d+/\d+)?$"
)
"""The first line of ``open``: groups (title, doc ref ``d<id>``)."""


@dataclass(frozen=True)
class ToolResult:
    """What one call produced.

    Attributes:
        text: The observation text.
        error: A stable error code, or None.
        seen: Citation ids shown to the agent by this call (in display order).
        answer: The answer call's arguments, when the call was ``answer``.
    """

    text: str
    error: ErrorCode | None = None
    seen: tuple[str, ...] = ()
    answer: AnswerArgs | None = None


@dataclass(frozen=True)
class ToolConfig:
    """Presentation limits of the tools.

    Attributes:
        page_chars: Characters of page text per ``open`` part (long pages are paginated
            on passage boundaries, deterministically).
        find_max_hits: Passages listed by ``find``.
        snippet_chars: Characters of a passage shown around a ``find`` match.
        python_output_chars: Characters of sandbox output shown.
    """

    page_chars: int = DEFAULT_PAGE_CHARS
    find_max_hits: int = 10
    snippet_chars: int = 300
    python_output_chars: int = 4000


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

    def __post_init__(self) -> None:
        self._dispatch: dict[ToolName, Callable[..., ToolResult]] = {
            ToolName.SEARCH: self.search,
            ToolName.OPEN: self.open,
            ToolName.FIND: self.find,
            ToolName.PYTHON: self.python,
            ToolName.ANSWER: self.answer,
        }

    def run(self, name: ToolName, args: ToolArgs, *, seed: int = 0) -> ToolResult:
        """Run one validated call."""
        if name is ToolName.PYTHON:
            return self.python(args, seed=seed)  # type: ignore[arg-type]
        return self._dispatch[name](args)

    # ---- tools --------------------------------------------------------------------
    def search(self, args: SearchArgs) -> ToolResult:
        hits = self.snapshot.search(args.query, args.k)
        if not hits:
            return ToolResult(
                f"search({args.query!r}): no passage matches. Try other or fewer words.",
                seen=(),
            )
        lines = [f"search({args.query!r}): {len(hits)} results"]
        for rank, h in enumerate(hits, 1):
            lines.append(f"{rank}. [{passage_ref(h.passage_id)}] {h.title} ({page_ref(h.doc_id)})")
            lines.append(f"   {h.text}")
        return ToolResult("\n".join(lines), seen=tuple(passage_ref(h.passage_id) for h in hits))

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
        if isinstance(ref, str):
            titles: list[str] = []
            for h in self.snapshot.search(ref, 5):
                if h.title not in titles:
                    titles.append(h.title)
            if titles:
                hint = " Similar titles: " + "; ".join(titles[:3]) + "."
        return ToolResult(
            f"open: no page {ref!r} (by title, redirect or doc id).{hint} "
            "Use search to find the exact title.",
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
                return ToolResult(
                    f"open: page {page.title!r} has no section {args.section!r}. Sections: {listing}",
                    error=ErrorCode.NOT_FOUND,
                )
            sections = chosen
        parts = paginate(page_blocks(page, sections), self.config.page_chars)
        if args.part > len(parts):
            return ToolResult(
                f"open: page {page.title!r} has {len(parts)} part(s); part={args.part} does not exist.",
                error=ErrorCode.INVALID_PART,
            )
        shown = parts[args.part - 1]
        head = f"# {page.title} ({page_ref(page.doc_id)})"
        if page.resolved_from:
            head += f" [from {page.resolved_from!r}]"
        if page.is_disambiguation:
            head += " [disambiguation page]"
        if len(parts) > 1:
            head += f" part {args.part}/{len(parts)}"
        body = "\n".join(b.render() for b in shown)
        tail = ""
        if args.part < len(parts):
            tail = (
                f"\n... (part {args.part}/{len(parts)}; open with part={args.part + 1} to read on)"
            )
        links = [link.target_title for link in page.links if link.target_doc_id is not None]
        if links and args.part == 1 and args.section is None:
            uniq = list(dict.fromkeys(links))
            tail += "\nLinks: " + "; ".join(uniq[:30]) + (" ..." if len(uniq) > 30 else "")
        seen = (page_ref(page.doc_id), *(b.ref for b in shown))
        return ToolResult(f"{head}\n{body}{tail}", seen=seen)

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
                f"find: {args.text!r} does not occur in {page.title!r} ({page_ref(page.doc_id)}).",
                error=ErrorCode.NOT_FOUND,
                seen=(page_ref(page.doc_id),),
            )
        half = self.config.snippet_chars // 2
        lines = [
            f"find({args.text!r}) in {page.title} ({page_ref(page.doc_id)}): {len(hits)} passages"
        ]
        for pid, text, at in hits[: self.config.find_max_hits]:
            start = max(0, at - half)
            end = min(len(text), at + len(needle) + half)
            snippet = (
                ("..." if start else "") + text[start:end] + ("..." if end < len(text) else "")
            )
            lines.append(f"[{passage_ref(pid)}] {snippet}")
        if len(hits) > self.config.find_max_hits:
            lines.append(f"... {len(hits) - self.config.find_max_hits} more")
        shown = hits[: self.config.find_max_hits]
        return ToolResult(
            "\n".join(lines), seen=(page_ref(page.doc_id), *(passage_ref(p) for p, _, _ in shown))
        )

    def python(self, args: PythonArgs, *, seed: int = 0) -> ToolResult:
        if self.sandbox is None:
            return ToolResult(
                "python: the python tool is disabled in this environment.",
                error=ErrorCode.TOOL_DISABLED,
            )
        result = self.sandbox.run(args.code, seed=seed)
        limit = self.config.python_output_chars
        out = result.stdout[:limit]
        parts = [f"python exit={result.exit_code}"]
        if out:
            parts.append(out)
        if result.stderr:
            parts.append("stderr:\n" + result.stderr[:limit])
        if result.error is not None:
            if result.error == SandboxCode.UNAVAILABLE:
                return ToolResult(
                    result.stderr[:limit] or "python: sandbox unavailable",
                    error=ErrorCode.TOOL_DISABLED,
                )
            parts.append(f"[{result.error}]")
            return ToolResult("\n".join(parts), error=ErrorCode.SANDBOX_ERROR)
        return ToolResult("\n".join(parts))

    def answer(self, args: AnswerArgs) -> ToolResult:
        return ToolResult(f"answer: {args.text}", answer=args)
