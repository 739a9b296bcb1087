"""The tools as other parties read them: the OpenAI function schema, the text of the first
observation, call examples. All derived from the registry's definitions."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from wikigym.tools.base import Tool
from wikigym.tools.registry import all_tools, get_tool, select_tools


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


def tool_parameters_schema(name: str) -> dict[str, Any]:
    """The JSON schema of one tool's arguments (an object schema, no unknown properties)."""
    schema = _drop_titles(get_tool(name).args.model_json_schema())
    schema.pop("description", None)  # the class docstring; the tool description says it better
    return schema


def openai_tools_schema(names: Iterable[str] | None = None) -> list[dict[str, Any]]:
    """The tools in the OpenAI function-calling format.

    Args:
        names: The tools to export (default: all); always returned in listing order.

    Returns:
        ``[{"type": "function", "function": {"name", "description", "parameters"}}, ...]``,
        plain JSON data; ``json.dumps(..., sort_keys=True)`` of it is the same on every run.
    """
    return [
        {
            "type": "function",
            "function": {
                "name": tool.name,
                "description": tool.description,
                "parameters": tool_parameters_schema(tool.name),
            },
        }
        for tool in select_tools(names)
    ]


def format_tool_call(name: str, arguments: Mapping[str, Any]) -> str:
    """A call in the Hermes/Qwen ``<tool_call>{"name": ..., "arguments": {...}}</tool_call>`` form
    (the form the env's parser reads first; used by agents, oracles, adapters and tests)."""
    payload = json.dumps({"name": name, "arguments": dict(arguments)}, ensure_ascii=False)
    return f"<tool_call>{payload}</tool_call>"


def example_call(name: str) -> str:
    """A correct call of tool ``name`` in the ``<tool_call>`` form."""
    return format_tool_call(name, get_tool(name).example)


def tag_example(tool: Tool) -> str | None:
    """The tool's example in its shorthand tag form (``<search>capital of France</search>``),
    or None for a tool without one."""
    if tool.tag is None:
        return None
    return f"<{tool.name}>{tool.example[tool.tag.argument]}</{tool.name}>"


def format_example() -> str:
    """The call that illustrates the call format in error messages: the first tool's example."""
    return example_call(all_tools()[0].name)


def _kind(schema: Mapping[str, Any]) -> str:
    """A field's type in words, for signatures (``string | integer``, ``list of strings``).

    Booleans read ``string``: the wording registered ids pin (WikiSearch-v1 shows
    ``abstain: string = false``); a change here moves every id that shows such a field.
    """
    if "anyOf" in schema:
        kinds = [m.get("type") for m in schema["anyOf"]]
        return " | ".join("null" if k == "null" else _kind({"type": k}) for k in kinds)
    if schema.get("type") == "array":
        return "list of strings"
    return "integer" if schema.get("type") == "integer" else "string"


def tool_signature(name: str) -> str:
    """The ``search(query: string, k: integer = 5)``-style signature of a tool."""
    tool = get_tool(name)
    properties = tool_parameters_schema(name)["properties"]
    parts = []
    for field_name, field in tool.args.model_fields.items():
        kind = _kind(properties[field_name])
        if field.is_required():
            parts.append(f"{field_name}: {kind}")
        elif field.default_factory is not None:
            parts.append(f"{field_name}: {kind} = []")
        else:
            parts.append(f"{field_name}: {kind} = {json.dumps(field.default)}")
    return f"{name}({', '.join(parts)})"


def describe_tools(
    names: Iterable[str] | None = None, *, max_calls: int = 1, search_r1_tags: bool = True
) -> str:
    """The text listing the tools and the accepted call formats, for the first observation.

    Args:
        names: The tools to list (default: all), in listing order.
        max_calls: How many calls the env runs per turn (as given to ``parse_action``).
        search_r1_tags: Also mention the shorthand tags (``<search>``, ``<answer>``, ...).

    Returns:
        Plain text, identical for identical arguments (and registry).
    """
    selected = select_tools(names)
    lines = ["Tools:"]
    for tool in selected:
        lines.append(f"- {tool_signature(tool.name)}: {tool.description}")
    lines.append("")
    per_turn = "one tool" if max_calls == 1 else f"at most {max_calls} tools"
    lines.append(
        f"Call {per_turn} per turn, as JSON inside <tool_call></tool_call> tags, "
        "arguments as a JSON object:"
    )
    for tool in selected:
        lines.append(f"  {example_call(tool.name)}")
    lines.append(
        'A bare JSON object {"name": ..., "arguments": {...}} (alone, or in a ```json block) '
        "is also accepted."
    )
    if search_r1_tags:
        # Search-R1's own tags first, then the others, each in listing order.
        tagged = sorted(
            (t for t in selected if t.tag is not None),
            key=lambda t: not (t.tag is not None and t.tag.search_r1),
        )
        shown = [example for t in tagged if (example := tag_example(t)) is not None]
        if shown:
            lines.append("Shorthand tags (default arguments): " + " ".join(shown))
    for tool in selected:
        if tool.ends_episode:
            lines.append(f"The {tool.name} call ends the episode; calls after it are ignored.")
    return "\n".join(lines)
