"""The ``openai:URL`` agent against hostile or broken servers (issue 33): no key to another
origin, a capped reply, one deadline per request, and one typed line for a malformed reply.

Real HTTP servers on 127.0.0.1; every wait is bounded."""

from __future__ import annotations

import asyncio
import contextlib
import gzip
import json
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from wikigym.cli import main as cli
from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import EvalError
from wikigym.eval.openai_agent import OpenAIAgent
from wikigym.tasks.one_hop import one_hop_tasks

pytestmark = pytest.mark.timeout(120)

KEY = "sk-test-canary-7c1e"
ANSWER = {
    "choices": [
        {
            "message": {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "c0",
                        "type": "function",
                        "function": {"name": "answer", "arguments": '{"text": "x"}'},
                    }
                ],
            }
        }
    ]
}
Reply = Callable[[BaseHTTPRequestHandler], None]


class Server:
    """A server on 127.0.0.1 whose POST handler is ``reply``; records each request's path and
    headers."""

    def __init__(self, reply: Reply) -> None:
        self.reply = reply
        self.seen: list[tuple[str, dict[str, str]]] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("Content-Length") or 0))
                server.seen.append((self.path, dict(self.headers)))
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    server.reply(self)  # the client may give up, as it should

            do_GET = do_POST

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        self.origin = f"http://127.0.0.1:{self.httpd.server_address[1]}"

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


@pytest.fixture()
def serve() -> Iterator[Callable[[Reply], Server]]:
    servers: list[Server] = []

    def start(reply: Reply) -> Server:
        servers.append(Server(reply))
        return servers[-1]

    yield start
    for server in servers:
        server.close()


def send(handler: BaseHTTPRequestHandler, body: bytes, status: int = 200, **headers: str) -> None:
    handler.send_response(status)
    fields = {name.replace("_", "-"): value for name, value in headers.items()}
    fields.setdefault("Content-Type", "application/json")
    fields.setdefault("Content-Length", str(len(body)))
    for name, value in fields.items():
        handler.send_header(name, value)
    handler.end_headers()
    handler.wfile.write(body)


def answer(handler: BaseHTTPRequestHandler) -> None:
    send(handler, json.dumps(ANSWER).encode())


