"""The tool registry: adding a tool is one module, and every consumer sees it.

A throwaway tool module is written to a temporary folder that joins the package's search
path (where a module of ``wikigym/tools/`` lives), and the registry finds it: the env's first
observation lists it and runs it, the OpenAI schema exports it, TRL's adapter has its method,
the SFT export's tool schema holds it, and a registered id's first observation does not move.
"""

from __future__ import annotations

import json
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import gymnasium as gym
import pytest

import wikigym.tools
from wikigym.tools import (
    ToolBox,
    all_tools,
    call_tool,
    describe_tools,
    discover,
    format_tool_call,
    get_tool,
    openai_tools_schema,
    tool_names,
    unregister_tool,
)
from wikigym.tools.base import Tool, ToolArgs, ToolResult

ECHO = textwrap.dedent(
    '''
    """``echo(text, times)``: the text said back (a throwaway tool for the registry's test)."""

    from dataclasses import dataclass
    from typing import Annotated

    from pydantic import Field

    from wikigym.tools.base import Tool, ToolArgs, ToolBox, ToolResult


    class EchoArgs(ToolArgs):
        text: str = Field(description="What to say back.")
        times: Annotated[int, Field(ge=1, le=3)] = Field(default=1, description="How often.")


    @dataclass(frozen=True)
    class EchoOutput:
        text: str

        def render(self) -> str:
            return f"echo: {self.text}"


    def run(box: ToolBox, args: EchoArgs, seed: int) -> ToolResult:
        return ToolResult(EchoOutput(" ".join([args.text] * args.times)))


    TOOL = Tool(
        name="echo",
        description="Say the text back.",
        args=EchoArgs,
        example={"text": "hello"},
        run=run,
        order=60,
    )
    '''
)
WITH_ECHO = ["search", "open", "echo", "answer"]


@pytest.fixture()
def echo_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Tool]:
    """The ``echo`` module dropped beside the package's tools, found by the registry."""
    folder = tmp_path / "more_tools"
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO, encoding="utf-8")
    assert "echo" not in tool_names()  # the package's own tools are found first
    monkeypatch.setattr(wikigym.tools, "__path__", [*wikigym.tools.__path__, str(folder)])
    assert "echo" not in tool_names()
    discover()
    try:
        yield get_tool("echo")
    finally:
        unregister_tool("echo")
        sys.modules.pop("wikigym.tools.echo", None)
        from wikigym.tools import registry

        registry._SCANNED.discard("echo")  # the next discover() looks again


def test_a_new_tool_module_reaches_every_consumer(echo_module: Tool, tmp_path: Path) -> None:
    pytest.importorskip("trl")
    from transformers.utils import get_json_schema

    from wikigym.tools.methods import trl_schema
    from wikigym.trainers.adapter import EnvSpec, make_environment_factory
    from wikigym.trainers.sft import export_sft

    tools = all_tools()
    assert echo_module in tools and list(tools) == sorted(tools, key=lambda t: (t.order, t.name))
    # The env: described in the first observation, run by a step.
    env = gym.make("WikiSearch-v1", tools=WITH_ECHO, python="off")
    obs, _ = env.reset(seed=0)
    assert "- echo(text: string, times: integer = 1): Say the text back." in obs
    assert format_tool_call("echo", {"text": "hello"}) in obs
    obs, reward, terminated, _, info = env.step(
        format_tool_call("echo", {"text": "hi", "times": 2})
    )
    assert obs == "echo: hi hi" and info["tools"] == ["echo"] and info["tool_error"] is None
    assert not terminated and reward == 0.0
    bad = env.step(format_tool_call("echo", {"text": "hi", "times": 9}))[4]
    assert bad["tool_error"] == "invalid_arguments"
    # The OpenAI schema.
    (exported,) = [t for t in openai_tools_schema() if t["function"]["name"] == "echo"]
    assert [t["function"]["name"] for t in openai_tools_schema()] == list(tool_names())
    assert exported["function"]["description"] == "Say the text back."
    assert exported["function"]["parameters"]["required"] == ["text"]
    # TRL's environment_factory: a method with the argument model's signature, one env step.
    spec = EnvSpec("WikiSearch-v1", kwargs={"tools": WITH_ECHO, "python": "off"})
    tool_env = make_environment_factory(spec)()
    assert get_json_schema(tool_env.echo) == trl_schema("echo")
    tool_env.reset(seed=0)
    assert tool_env.echo(text="hey") == "echo: hey"
    # The SFT export: every chat carries the env's tool schema, echo included.
    path = export_sft(spec, tmp_path / "sft", limit=2)
    chat = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert [t["function"]["name"] for t in json.loads(chat["tools"])] == WITH_ECHO
    # And a client serving the tools itself (MCP) runs it by name.
    assert call_tool(ToolBox(env.unwrapped.snapshot), "echo", {"text": "x"}).text == "echo: x"


