"""Running a call: by name on a :class:`~wikigym.tools.base.ToolBox`, from validated or JSON
arguments."""

from __future__ import annotations

import reprlib
from collections.abc import Mapping
from typing import Any

from pydantic import ValidationError

from wikigym.codes import ErrorCode
from wikigym.tools.base import ToolArgs, ToolBox, ToolResult, failure
from wikigym.tools.registry import get_tool
from wikigym.tools.schema import tool_signature

_repr = reprlib.Repr()
_repr.maxlevel = 3
_repr.maxstring = 80
_repr.maxother = 80
_repr.maxlist = 5
_repr.maxdict = 5


def short_repr(value: Any) -> str:
    """A bounded repr of model input (error messages quote what came, never all of it)."""
    return _repr.repr(value)


def invalid_arguments_message(name: str, error: ValidationError) -> str:
    """``Invalid arguments for NAME: FIELD: WHY (got X); .... Expected SIGNATURE.``"""
    details = []
    for item in error.errors(include_url=False)[:5]:
        where = ".".join(str(part) for part in item["loc"]) or "arguments"
        got = "" if item["type"] == "missing" else f" (got {short_repr(item['input'])})"
        details.append(f"{where}: {item['msg']}{got}")
    return f"Invalid arguments for {name}: {'; '.join(details)}. Expected {tool_signature(name)}."


def run_tool(box: ToolBox, name: str, args: ToolArgs, *, seed: int = 0) -> ToolResult:
    """Run one validated call (``args``: an instance of the tool's argument model; ``seed``:
    the step's seed, which seeds the python sandbox)."""
    return get_tool(name).run(box, args, seed)


def call_tool(
    box: ToolBox, name: str, arguments: Mapping[str, Any], *, seed: int = 0
) -> ToolResult:
    """Validate JSON arguments and run the call; invalid arguments are a result with the
    ``invalid_arguments`` code (the message names the fields), never an exception.

    Raises:
        KeyError: No tool is called ``name``.
    """
    tool = get_tool(name)
    try:
        args = tool.args.model_validate(dict(arguments))
    except ValidationError as exc:
        return failure(ErrorCode.INVALID_ARGUMENTS, invalid_arguments_message(name, exc))
    return tool.run(box, args, seed)
