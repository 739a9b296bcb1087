"""A scripted OpenAI-compatible chat server on 127.0.0.1 for the adapter tests.

It answers ``POST /v1/chat/completions`` (streamed as server-sent events when the request
asks for ``stream``, else one JSON body) with the next reply of a script chosen from the
conversation: ``script(messages) -> str``. It records every request it served.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

Script = Callable[[list[dict[str, Any]]], str]


def _text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "".join(p.get("text", "") for p in content if isinstance(p, dict))
    return ""


class StubServer:
    """Serve ``script`` until :meth:`close`; ``base_url`` ends in ``/v1``."""

    def __init__(self, script: Script) -> None:
        self.script = script
        self.requests: list[dict[str, Any]] = []
        self.streamed = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # quiet
                return

            def do_GET(self) -> None:
                body = json.dumps({"object": "list", "data": [{"id": "stub", "object": "model"}]})
                self._send(200, body.encode(), "application/json")

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                request = json.loads(self.rfile.read(length) or b"{}")
                stub.requests.append(request)
                messages = [
                    {**m, "content": _text(m.get("content"))} for m in request.get("messages", [])
                ]
                reply = stub.script(messages)
                created = int(time.time())
                model = request.get("model", "stub")
                usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
                if request.get("stream"):
                    stub.streamed += 1
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Cache-Control", "no-cache")
                    self.end_headers()
                    base = {
                        "id": "chatcmpl-stub",
                        "object": "chat.completion.chunk",
                        "created": created,
                        "model": model,
                    }
                    chunks = [
                        {
                            **base,
                            "choices": [
                                {
                                    "index": 0,
                                    "delta": {"role": "assistant", "content": ""},
                                    "finish_reason": None,
                                }
                            ],
                        },
                        {
                            **base,
                            "choices": [
                                {"index": 0, "delta": {"content": reply}, "finish_reason": None}
                            ],
                        },
                        {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
                        {**base, "choices": [], "usage": usage},
                    ]
                    for chunk in chunks:
                        self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                        self.wfile.flush()
                    self.wfile.write(b"data: [DONE]\n\n")
                    self.wfile.flush()
                    return
                body = {
                    "id": "chatcmpl-stub",
                    "object": "chat.completion",
                    "created": created,
                    "model": model,
                    "choices": [
                        {
                            "index": 0,
                            "message": {"role": "assistant", "content": reply},
                            "finish_reason": "stop",
                        }
                    ],
                    "usage": usage,
                }
                self._send(200, json.dumps(body).encode(), "application/json")

            def _send(self, code: int, body: bytes, kind: str) -> None:
                self.send_response(code)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
