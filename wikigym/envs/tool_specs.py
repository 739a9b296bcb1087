"""The tools an agent may call: names, typed arguments, JSON schema and the text shown to the model.

One registry, `TOOL_MODELS`, maps each `ToolName` to the pydantic model of its arguments. The
parser (`wikigym.envs.actions`) validates calls against these models; the env dispatches on the
`ToolName` (or the model class), never on raw strings; `openai_tools_schema` exports the same
models in the OpenAI function-calling format; `describe_tools` renders them for the first
observation. The tools' behaviour (running a search on a snapshot, ...) lives elsewhere.

Argument rules (all models): unknown arguments are rejected, types are strict (no `"5"` for an
integer, no `true` for an integer, no `5.0` for an integer), strings are stripped of surrounding
whitespace (except Python code) and length-capped.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from enum import Enum
from types import MappingProxyType
from typing import Annotated, Any, ClassVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StringConstraints,
    WithJsonSchema,
    field_validator,
)
from pydantic_core import PydanticCustomError

from wikigym.tasks.limits import (
    DEFAULT_K,
    MAX_ANSWER_CHARS,
    MAX_CITATION_CHARS,
    MAX_CITATIONS,
    MAX_CODE_CHARS,
    MAX_FIND_CHARS,
    MAX_K,
    MAX_PART,
    MAX_QUERY_CHARS,
    MAX_SECTION_CHARS,
    MAX_TITLE_CHARS,
)


class ToolName(str, Enum):
    """The tools, in the order they are described and exported."""

    SEARCH = "search"
    OPEN = "open"
    FIND = "find"
    PYTHON = "python"
    ANSWER = "answer"


_PAGE_SCHEMA: dict[str, Any] = {
    "anyOf": [
        {"type": "string", "minLength": 1, "maxLength": MAX_TITLE_CHARS},
        {"type": "integer", "minimum": 0},
    ],
    "description": "The page: its title (string) or its doc id (integer).",
}

PageRef = Annotated[str | int, WithJsonSchema(_PAGE_SCHEMA)]
"""A page named by its title (str, stripped, 1..300 chars) or by its doc id (int >= 0)."""


def _check_page(value: object) -> str | int:
    """Validate a page reference with one clear message instead of one per union member."""
    if isinstance(value, bool) or not isinstance(value, str | int):
        raise PydanticCustomError(
            "page_type",
            "page must be a page title (string) or a doc id (integer), got {kind}",
            {"kind": type(value).__name__},
        )
    if isinstance(value, int):
        if value < 0:
            raise PydanticCustomError("page_id", "a doc id must be >= 0, got {v}", {"v": value})
        return value
    title = value.strip()
    if not title:
        raise PydanticCustomError("page_empty", "page title must not be empty", {})
    if len(title) > MAX_TITLE_CHARS:
        raise PydanticCustomError(
            "page_too_long",
            "page title must have at most {n} characters, got {m}",
            {"n": MAX_TITLE_CHARS, "m": len(title)},
        )
    return title


class ToolArgs(BaseModel):
    """Base of every argument model: strict types, no unknown fields, immutable."""

    model_config = ConfigDict(strict=True, extra="forbid", frozen=True)

    tool: ClassVar[ToolName]
    description: ClassVar[str]
    example: ClassVar[dict[str, Any]]


class SearchArgs(ToolArgs):
    """Arguments of `search`."""

    tool: ClassVar[ToolName] = ToolName.SEARCH
    description: ClassVar[str] = (
        "Search the encyclopedia (BM25 over passages). Returns up to k passages, best first, "
        "each with its passage id (like p123), page title, doc id and text."
    )
    example: ClassVar[dict[str, Any]] = {"query": "capital of France", "k": 5}

    query: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_QUERY_CHARS)
    ] = Field(description="Keywords or a question.")
    k: Annotated[int, Field(ge=1, le=MAX_K)] = Field(
        default=DEFAULT_K, description=f"How many passages to return (1 to {MAX_K})."
    )


class OpenArgs(ToolArgs):
    """Arguments of `open`. Long pages are split into parts of bounded length; `part` is 1-based."""

    tool: ClassVar[ToolName] = ToolName.OPEN
    description: ClassVar[str] = (
        "Open a page by title or doc id and read its text with passage ids. Give section to read "
        "only that section. Long pages come in parts: the result says how many; ask for part=2, "
        "3, ... to read on."
    )
    example: ClassVar[dict[str, Any]] = {"page": "Paris", "section": "History"}

    page: PageRef
    section: (
        Annotated[
            str,
            StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_SECTION_CHARS),
        ]
        | None
    ) = Field(default=None, description="A section heading of the page; omit for the whole page.")
    part: Annotated[int, Field(ge=1, le=MAX_PART)] = Field(
        default=1, description="Which part of a long page to read, starting at 1."
    )

    @field_validator("page", mode="before")
    @classmethod
    def _page(cls, value: object) -> str | int:
        return _check_page(value)


class FindArgs(ToolArgs):
    """Arguments of `find`."""

    tool: ClassVar[ToolName] = ToolName.FIND
    description: ClassVar[str] = (
        "Find a text in a page (case-insensitive). Returns the passages of the page that "
        "contain it, with their passage ids."
    )
    example: ClassVar[dict[str, Any]] = {"page": "Paris", "text": "population"}

    page: PageRef
    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_FIND_CHARS)
    ] = Field(description="The text to look for.")

    @field_validator("page", mode="before")
    @classmethod
    def _page(cls, value: object) -> str | int:
        return _check_page(value)


class PythonArgs(ToolArgs):
    """Arguments of `python`. The code is kept verbatim (whitespace matters in Python)."""

    tool: ClassVar[ToolName] = ToolName.PYTHON
    description: ClassVar[str] = (
        "Run Python 3 code in a sandbox (no network, no files, limited time and memory). "
        "Returns what it prints. Use it for arithmetic, dates and counting."
    )
    example: ClassVar[dict[str, Any]] = {"code": "print(2024 - 1889)"}

    code: Annotated[str, StringConstraints(min_length=1, max_length=MAX_CODE_CHARS)] = Field(
        description="The program; print the results you need."
    )

    @field_validator("code")
    @classmethod
    def _not_blank(cls, code: str) -> str:
        if not code.strip():
            raise PydanticCustomError("code_blank", "code must not be blank", {})
        return code


CitationId = Annotated[
    str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_CITATION_CHARS)
]


class AnswerArgs(ToolArgs):
    """Arguments of `answer`. Answering ends the episode."""

    tool: ClassVar[ToolName] = ToolName.ANSWER
    description: ClassVar[str] = (
        "Give the final answer and end the episode. Keep it short (a name, a number, a date). "
        "citations: the passage ids (like p123) or page ids that support it. "
        "If the pages show that nothing satisfies every condition of the question, say so "
        "with abstain=true (text: why) instead of guessing."
    )
    example: ClassVar[dict[str, Any]] = {"text": "Paris", "citations": ["p123"]}

    text: Annotated[
        str, StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_ANSWER_CHARS)
    ] = Field(description="The answer.")
    citations: list[CitationId] = Field(
        default_factory=list,
        max_length=MAX_CITATIONS,
        description=f"Ids of the passages or pages that support the answer (at most {MAX_CITATIONS}).",
    )
    abstain: bool = Field(
        default=False,
        description="True to state that the snapshot holds no answer (nothing satisfies every "
        "condition); text then says why.",
    )


TOOL_MODELS: Mapping[ToolName, type[ToolArgs]] = MappingProxyType(
    {
        ToolName.SEARCH: SearchArgs,
        ToolName.OPEN: OpenArgs,
        ToolName.FIND: FindArgs,
        ToolName.PYTHON: PythonArgs,
        ToolName.ANSWER: AnswerArgs,
    }
)
"""The argument model of each tool (read-only)."""


def _selected(names: Iterable[ToolName] | None) -> list[ToolName]:
    """The tools asked for, in `ToolName` order, without repeats."""
    if names is None:
        return list(ToolName)
    wanted = list(names)
    for name in wanted:
        if not isinstance(name, ToolName):
            raise TypeError(
                f"expected ToolName members, got {name!r} ({type(name).__name__}); "
                f"use e.g. ToolName.SEARCH"
            )
    return [name for name in ToolName if name in wanted]


def _drop_titles(node: Any) -> Any:
    """Remove pydantic's auto-generated "title" strings (noise in a tool schema)."""
    if isinstance(node, dict):
        return {
            key: _drop_titles(value)
            for key, value in node.items()
            if not (key == "title" and isinstance(value, str))
        }
    if isinstance(node, list):
        return [_drop_titles(value) for value in node]
    return node


