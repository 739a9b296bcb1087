"""The tools as Python methods: what TRL's ``environment_factory`` (and any framework that
reads tools from signatures and Google docstrings) shows the model.

:func:`trl_method` generates a tool's method from its argument model (names, plain types,
required or not, descriptions); the body is one env step through ``self._call``.
:func:`trl_schema` is the exported schema in the dialect TRL derives from such a method
(``transformers.utils.get_json_schema``: no bounds, defaults or closed objects).
"""

from __future__ import annotations

import functools
import inspect
import operator
import types
from collections.abc import Callable, Mapping
from typing import Annotated, Any, Union, get_args, get_origin

from wikigym.tools.registry import get_tool
from wikigym.tools.schema import openai_tools_schema, tool_parameters_schema


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


def trl_method(name: str) -> Callable[..., str]:
    """The ``environment_factory`` method of a tool, generated from its :class:`~wikigym.tools.base.Tool`.

    Its signature and Google docstring are the argument model's (names, plain types,
    required or not, descriptions), so TRL shows the model :func:`trl_schema`. The body is one
    env step: ``self._call(name, arguments)`` with the arguments the model gave.
    """
    tool = get_tool(name)
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
    tool_name = tool.name

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


def trl_schema(name: str) -> dict[str, Any]:
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