def act(url: str, **kwargs: Any) -> str:
    agent = OpenAIAgent(url, retries=0, **kwargs)
    agent.reset("Question: x?", None)
    return agent.act("Question: x?")


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_the_key_never_goes_to_another_origin(
    serve: Callable[[Reply], Server], monkeypatch: pytest.MonkeyPatch, status: int
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    other = serve(answer)
    home = serve(
        lambda h: (
            send(h, b"", status, Location=f"{other.origin}/v1/chat/completions")
            if h.path.startswith("/v1/")
            else answer(h)
        )
    )
    with pytest.raises(EvalError, match="another origin") as err:
        act(f"{home.origin}/v1")
    assert "\n" not in str(err.value) and other.origin in str(err.value)
    assert other.seen == []  # nothing at all reached the other origin
    assert home.seen[0][1]["Authorization"] == f"Bearer {KEY}"


def test_a_redirect_within_the_origin_is_followed(
    serve: Callable[[Reply], Server], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    home = serve(
        lambda h: (
            send(h, b"", 307, Location="/v2/chat/completions")
            if h.path.startswith("/v1/")
            else answer(h)
        )
    )
    assert act(f"{home.origin}/v1").startswith('<tool_call>{"name": "answer"')
    assert [path for path, _ in home.seen] == ["/v1/chat/completions", "/v2/chat/completions"]
    assert home.seen[1][1]["Authorization"] == f"Bearer {KEY}"


def test_a_huge_reply_is_refused_without_reading_it(serve: Callable[[Reply], Server]) -> None:
    declared = serve(lambda h: send(h, b"{}", Content_Length=str(512 * 1024 * 1024)))
    with pytest.raises(EvalError, match=r"declares 536,870,912 bytes"):
        act(f"{declared.origin}/v1")

    sent: list[int] = []

    def endless(handler: BaseHTTPRequestHandler) -> None:  # no length: read until close
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Connection", "close")
        handler.end_headers()
        chunk = b'{"choices": [' + b" " * 65_536
        for _ in range(8_192):  # 512 MiB if nobody stops it
            handler.wfile.write(chunk)
            sent.append(len(chunk))

    stream = serve(endless)
    with pytest.raises(EvalError, match=r"sent more than the cap of 1,000,000 bytes"):
        act(f"{stream.origin}/v1", max_reply_bytes=1_000_000)
    time.sleep(0.2)
    assert sum(sent) < 64 * 1024 * 1024  # the client hung up long before the end


def test_a_compressed_reply_is_refused(serve: Callable[[Reply], Server]) -> None:
    bomb = gzip.compress(b" " * 10_000_000)  # 10 MB in ~10 KB
    server = serve(lambda h: send(h, bomb, Content_Encoding="gzip"))
    with pytest.raises(EvalError, match="'gzip'-encoded reply"):
        act(f"{server.origin}/v1")
    assert server.seen[0][1]["Accept-Encoding"] == "identity"


def test_a_trickle_is_cut_at_the_deadline(serve: Callable[[Reply], Server]) -> None:
    def trickle(handler: BaseHTTPRequestHandler) -> None:
        handler.send_response(200)
        handler.send_header("Content-Type", "application/json")
        handler.send_header("Content-Length", "100")
        handler.end_headers()
        for _ in range(100):  # 1 byte each 0.2 s: every read is quick, the whole is 20 s
            handler.wfile.write(b" ")
            handler.wfile.flush()
            time.sleep(0.2)

    server = serve(trickle)
    start = time.monotonic()
    with pytest.raises(EvalError, match=r"no complete reply within 1 s"):
        act(f"{server.origin}/v1", timeout_s=1.0)
    assert time.monotonic() - start < 5  # one deadline, not one per read


@pytest.mark.parametrize(
    "body",
    [
        b"not json",
        b"\xff\xfe",
        b"[1, 2]",
        b"{}",
        b'{"choices": []}',
        b'{"choices": {"message": {}}}',
        b'{"choices": [{"message": "hi"}]}',
        b'{"choices": [{"message": {"content": 5}}]}',
        b'{"choices": [{"message": {"tool_calls": "abc"}}]}',
        b'{"choices": [{"message": {"tool_calls": ["abc"]}}]}',
        b'{"choices": [{"message": {"tool_calls": [{"function": "f"}]}}]}',
        b'{"choices": [{"message": {"tool_calls": [{"function": {"name": 5}}]}}]}',
        b'{"choices": [{"message": {"tool_calls": [{"function": {"arguments": 5}}]}}]}',
        b'{"choices": [{"message": {}}], "x": ' + b"[" * 200_000 + b"]" * 200_000 + b"}",
        b'{"choices": [{"message": {"content": NaN}}]}',
    ],
    ids=lambda body: body[:48].decode("latin-1"),
)
def test_a_malformed_reply_is_one_typed_line(serve: Callable[[Reply], Server], body: bytes) -> None:
    server = serve(lambda h: send(h, body))
    with pytest.raises(EvalError, match="returned no chat completion") as err:
        act(f"{server.origin}/v1")
    assert "\n" not in str(err.value)


def test_the_agent_works_inside_a_running_event_loop(serve: Callable[[Reply], Server]) -> None:
    """An async caller (a notebook, an async trainer) may call the synchronous agent."""
    server = serve(answer)

    async def caller() -> str:
        return act(f"{server.origin}/v1")

    assert asyncio.run(caller()).startswith("<tool_call>")


def test_eval_command_reports_a_malformed_reply_in_one_line(
    serve: Callable[[Reply], Server],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    build_world_snapshot(300, 1, tmp_path / "snap", progress=False)
    tasks = one_hop_tasks(Snapshot.open(tmp_path / "snap"), n=2, seed=0)
    tasks.save(tmp_path / "tasks.jsonl")
    server = serve(lambda h: send(h, b'{"choices": [{"message": {"tool_calls": "abc"}}]}'))
    code = cli(
        [
            "eval",
            "--agent",
            f"openai:{server.origin}/v1",
            "--tasks",
            str(tmp_path / "tasks.jsonl"),
            "--corpus",
            str(tmp_path / "snap"),
            "--report",
            str(tmp_path / "report"),
            "--quiet",
        ]
    )
    err = capsys.readouterr().err
    assert code == 1 and len(err.strip().splitlines()) == 1, err
    assert "returned no chat completion" in err and "Traceback" not in err