def tool_parameters_schema(name: ToolName) -> dict[str, Any]:
    """The JSON schema of one tool's arguments (an object schema, no unknown properties)."""
    schema = _drop_titles(TOOL_MODELS[name].model_json_schema())
    schema.pop("description", None)  # the class docstring; the tool description says it better
    return schema


def openai_tools_schema(names: Iterable[ToolName] | None = None) -> list[dict[str, Any]]:
    """The tools in the OpenAI function-calling format.

    Args:
        names: The tools to export (default: all); always returned in `ToolName` order.

    Returns:
        `[{"type": "function", "function": {"name", "description", "parameters"}}, ...]`,
        plain JSON data; `json.dumps(..., sort_keys=True)` of it is the same on every run.
    """
    return [
        {
            "type": "function",
            "function": {
                "name": name.value,
                "description": TOOL_MODELS[name].description,
                "parameters": tool_parameters_schema(name),
            },
        }
        for name in _selected(names)
    ]


def example_arguments(name: ToolName) -> dict[str, Any]:
    """A valid argument dict for `name` (used in examples and error messages)."""
    return dict(TOOL_MODELS[name].example)


def format_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call in the Hermes/Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` form
    (the form the env's parser reads first; used by agents, oracles, adapters and tests)."""
    payload = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
    return f"<tool_call>{payload}</tool_call>"


def example_call(name: ToolName) -> str:
    """A correct call of `name` in the `<tool_call>` form."""
    return format_tool_call(name.value, example_arguments(name))


def tool_signature(name: ToolName) -> str:
    """The `search(query: string, k: integer = 5)`-style signature of a tool."""
    parts = []
    for field_name, field in TOOL_MODELS[name].model_fields.items():
        kind = {
            "page": "string | integer",
            "section": "string | null",
            "citations": "list of strings",
        }.get(field_name)
        if kind is None:
            kind = "integer" if field.annotation is int else "string"
        if field.is_required():
            parts.append(f"{field_name}: {kind}")
        elif field.default_factory is not None:
            parts.append(f"{field_name}: {kind} = []")
        else:
            parts.append(f"{field_name}: {kind} = {json.dumps(field.default)}")
    return f"{name.value}({', '.join(parts)})"


def describe_tools(
    names: Iterable[ToolName] | None = None, *, max_calls: int = 1, search_r1_tags: bool = True
) -> str:
    """The text listing the tools and the accepted call formats, for the first observation.

    Args:
        names: The tools to list (default: all), in `ToolName` order.
        max_calls: How many calls the env runs per turn (as given to `parse_action`).
        search_r1_tags: Also mention the `<search>` / `<answer>` / `<python>` shorthand tags.

    Returns:
        Plain text, identical for identical arguments.
    """
    selected = _selected(names)
    lines = ["Tools:"]
    for name in selected:
        lines.append(f"- {tool_signature(name)}: {TOOL_MODELS[name].description}")
    lines.append("")
    per_turn = "one tool" if max_calls == 1 else f"at most {max_calls} tools"
    lines.append(
        f"Call {per_turn} per turn, as JSON inside <tool_call></tool_call> tags, "
        "arguments as a JSON object:"
    )
    for name in selected:
        lines.append(f"  {example_call(name)}")
    lines.append(
        'A bare JSON object {"name": ..., "arguments": {...}} (alone, or in a ```json block) '
        "is also accepted."
    )
    if search_r1_tags:
        tags = [
            (ToolName.SEARCH, "<search>capital of France</search>"),
            (ToolName.ANSWER, "<answer>Paris</answer>"),
            (ToolName.PYTHON, "<python>print(2024 - 1889)</python>"),
        ]
        shown = [example for tool, example in tags if tool in selected]
        if shown:
            lines.append("Shorthand tags (default arguments): " + " ".join(shown))
    if ToolName.ANSWER in selected:
        lines.append("The answer call ends the episode; calls after it are ignored.")
    return "\n".join(lines)
