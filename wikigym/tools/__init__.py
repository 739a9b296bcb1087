"""wikigym.tools: the typed tools an agent calls, one module per tool, one registry.

A tool is a module of this package with ``TOOL = Tool(...)`` (see :mod:`wikigym.tools.base`):
``search``, ``open``, ``find``, ``python`` and ``answer`` here. The registry
(:mod:`wikigym.tools.registry`) finds them; the env, the action parser, the OpenAI schema,
TRL's ``environment_factory`` methods, the SFT export, eval's agents and the server derive
their tool lists, descriptions and schemas from it.

For a client that serves the tools itself (an MCP server, a custom agent loop)::

    from wikigym.tools import ToolBox, all_tools, call_tool

    for tool in all_tools():  # name, description, args (pydantic model), example
        schema = tool.args.model_json_schema()  # or openai_tools_schema()
    result = call_tool(ToolBox(snapshot), "search", {"query": "Paris"})
    result.output  # structured (SearchOutput, ...); result.text: what the agent reads

Inside an episode, call the tools through the env (``env.step(format_tool_call(...))``) so that
rewards, citations seen and error counts are kept.
"""

from __future__ import annotations

from wikigym.tools.base import (
    AnswerOutput,
    Output,
    Tag,
    Tool,
    ToolArgs,
    ToolBox,
    ToolConfig,
    ToolErrorOutput,
    ToolResult,
    failure,
)
from wikigym.tools.calls import call_tool, invalid_arguments_message, run_tool
from wikigym.tools.registry import (
    all_tools,
    discover,
    get_tool,
    register_tool,
    select_tools,
    tool_names,
    unregister_tool,
)
from wikigym.tools.schema import (
    describe_tools,
    example_call,
    format_tool_call,
    openai_tools_schema,
    tool_parameters_schema,
    tool_signature,
)

__all__ = [
    "AnswerOutput",
    "Output",
    "Tag",
    "Tool",
    "ToolArgs",
    "ToolBox",
    "ToolConfig",
    "ToolErrorOutput",
    "ToolResult",
    "all_tools",
    "call_tool",
    "describe_tools",
    "discover",
    "example_call",
    "failure",
    "format_tool_call",
    "get_tool",
    "invalid_arguments_message",
    "openai_tools_schema",
    "register_tool",
    "run_tool",
    "select_tools",
    "tool_names",
    "tool_parameters_schema",
    "tool_signature",
    "unregister_tool",
]
