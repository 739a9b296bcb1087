"""The one renderer of tool results: structured outputs to the observation text.

Every text the agent reads about a tool call is made here, from the objects of
:mod:`wikigym.envs.results`; nothing parses it back.
"""

from __future__ import annotations

from wikigym.envs.results import (
    ActionErrorOutput,
    AnswerOutput,
    FindOutput,
    PageOutput,
    PythonOutput,
    SearchOutput,
    StepOutput,
    ToolErrorOutput,
)
from wikigym.tasks.refs import page_ref, passage_ref


def render_search(out: SearchOutput) -> str:
    """``search('q'): N results``, then per hit ``1. [pN] Title (dN)`` and its text, indented."""
    if not out.hits:
        return f"search({out.query!r}): no passage matches. Try other or fewer words."
    lines = [f"search({out.query!r}): {len(out.hits)} results"]
    for rank, h in enumerate(out.hits, 1):
        lines.append(f"{rank}. [{passage_ref(h.passage_id)}] {h.title} ({page_ref(h.doc_id)})")
        lines.append(f"   {h.text}")
    return "\n".join(lines)


def page_head(out: PageOutput) -> str:
    """The first line of an ``open`` result: ``# Title (dN)`` and its notes."""
    head = f"# {out.title} ({out.doc})"
    if out.resolved_from:
        head += f" [from {out.resolved_from!r}]"
    if out.is_disambiguation:
        head += " [disambiguation page]"
    if out.parts > 1:
        head += f" part {out.part}/{out.parts}"
    return head


def render_page(out: PageOutput) -> str:
    """The head line, the blocks, the hint to read on and the links line."""
    body = "\n".join(b.render() for b in out.blocks)
    tail = ""
    if out.next_part is not None:
        tail = f"\n... (part {out.part}/{out.parts}; open with part={out.next_part} to read on)"
    if out.links:
        tail += "\nLinks: " + "; ".join(out.links) + (" ..." if out.more_links else "")
    return f"{page_head(out)}\n{body}{tail}"


def render_find(out: FindOutput) -> str:
    """``find('t') in Title (dN): N passages`` and the snippets; or the miss line."""
    if not out.matches:
        return f"find: {out.text!r} does not occur in {out.title!r} ({out.doc})."
    lines = [f"find({out.text!r}) in {out.title} ({out.doc}): {out.total} passages"]
    lines += [f"[{passage_ref(m.passage_id)}] {m.snippet}" for m in out.matches]
    if out.total > len(out.matches):
        lines.append(f"... {out.total - len(out.matches)} more")
    return "\n".join(lines)


def render_python(out: PythonOutput) -> str:
    """``python exit=N``, stdout, ``stderr:`` and the failure code in brackets."""
    parts = [f"python exit={out.exit_code}"]
    if out.stdout:
        parts.append(out.stdout)
    if out.stderr:
        parts.append("stderr:\n" + out.stderr)
    if out.error is not None:
        parts.append(f"[{out.error}]")
    return "\n".join(parts)


def render(out: StepOutput) -> str:
    """The observation text of one output."""
    if isinstance(out, SearchOutput):
        return render_search(out)
    if isinstance(out, PageOutput):
        return render_page(out)
    if isinstance(out, FindOutput):
        return render_find(out)
    if isinstance(out, PythonOutput):
        return render_python(out)
    if isinstance(out, AnswerOutput):
        return f"answer: {out.text}"
    if isinstance(out, ToolErrorOutput):
        return out.message
    if isinstance(out, ActionErrorOutput):
        return f"error ({out.code}): {out.message}"
    return out.text
