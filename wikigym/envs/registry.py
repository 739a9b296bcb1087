"""The tool registry: one definition per tool, and everything derived from it.

A :class:`ToolDef` holds a tool's name, its pydantic argument model (with the description and
argument docs, :mod:`wikigym.envs.tool_specs`), the method of :class:`ToolBox` that runs it,
the structured result type it returns on success (:mod:`wikigym.envs.results`) and its text
rendering (:mod:`wikigym.envs.render`). Derived from it: the env's dispatch
(:func:`run_tool`), the tool descriptions and the OpenAI schema (``tool_specs``), and TRL's
``environment_factory`` methods (:func:`trl_method`, whose JSON schema as TRL derives it,
``transformers.utils.get_json_schema``, is :func:`trl_schema`: the exported schema in the
dialect TRL can express).

Adding a tool: its argument model and :class:`~wikigym.envs.tool_specs.ToolName` member, its
result type and rendering, its :class:`ToolBox` method, and one :class:`ToolDef` here.
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Annotated, Any, Union, get_args, get_origin

from wikigym.envs.render import render_find, render_page, render_python, render_search
from wikigym.envs.results import AnswerOutput, FindOutput, PageOutput, PythonOutput, SearchOutput
from wikigym.envs.tool_specs import (
    TOOL_MODELS,
    ToolArgs,
    ToolName,
    openai_tools_schema,
    tool_parameters_schema,
)
from wikigym.envs.tools import ToolBox, ToolResult


def _run_search(box: ToolBox, args: Any, seed: int) -> ToolResult:
    return box.search(args)


def _run_open(box: ToolBox, args: Any, seed: int) -> ToolResult:
    return box.open(args)


def _run_find(box: ToolBox, args: Any, seed: int) -> ToolResult:
    return box.find(args)


def _run_python(box: ToolBox, args: Any, seed: int) -> ToolResult:
    return box.python(args, seed=seed)


def _run_answer(box: ToolBox, args: Any, seed: int) -> ToolResult:
    return box.answer(args)


def _render_answer(out: AnswerOutput) -> str:
    return f"abstained: {out.text}" if out.abstain else f"answer: {out.text}"


@dataclass(frozen=True)
class ToolDef:
    """One tool, defined once.

    Attributes:
        name: The tool's name.
        args: Its argument model (validation, description, argument docs, JSON schema).
        run: Runs a validated call on a :class:`ToolBox` (``seed``: the sandbox's).
        result: The structured result type of a successful call.
        render: The text of that result (what the agent reads).
        returns: One line on what the result holds (the ``Returns`` of generated docs).
    """

    name: ToolName
    args: type[ToolArgs]
    run: Callable[[ToolBox, Any, int], ToolResult]
    result: type
    render: Callable[[Any], str]
    returns: str

    @property
    def description(self) -> str:
        """What the tool does (shown to the model)."""
        return self.args.description


TOOLS: Mapping[ToolName, ToolDef] = MappingProxyType(
    {
        ToolName.SEARCH: ToolDef(
            ToolName.SEARCH,
            TOOL_MODELS[ToolName.SEARCH],
            _run_search,
            SearchOutput,
            render_search,
            "The passages, each with its passage id, page title, doc id and text.",
        ),
        ToolName.OPEN: ToolDef(
            ToolName.OPEN,
            TOOL_MODELS[ToolName.OPEN],
            _run_open,
            PageOutput,
            render_page,
            "The page text (or one part of it) with passage ids.",
        ),
        ToolName.FIND: ToolDef(
            ToolName.FIND,
            TOOL_MODELS[ToolName.FIND],
            _run_find,
            FindOutput,
            render_find,
            "The passages of the page that contain the text, with their passage ids.",
        ),
        ToolName.PYTHON: ToolDef(
            ToolName.PYTHON,
            TOOL_MODELS[ToolName.PYTHON],
            _run_python,
            PythonOutput,
            render_python,
            "What the program printed, and its exit status.",
        ),
        ToolName.ANSWER: ToolDef(
            ToolName.ANSWER,
            TOOL_MODELS[ToolName.ANSWER],
            _run_answer,
            AnswerOutput,
            _render_answer,
            "A confirmation; the episode ends.",
        ),
    }
)
"""Every tool, in :class:`ToolName` order (read-only)."""


def run_tool(box: ToolBox, name: ToolName, args: ToolArgs, *, seed: int = 0) -> ToolResult:
    """Run one validated call (``seed`` seeds the python sandbox)."""
    return TOOLS[name].run(box, args, seed)


# ---- TRL: environment_factory methods ------------------------------------------------------
class _Omitted:
    """The default of an optional argument the model left out (the argument model's default
    then applies: one home for defaults)."""

    def __repr__(self) -> str:
        return "<omitted>"


OMITTED: Any = _Omitted()


def _plain_type(tp: Any) -> Any:
    """A type hint without ``Annotated`` metadata (what TRL's schema reader understands)."""
    origin = get_origin(tp)
    if origin is Annotated:
        return _plain_type(get_args(tp)[0])
    if origin is Union or origin is types.UnionType:
        return functools.reduce(operator.or_, [_plain_type(a) for a in get_args(tp)])
    if origin is list:
        return list[_plain_type(get_args(tp)[0])]  # type: ignore[misc]
    return tp


def trl_method(name: ToolName) -> Callable[..., str]:
    """The ``environment_factory`` method of a tool, generated from its :class:`ToolDef`.

    Its signature and Google docstring are the argument model's (names, plain types,
    required or not, descriptions), so TRL shows the model :func:`trl_schema`. The body is one
    env step: ``self._call(name, arguments)`` with the arguments the model gave.
    """
    tool = TOOLS[name]
    params = [inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    annotations: dict[str, Any] = {}
    docs = []
    described = tool_parameters_schema(name)["properties"]
    for field_name, field in tool.args.model_fields.items():
        annotations[field_name] = _plain_type(field.annotation)
        default = inspect.Parameter.empty if field.is_required() else OMITTED
        params.append(
            inspect.Parameter(
                field_name,
                inspect.Parameter.POSITIONAL_OR_KEYWORD,
                default=default,
                annotation=annotations[field_name],
            )
        )
        docs.append(f"    {field_name}: {described[field_name]['description']}")
    tool_name = name.value

    def method(self: Any, *args: Any, **kwargs: Any) -> str:
        bound = signature.bind(self, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k != "self" and v is not OMITTED}
        result: str = self._call(tool_name, given)
        return result

    signature = inspect.Signature(params)
    method.__name__ = method.__qualname__ = tool_name
    method.__signature__ = signature  # type: ignore[attr-defined]
    method.__annotations__ = annotations
    method.__doc__ = f"{tool.description}\n\nArgs:\n" + "\n".join(docs)
    return method


def _trl_property(schema: Mapping[str, Any]) -> dict[str, Any]:
    """One property of the exported schema in TRL's dialect: types, nullability, items,
    description (TRL cannot express bounds, defaults or closed objects)."""
    out: dict[str, Any] = {}
    if "anyOf" in schema:
        members = [m for m in schema["anyOf"] if m.get("type") != "null"]
        kinds = sorted({m["type"] for m in members})
        out["type"] = kinds[0] if len(kinds) == 1 else kinds
        if len(members) < len(schema["anyOf"]):
            out["nullable"] = True
    else:
        out["type"] = schema["type"]
        if schema["type"] == "array" and "items" in schema:
            out["items"] = {
                k: v for k, v in _trl_property(schema["items"]).items() if k != "description"
            }
    if "description" in schema:
        out["description"] = schema["description"]
    return out


def trl_schema(name: ToolName) -> dict[str, Any]:
    """The tool's exported OpenAI schema in TRL's dialect (what :func:`trl_method` yields)."""
    function = openai_tools_schema([name])[0]["function"]
    params = function["parameters"]
    parameters: dict[str, Any] = {
        "type": "object",
        "properties": {k: _trl_property(v) for k, v in params["properties"].items()},
    }
    if params.get("required"):
        parameters["required"] = list(params["required"])
    return {
        "type": "function",
        "function": {
            "name": function["name"],
            "description": function["description"],
            "parameters": parameters,
        },
    }
