"""Model-driven eval agents: an OpenAI-compatible endpoint (a local scripted server) and a
local transformers model (the tiny random-weight model)."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any, ClassVar

import pytest

from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.replay import replay
from wikigym.errors import EvalError
from wikigym.eval.factory import make_agent
from wikigym.eval.openai_agent import OpenAIAgent
from wikigym.eval.report import write_report
from wikigym.eval.runner import run_eval
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tools import openai_tools_schema


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    root = tmp_path_factory.mktemp("evalmodels")
    build_world_snapshot(300, 1, root / "snap", progress=False)
    tasks = one_hop_tasks(Snapshot.open(root / "snap"), n=4, seed=0)
    return root / "snap", tasks.save(root / "tasks.jsonl")


def _tool_call(i: int, name: str, arguments: str) -> dict[str, Any]:
    return {"id": f"c{i}", "type": "function", "function": {"name": name, "arguments": arguments}}


class ScriptedChat(BaseHTTPRequestHandler):
    """Replies by turn: a search, a call of an unknown tool, plain text, bad JSON, an answer."""

    requests: ClassVar[list[dict[str, Any]]] = []
    fail_with: ClassVar[int | None] = None

    def log_message(self, *args: object) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        type(self).requests.append({"path": self.path, "body": body})
        if type(self).fail_with is not None:
            self.send_response(type(self).fail_with)
            self.end_headers()
            self.wfile.write(b'{"error": "model not loaded"}')
            return
        turn = sum(m["role"] == "assistant" for m in body["messages"])
        question = body["messages"][0]["content"].rsplit("Question:", 1)[1].strip()
        script: list[dict[str, Any]] = [
            {"tool_calls": [_tool_call(0, "search", json.dumps({"query": question, "k": 3}))]},
            {"tool_calls": [_tool_call(1, "teleport", "{}")]},
            {"content": "Let me think about it."},
            {"tool_calls": [_tool_call(3, "open", '{"page": ')]},
            {"tool_calls": [_tool_call(4, "answer", '{"text": "nobody", "citations": ["p999999"]}')]},
        ]  # fmt: skip
        message = {"role": "assistant", "content": None, **script[min(turn, len(script) - 1)]}
        data = json.dumps({"choices": [{"index": 0, "message": message}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)


@pytest.fixture()
def server() -> Iterator[str]:
    ScriptedChat.requests = []
    ScriptedChat.fail_with = None
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), ScriptedChat)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    finally:
        httpd.shutdown()
        httpd.server_close()
        thread.join()


def test_openai_agent_against_local_server(
    world: tuple[Path, Path], server: str, tmp_path: Path
) -> None:
    snap, tasks = world
    agent = make_agent(f"openai:{server}", model="tiny", seed=3)
    run = run_eval(agent, tasks, tmp_path, agent_name="openai", corpus=snap, max_steps=8)
    summary = write_report(run, tmp_path)
    overall = summary["overall"]
    assert overall["episodes"] == 4 and overall["success_rate"] == 0.0
    assert overall["mean_steps"] == 5.0 and overall["truncation_rate"] == 0.0
    # Per episode: unknown tool, no tool call, bad JSON (3 of 5 steps); a citation never seen.
    assert overall["tool_error_rate"] == 0.6
    assert overall["tool_errors"] == {"no_tool_call": 4, "parse_error": 4, "unknown_tool": 4}
    assert overall["hallucinations"] == {
        "unknown_tool": 4, "invalid_arguments": 0, "citation_nonexistent": 4, "citation_unseen": 0
    }  # fmt: skip
    requests = ScriptedChat.requests
    assert len(requests) == 20 and all(r["path"] == "/v1/chat/completions" for r in requests)
    first = requests[0]["body"]
    assert first["tools"] == openai_tools_schema() and first["tool_choice"] == "auto"
    assert first["model"] == "tiny" and first["seed"] == 3
    assert [m["role"] for m in first["messages"]] == ["user"]
    assert "Question:" in first["messages"][0]["content"]
    last = requests[4]["body"]["messages"]
    assert [m["role"] for m in last] == [
        "user", "assistant", "tool", "assistant", "tool", "assistant", "user", "assistant", "tool"
    ]  # fmt: skip
    assert last[2]["tool_call_id"] == "c0" and "search(" in last[2]["content"]
    assert last[6]["content"].startswith("error (no_tool_call)")
    for record in run.records:
        steps, divergence = replay(tmp_path / record.trajectory)
        assert divergence is None and steps == 5


def test_openai_agent_errors(server: str) -> None:
    ScriptedChat.fail_with = 404
    agent = OpenAIAgent(server, retries=0)
    agent.reset("Question: x?", None)
    with pytest.raises(EvalError, match=r"answered HTTP 404: .*model not loaded"):
        agent.act("Question: x?")
    ScriptedChat.fail_with = 503
    agent = OpenAIAgent(server, retries=1)
    agent.reset("Question: x?", None)
    with pytest.raises(EvalError, match="HTTP 503"):
        agent.act("Question: x?")
    assert len(ScriptedChat.requests) == 3  # 404 once, 503 retried once
    agent = OpenAIAgent("http://127.0.0.1:9/v1", retries=0, timeout_s=2)
    agent.reset("Question: x?", None)
    with pytest.raises(
        EvalError, match=re.escape("cannot reach http://127.0.0.1:9/v1/chat/completions")
    ):
        agent.act("Question: x?")
    with pytest.raises(EvalError, match="must start with http"):
        OpenAIAgent("127.0.0.1:8000")


@pytest.mark.slow
def test_hf_agent_runs_the_tiny_model(
    world: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from wikigym.trainers.tiny import build_tiny_model

    monkeypatch.setenv("WIKIGYM_CACHE", str(tmp_path / "cache"))
    model = build_tiny_model(tmp_path / "tiny")
    snap, tasks = world
    agent = make_agent(f"hf:{model}", max_new_tokens=8)
    run = run_eval(agent, tasks, tmp_path / "rep", agent_name="hf", corpus=snap, max_steps=2)
    summary = write_report(run, tmp_path / "rep")
    assert summary["overall"]["episodes"] == 4
    assert summary["overall"]["mean_steps"] == 2.0  # random weights never answer
    assert (tmp_path / "rep" / "report.md").is_file()
    for record in run.records:
        assert replay(tmp_path / "rep" / record.trajectory)[1] is None
    with pytest.raises(EvalError, match="not a model directory"):
        make_agent(f"hf:{tmp_path / 'missing'}")
