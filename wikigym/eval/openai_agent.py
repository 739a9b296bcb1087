"""An agent driving any OpenAI-compatible chat endpoint (vLLM, llama.cpp, TGI, OpenAI, ...).

Each turn POSTs ``{URL}/chat/completions`` with the conversation, ``tools`` (the env's
OpenAI tools schema) and ``tool_choice: "auto"``; the first returned tool call becomes the
action ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` (the env runs one call per
step, so later calls of the same reply are dropped from the action and from the history);
a reply without tool calls is passed to the env as text (the env reports ``no_tool_call``
or parses tags in it). The observation that follows a tool call goes back as a ``tool``
message with that call's id, any other observation as a ``user`` message.

Standard library only (``urllib``). ``OPENAI_API_KEY``, when set, is sent as a bearer token.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any

from wikigym.envs.results import StepOutput
from wikigym.errors import EvalError
from wikigym.tasks.taskset import Task
from wikigym.tools import openai_tools_schema

_RETRY_STATUS = frozenset({429, 500, 502, 503, 504})


class OpenAIAgent:
    """Chat-completions agent with native tool calls.

    Args:
        base_url: The API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is
            appended).
        model: The model name the server expects.
        seed: Sent as ``seed`` (servers that support it sample reproducibly).
        temperature: Sampling temperature (0: greedy where supported).
        max_tokens: Generation budget per turn.
        timeout_s: Per-request timeout.
        retries: Extra attempts on connection errors and 429/5xx replies.
    """

    privileged = False

    def __init__(
        self,
        base_url: str,
        *,
        model: str = "default",
        seed: int = 0,
        temperature: float = 0.0,
        max_tokens: int = 512,
        timeout_s: float = 120.0,
        retries: int = 2,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise EvalError(
                f"openai agent URL must start with http:// or https://, got {base_url!r} "
                "(e.g. openai:http://127.0.0.1:8000/v1)"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.retries = retries
        self.name = f"openai:{base_url}"
        self._tools = openai_tools_schema()
        self._messages: list[dict[str, Any]] = []
        self._pending_call_id: str | None = None
        self._turn = 0

    def reset(self, task_prompt: str, task: Task | None) -> None:
        self._messages = [{"role": "user", "content": task_prompt}]
        self._pending_call_id = None
        self._turn = 0

    def act(self, observation: str, outputs: Sequence[StepOutput] = ()) -> str:
        if self._turn > 0:  # the first observation is the prompt, already in the messages
            if self._pending_call_id is not None:
                self._messages.append(
                    {"role": "tool", "tool_call_id": self._pending_call_id, "content": observation}
                )
            else:
                self._messages.append({"role": "user", "content": observation})
        self._turn += 1
        message = self._complete()
        calls = message.get("tool_calls") or []
        content = message.get("content") or ""
        if not calls:
            self._pending_call_id = None
            self._messages.append({"role": "assistant", "content": content})
            return content
        call = calls[0]
        function = call.get("function") or {}
        name = function.get("name", "")
        raw_args = function.get("arguments", "{}")
        call_id = call.get("id") or f"call_{self._turn}"
        self._pending_call_id = call_id
        self._messages.append(
            {
                "role": "assistant",
                "content": content or None,
                "tool_calls": [
                    {
                        "id": call_id,
                        "type": "function",
                        "function": {"name": name, "arguments": raw_args},
                    }
                ],
            }
        )
        return _as_action(name, raw_args)

    def _complete(self) -> dict[str, Any]:
        """POST the conversation; the reply's first choice's message."""
        body = {
            "model": self.model,
            "messages": self._messages,
            "tools": self._tools,
            "tool_choice": "auto",
            "temperature": self.temperature,
            "seed": self.seed,
            "max_tokens": self.max_tokens,
        }
        data = json.dumps(body, ensure_ascii=False).encode("utf-8")
        headers = {"Content-Type": "application/json"}
        if key := os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {key}"
        for attempt in range(self.retries + 1):
            request = urllib.request.Request(self.url, data=data, headers=headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    payload = response.read()
                break
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:300].decode("utf-8", errors="replace")
                if exc.code in _RETRY_STATUS and attempt < self.retries:
                    time.sleep(0.5 * (attempt + 1))
                    continue
                raise EvalError(
                    f"{self.url} answered HTTP {exc.code}: {detail or exc.reason}; check the "
                    "URL, the --model name and the server log"
                ) from exc
            except (urllib.error.URLError, TimeoutError, ConnectionError) as exc:
                if attempt < self.retries:
                    time.sleep(0.5 * (attempt + 1))
                    continue
                reason = getattr(exc, "reason", exc)
                raise EvalError(
                    f"cannot reach {self.url} ({reason}) after {self.retries + 1} attempts; is "
                    f"the server running? (timeout {self.timeout_s:g} s, see --timeout)"
                ) from exc
        try:
            reply = json.loads(payload)
            message = reply["choices"][0]["message"]
        except (json.JSONDecodeError, KeyError, IndexError, TypeError) as exc:
            raise EvalError(
                f"{self.url} returned no chat completion (expected JSON with "
                f"choices[0].message), got: {payload[:200]!r}"
            ) from exc
        if not isinstance(message, dict):
            raise EvalError(f"{self.url}: choices[0].message is not an object: {message!r}")
        return message


def _as_action(name: str, raw_args: Any) -> str:
    """The ``<tool_call>`` text of a returned call; unparsable arguments stay raw for the env."""
    if isinstance(raw_args, str):
        try:
            args = json.loads(raw_args) if raw_args.strip() else {}
        except json.JSONDecodeError:
            # Let the env's parser report it (parse_error) as it would for a model's text.
            return f'<tool_call>{{"name": {json.dumps(name)}, "arguments": {raw_args}}}</tool_call>'
    else:
        args = raw_args
    payload = json.dumps({"name": name, "arguments": args}, ensure_ascii=False)
    return f"<tool_call>{payload}</tool_call>"