def test_registering_a_tool_does_not_move_a_registered_id(tmp_path: Path) -> None:
    """WikiSearch-v1 pins its tools: its first observation is the same with echo registered."""
    before = gym.make("WikiSearch-v1").reset(seed=3)[0]
    folder = tmp_path / "t"
    folder.mkdir()
    (folder / "echo.py").write_text(ECHO, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(wikigym.tools, "__path__", [*wikigym.tools.__path__, str(folder)])
        discover()
        try:
            assert "echo" in tool_names() and "echo" in describe_tools()
            assert gym.make("WikiSearch-v1").reset(seed=3)[0] == before
        finally:
            unregister_tool("echo")
            sys.modules.pop("wikigym.tools.echo", None)
            from wikigym.tools import registry

            registry._SCANNED.discard("echo")


def test_a_tool_is_checked_when_defined() -> None:
    class Args(ToolArgs):
        text: str

    def run(box: ToolBox, args: Args, seed: int) -> ToolResult:
        raise AssertionError("never run")

    with pytest.raises(ValueError, match="lowercase"):
        Tool(name="Echo", description="x", args=Args, example={"text": "a"}, run=run)
    with pytest.raises(ValueError, match="validation error"):
        Tool(name="echo", description="x", args=Args, example={"txt": "a"}, run=run)
    from wikigym.tools.base import Tag

    with pytest.raises(ValueError, match="not an argument"):
        Tool(name="echo", description="x", args=Args, example={"text": "a"}, run=run, tag=Tag("q"))
    with pytest.raises(ValueError, match="call marker"):
        Tool(
            name="think",
            description="x",
            args=Args,
            example={"text": "a"},
            run=run,
            tag=Tag("text"),
        )
    from wikigym.tools import register_tool

    clash = Tool(name="search", description="x", args=Args, example={"text": "a"}, run=run)
    with pytest.raises(ValueError, match="registered already"):
        register_tool(clash)


def test_the_registry_is_the_only_tool_list() -> None:
    """No module outside wikigym/tools names the built-in tools as a list: every list, schema and
    description is derived from the registry (a mechanical claim of docs/architecture.md). The
    one exception is an env id's pinned tool list (envs/registration.py): an id must not grow
    when a tool is added."""
    import ast

    package = Path(wikigym.tools.__file__).parents[1]
    names = set(tool_names())
    found = []
    for path in sorted(package.rglob("*.py")):
        if path.parent.name == "tools" or path.name == "registration.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            # A literal list, set or dict, or an enum, that holds three tool names or more.
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                items = node.elts
            elif isinstance(node, ast.Dict):
                items = [k for k in node.keys if k is not None]
            elif isinstance(node, ast.ClassDef):
                items = [a.value for a in node.body if isinstance(a, ast.Assign)]
            else:
                continue
            strings = {e.value for e in items if isinstance(e, ast.Constant)}
            if len(strings & names) >= 3:
                found.append(f"{path.relative_to(package)}:{node.lineno}")
    assert not found, f"tool lists outside the registry: {found}"
    assert [t.name for t in all_tools()] == list(tool_names())
