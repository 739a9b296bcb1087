"""What every tool is made of: :class:`Tool` (the definition), :class:`ToolArgs` (the base of
its argument model), :class:`ToolBox` (the state a call runs on) and :class:`ToolResult`.

A tool is one module of this package that defines, at module level, ``TOOL = Tool(...)``: its
name, what it does (shown to the model), its pydantic argument model, an example call, the
function that runs it, and its structured output type, which renders itself (``render()``:
the text the agent reads; nothing parses it back). The registry (:mod:`wikigym.tools.registry`)
finds the modules; everything else derives from the definitions.

A model-facing failure is a :class:`ToolResult` with an ``error`` code
(:class:`~wikigym.codes.ErrorCode`) and a :class:`ToolErrorOutput`, never an exception.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict

from wikigym.codes import ErrorCode
from wikigym.tasks.layout import DEFAULT_PAGE_CHARS
from wikigym.tasks.limits import DEFAULT_K

if TYPE_CHECKING:
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.sandbox import PythonSandbox


class Output(Protocol):
    """What a call (or the env) shows the agent: structured data that renders itself."""

    def render(self) -> str:
        """The observation text of this output."""
        ...


class ToolArgs(BaseModel):
    """Base of every argument model: strict types, no unknown fields, immutable.

    Argument rules (all models): unknown arguments are rejected, types are strict (no ``"5"``
    for an integer, no ``true`` for an integer, no ``5.0`` for an integer), strings are stripped
    of surrounding whitespace (except Python code) and length-capped.
    """

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)


@dataclass(frozen=True)
class ToolErrorOutput:
    """A valid call that the tool could not serve.

    Attributes:
        code: Why.
        message: What the agent is told (what was wrong, what to do).
        suggestions: Page titles offered instead (an unknown page), best first.
    """

    code: ErrorCode
    message: str
    suggestions: tuple[str, ...] = ()

    def render(self) -> str:
        """The message itself."""
        return self.message


@dataclass(frozen=True)
class AnswerOutput:
    """The final answer: what a tool that ends the episode returns (see
    :attr:`Tool.ends_episode`); the env scores it. ``abstain``: the agent says there is none."""

    text: str
    citations: tuple[str, ...]
    abstain: bool = False

    def render(self) -> str:
        """``answer: TEXT``, or ``abstained: WHY``."""
        return f"abstained: {self.text}" if self.abstain else f"answer: {self.text}"


@dataclass(frozen=True)
class ToolResult:
    """What one call produced.

    Attributes:
        output: The structured result (what wrappers, agents and importers read).
        error: A stable error code, or None.
        seen: Citation ids shown to the agent by this call (in display order).
    """

    output: Output
    error: ErrorCode | None = None
    seen: tuple[str, ...] = ()

    @property
    def answer(self) -> AnswerOutput | None:
        """The final answer, when the call gave one (it ends the episode)."""
        return self.output if isinstance(self.output, AnswerOutput) else None

    @property
    def text(self) -> str:
        """The observation text (the one rendering of :attr:`output`)."""
        return self.output.render()


def failure(code: ErrorCode, message: str) -> ToolResult:
    """A call the tool could not serve: ``message`` is what the agent reads."""
    return ToolResult(ToolErrorOutput(code, message), error=code)


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
    """The state tool calls run on: a snapshot, the sandbox and the presentation limits.

    Args:
        snapshot: The open snapshot (shared, read-only).
        sandbox: The Python sandbox, or None when tools that need it are disabled.
        config: Presentation limits.
    """

    snapshot: Snapshot
    sandbox: PythonSandbox | None = None
    config: ToolConfig = field(default_factory=ToolConfig)


@dataclass(frozen=True)
class Tag:
    """The shorthand tag form of a tool (Search-R1's ``<search>q</search>``): the tag's body
    fills one argument; the other arguments keep their defaults.

    Attributes:
        argument: The argument the body fills.
        prepare: Turns the body into that argument's value (e.g. dedent code).
        search_r1: Search-R1 itself defines the tag (listed before the others).
    """

    argument: str
    prepare: Callable[[str], str] = str
    search_r1: bool = False


_MARKERS = frozenset({"tool_call", "think", "json", "bare"})  # the parser's call-form names


@dataclass(frozen=True, eq=False)
class Tool:
    """One tool, defined once; every list, schema, method and description derives from it
    (compared and hashed by identity).

    Attributes:
        name: The name the model calls it by (lowercase letters, digits and ``_``).
        description: What it does and returns (shown to the model).
        args: Its pydantic argument model (validation, argument docs, JSON schema).
        example: Valid arguments (in the descriptions and in error messages).
        run: Runs one validated call: ``run(box, args, seed)`` (``seed``: the step's seed,
            for tools that draw random numbers) returns a :class:`ToolResult`.
        order: Where it stands in listings (descriptions, schemas): lower first, then name.
        tag: Its shorthand tag form, if it has one.
        ends_episode: A successful call returns an :class:`AnswerOutput` and ends the episode
            (calls after it in the same action are ignored).
        uses_sandbox: It runs code in the Python sandbox (the env makes one only for tools
            that need it; ``python="off"`` disables them; a step that calls it can wait on a
            subprocess).
    """

    name: str
    description: str
    args: type[ToolArgs]
    example: Mapping[str, Any]
    run: Callable[[ToolBox, Any, int], ToolResult]
    order: int = 50
    tag: Tag | None = None
    ends_episode: bool = False
    uses_sandbox: bool = False

    def __post_init__(self) -> None:
        if (
            not self.name
            or not self.name.replace("_", "").isalnum()
            or self.name != self.name.lower()
        ):
            raise ValueError(f"a tool name is lowercase letters, digits and _, got {self.name!r}")
        if self.tag is not None and self.name in _MARKERS:
            raise ValueError(f"tool {self.name}: a tag may not be named like a call marker")
        if self.tag is not None and self.tag.argument not in self.args.model_fields:
            raise ValueError(
                f"tool {self.name}: its tag fills {self.tag.argument!r}, not an argument"
            )
        self.args.model_validate(dict(self.example))  # an example that fails is a bug here
        object.__setattr__(self, "example", MappingProxyType(dict(self.example)))
