"""The env's tools over MCP, driven by the official ``mcp`` client (1.x in OpenEnv's venv, 2.x
in the main one) over stdio (``wikigym mcp``) and streamable HTTP (``/mcp`` on ``wikigym
serve``), and by OpenEnv's ``MCPToolClient``: the tools listed from the one registry, an MCP
episode equal to the in-process one, a session's episode kept across calls and apart from
another session's."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from integration_support import need

need("mcp")
need("uvicorn")

import anyio  # noqa: E402
from mcp_support import (  # noqa: E402
    as_step,
    http_session,
    is_error,
    mcp_major,
    play,
    stdio_session,
)

from wikigym.envs.recipe import env_spec, make_env  # noqa: E402
from wikigym.integrations.serve import ServeConfig  # noqa: E402
from wikigym.integrations.serve.protocol import jsonable  # noqa: E402
from wikigym.integrations.serve.server import serve_in_thread  # noqa: E402
from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402
from wikigym.tools import format_tool_call, get_tool, tool_parameters_schema  # noqa: E402

pytestmark = pytest.mark.timeout(300)


@pytest.fixture(scope="module")
def paths() -> tuple[str, str]:
    snapshot, _ = default_resources(progress=False)
    return str(snapshot.path), str(default_tasks_path())


@pytest.fixture(scope="module")
def tasks():
    return list(default_resources(progress=False)[1])


def in_process(paths, task_id: str, seed: int, calls: list[tuple[str, dict[str, Any]]]):
    corpus, tasks = paths
    env = make_env(env_spec("WikiSearch-v1", corpus=corpus, tasks=tasks, python="off"))
    obs, info = env.reset(seed=seed, options={"task_id": task_id})
    out = [(obs, jsonable(info), None, False)]
    for name, arguments in calls:
        obs, reward, term, trunc, info = env.step(format_tool_call(name, arguments))
        out.append((obs, jsonable(info), float(reward), bool(term or trunc)))
        if term or trunc:
            break
    return out


def calls_of(task) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, dict(c.arguments)) for c in task.oracle]


def check_tools(listed: Any) -> None:
    """``reset`` and the served tools, each with its registry description and schema."""
    names = [t.name for t in listed.tools]
    assert names == ["reset", "search", "open", "find", "answer"]  # python off
    for tool in listed.tools[1:]:
        name = tool.name
        schema = tool.inputSchema if hasattr(tool, "inputSchema") else tool.input_schema
        assert tool.description == get_tool(name).description
        assert schema == tool_parameters_schema(name)


def test_stdio_lists_and_calls_the_tools(paths, tasks) -> None:
    corpus, task_file = paths
    task = tasks[0]

    async def main():
        args = ("--corpus", corpus, "--tasks", task_file, "--python", "off")
        async with stdio_session(*args) as session:
            check_tools(await session.list_tools())
            before = await session.call_tool("search", {"query": "city"})
            assert is_error(before) and "reset" in before.content[0].text  # no episode yet
            got = await play(session, {"seed": 3, "task_id": task.task_id}, calls_of(task))
            bad = await session.call_tool("search", {"query": "city", "k": "five"})
            assert is_error(bad)  # the episode ended: refused, nothing stepped
            again = await play(session, {"seed": 4, "task_id": task.task_id}, calls_of(task)[:1])
            return got, again

    got, again = anyio.run(main)
    assert got == in_process(paths, task.task_id, 3, calls_of(task))
    assert got[-1][2] == 1.0 and got[-1][3]  # the oracle's answer: reward 1, done
    assert again == in_process(paths, task.task_id, 4, calls_of(task)[:1])


def test_http_sessions_keep_their_own_episodes(paths, tasks) -> None:
    config = ServeConfig(
        corpus=paths[0],
        tasks=paths[1],
        env_kwargs={"WikiSearch-v1": {"python": "off"}},
        max_sessions=4,
    )
    a, b = tasks[0], tasks[1]
    with serve_in_thread(config) as (url, app):

        async def main():
            async with http_session(f"{url}/mcp") as one, http_session(f"{url}/mcp") as two:
                check_tools(await one.list_tools())
                await one.call_tool("reset", {"seed": 1, "task_id": a.task_id})
                await two.call_tool("reset", {"seed": 2, "task_id": b.task_id})
                assert app.state.pool.held == 2  # one server session per MCP session
                # interleaved: each session steps its own episode
                out_a, out_b = [], []
                for i in range(max(len(a.oracle), len(b.oracle))):
                    if i < len(a.oracle):
                        out_a.append(await one.call_tool(*calls_of(a)[i]))
                    if i < len(b.oracle):
                        out_b.append(await two.call_tool(*calls_of(b)[i]))
                # an invalid call is a step with the env's own error code, as in process
                return out_a, out_b

        out_a, out_b = anyio.run(main)

        assert [as_step(r) for r in out_a] == in_process(paths, a.task_id, 1, calls_of(a))[1:]
        assert [as_step(r) for r in out_b] == in_process(paths, b.task_id, 2, calls_of(b))[1:]
        for _ in range(100):
            if app.state.pool.held == 0:
                break
            anyio.run(anyio.sleep, 0.05)
        assert app.state.pool.held == 0  # a closed MCP session frees its slot


def test_invalid_arguments_are_a_step_with_the_envs_error(paths, tasks) -> None:
    config = ServeConfig(
        corpus=paths[0], tasks=paths[1], env_kwargs={"WikiSearch-v1": {"python": "off"}}
    )
    task = tasks[0]
    with serve_in_thread(config) as (url, _):

        async def main():
            async with http_session(f"{url}/mcp") as session:
                return await play(
                    session,
                    {"seed": 0, "task_id": task.task_id},
                    [("search", {"query": "x", "k": 500}), ("nonsense", {})],
                )

        got = anyio.run(main)
    want = in_process(paths, task.task_id, 0, [("search", {"query": "x", "k": 500})])
    assert got[:2] == want
    assert got[1][1]["tool_error"] == "invalid_arguments"
    assert len(got) == 3 and got[2][0].startswith("unknown tool")  # refused, not stepped


def test_mcp2_auto_client_falls_back_to_a_session(paths, tasks) -> None:
    """mcp 2.x's ``Client`` probes the sessionless 2026 protocol first; the server refuses it
    (an episode needs a session), and the client opens one with the handshake."""
    if mcp_major() < 2:
        pytest.skip("mcp 2.x's Client (auto mode); this venv has mcp 1.x")
    from mcp import Client

    config = ServeConfig(
        corpus=paths[0], tasks=paths[1], env_kwargs={"WikiSearch-v1": {"python": "off"}}
    )
    task = tasks[0]
    with serve_in_thread(config) as (url, _):

        async def main():
            async with Client(f"{url}/mcp") as client:
                await client.call_tool("reset", {"seed": 3, "task_id": task.task_id})
                name, arguments = calls_of(task)[0]
                return await client.call_tool(name, arguments)

        result = anyio.run(main)
    assert result.structured_content["info"]["step"] == 1  # the reset's episode, kept


def test_openenv_mcp_tool_client(paths, tasks) -> None:
    """OpenEnv's ``MCPToolClient``: tools over HTTP ``/mcp`` (its JSON-RPC dialect), reset and
    state over the WebSocket it attaches to the same session."""
    openenv = need("openenv")
    from openenv.core.mcp_client import MCPToolClient

    del openenv
    config = ServeConfig(
        corpus=paths[0], tasks=paths[1], env_kwargs={"WikiSearch-v1": {"python": "off"}}
    )
    task = tasks[0]
    calls = calls_of(task)
    with serve_in_thread(config) as (url, app):

        async def main():
            async with MCPToolClient(base_url=url) as env:
                tools = await env.list_tools()
                reset = await env.reset(seed=3, task_id=task.task_id)
                results = [await env.call_tool(name, **arguments) for name, arguments in calls]
                state = await env.state()
                held = app.state.pool.held
            return [t.name for t in tools], reset, results, state, held

        names, reset, results, state, held = asyncio.run(asyncio.wait_for(main(), 120))
        assert names == ["reset", "search", "open", "find", "answer"]
        want = in_process(paths, task.task_id, 3, calls)
        assert reset.observation.text == want[0][0]
        assert [(r["text"], r["info"], r["reward"], r["done"]) for r in results] == want[1:]
        assert state.step_count == len(calls) and held == 1
        assert app.state.pool.held == 0  # closed with the client


def test_mcp_command_mistakes_are_one_line(tmp_path) -> None:
    import os
    import subprocess
    import sys

    from mcp_support import ROOT

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, needle in [
        (["--corpus", str(tmp_path / "nope")], "nope"),
        (["--python", "x"], "python"),
    ]:
        p = subprocess.run(
            [sys.executable, "-m", "wikigym", "mcp", *args],
            capture_output=True, text=True, env=env, timeout=120, stdin=subprocess.DEVNULL,
        )  # fmt: skip
        lines = p.stderr.strip().splitlines()
        assert p.returncode in (1, 2) and len(lines) == 1 and needle in lines[0], p.stderr
