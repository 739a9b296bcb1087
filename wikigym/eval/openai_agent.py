"""An agent driving any OpenAI-compatible chat endpoint (vLLM, llama.cpp, TGI, OpenAI, ...).

Each turn POSTs ``{URL}/chat/completions`` with the conversation, ``tools`` (the env's
OpenAI tools schema) and ``tool_choice: "auto"``; the first returned tool call becomes the
action ``<tool_call>{"name": ..., "arguments": ...}</tool_call>`` (the env runs one call per
step, so later calls of the same reply are dropped from the action and from the history);
a reply without tool calls is passed to the env as text (the env reports ``no_tool_call``
or parses tags in it). The observation that follows a tool call goes back as a ``tool``
message with that call's id, any other observation as a ``user`` message.

``OPENAI_API_KEY``, when set, is sent as a bearer token, to the URL's origin only. The
server is not trusted: :mod:`wikigym.eval.bounded_http` bounds the exchange (no redirect to
another origin, a reply size cap, one deadline per request), and a reply that is not a chat
completion of the expected shape is an :class:`~wikigym.errors.EvalError` of one line.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from typing import Annotated, Any

import httpx
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from wikigym.envs.results import StepOutput
from wikigym.errors import EvalError
from wikigym.eval.bounded_http import DEFAULT_MAX_REPLY_BYTES, post_json
from wikigym.tasks.taskset import Task
from wikigym.tools import openai_tools_schema

# The part of a chat completion the agent reads; servers add fields, which are ignored.
_READ = ConfigDict(extra="ignore", frozen=True)


class _Function(BaseModel):
    model_config = _READ
    name: str = ""
    arguments: str | dict[str, Any] = "{}"


class _ToolCall(BaseModel):
    model_config = _READ
    id: str | None = None
    function: _Function = _Function()


class _Message(BaseModel):
    model_config = _READ
    content: str | None = None
    tool_calls: list[_ToolCall] | None = None


class _Choice(BaseModel):
    model_config = _READ
    message: _Message


class _Completion(BaseModel):
    model_config = _READ
    choices: Annotated[list[_Choice], Field(min_length=1)]


class OpenAIAgent:
    """Chat-completions agent with native tool calls.

    Args:
        base_url: The API root, e.g. ``http://127.0.0.1:8000/v1`` (``/chat/completions`` is
            appended).
        model: The model name the server expects.
        seed: Sent as ``seed`` (servers that support it sample reproducibly).
        temperature: Sampling temperature (0: greedy where supported).
        max_tokens: Generation budget per turn.
        timeout_s: The deadline of each request, from connecting to the reply's last byte.
        retries: Extra attempts on connection errors, deadlines and 429/5xx replies.
        max_reply_bytes: The largest reply accepted.

    Raises:
        EvalError: A URL that is not ``http(s)://HOST...`` (from ``act``: an unusable reply).
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
        max_reply_bytes: int = DEFAULT_MAX_REPLY_BYTES,
    ) -> None:
        try:
            host = httpx.URL(base_url).host
        except httpx.InvalidURL:
            host = ""
        if not base_url.startswith(("http://", "https://")) or not host:
            raise EvalError(
                f"openai agent URL must start with http:// or https:// and name a host, got {base_url!r} "
                "(e.g. openai:http://127.0.0.1:8000/v1)"
            )
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model = model
        self.seed = seed
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.retries = retries
        self.max_reply_bytes = max_reply_bytes
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
        calls = message.tool_calls or []
        content = message.content or ""
        if not calls:
            self._pending_call_id = None
            self._messages.append({"role": "assistant", "content": content})
            return content
        call = calls[0]
        name = call.function.name
        raw_args = call.function.arguments
        call_id = call.id or f"call_{self._turn}"
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

    def _complete(self) -> _Message:
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
        headers = {}
        if key := os.environ.get("OPENAI_API_KEY"):
            headers["Authorization"] = f"Bearer {key}"
        payload = post_json(
            self.url,
            data,
            headers=headers,
            timeout_s=self.timeout_s,
            retries=self.retries,
            max_reply_bytes=self.max_reply_bytes,
        )
        try:
            return _Completion.model_validate_json(payload).choices[0].message
        except ValidationError as exc:
            first = exc.errors()[0]
            where = ".".join(str(p) for p in first["loc"]) or "the reply"
            raise EvalError(
                f"{self.url} returned no chat completion (expected JSON with "
                f"choices[0].message): {where}: {first['msg']}; got {payload[:200]!r}"
            ) from None


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
