"""Parse a model's text into validated tool calls, or into errors the model can learn from.

`parse_action` never raises on the action's content. It returns a `ParsedAction` holding at
least one `ToolCall` or one `ActionError`, plus the free text outside the calls.

Accepted call forms (free text may surround them):

1. Hermes/Qwen tags: ``<tool_call>{"name": "search", "arguments": {"query": "x"}}</tool_call>``.
   ``arguments`` may be an object or a JSON-encoded string; ``parameters`` and ``args`` are
   accepted for ``arguments`` and ``tool`` for ``name``; the OpenAI shape
   ``{"type": "function", "function": {"name": ..., "arguments": "{...}"}}`` too; without an
   arguments key, the other keys are the arguments (``{"name": "search", "query": "x"}``).
2. The same JSON object as a bare action (the action starts with it; text and tags may
   follow), or in a fenced block (```` ```json ````, ```` ``` ````) anywhere in the text.
3. Search-R1 tags: ``<search>q</search>`` is ``search(query=q)``, ``<answer>a</answer>`` is
   ``answer(text=a)``, ``<python>code</python>`` is ``python(code=code)`` (dedented).

Text inside ``<think>...</think>`` is reasoning, never calls. A fenced block that is not a JSON
call is free text, unless it contains tags: then the tags in it are read. An opening tag with no
closing tag takes the rest of the action as its body (generation often stops on the closing tag
and drops it). JSON that fails strict parsing gets one lenient retry (trailing commas,
single-quoted strings, Python's True/False/None); NaN and Infinity are refused. Lone surrogates
and NUL characters become U+FFFD. Work is bounded (see the ``MAX_*`` constants): a 1 MiB action
parses in well under a second, and JSON nested deeper than 32 levels is refused before decoding.

The rule for several calls in one action: call attempts (valid or not) are taken in order of
appearance, and each takes one of the ``max_calls`` slots. The attempts in the slots become
`ToolCall`s or `ActionError`s; the attempts after them are not run and are reported together as
one ``too_many_calls`` error. A valid ``answer`` call ends the episode, so attempts after it are
ignored without an error.

Every error carries a stable code (`wikigym.codes.ErrorCode`) and a bounded message saying what was expected,
what came and how a correct call looks. The tools, their argument models and their tags are the
registry's (:mod:`wikigym.tools`); nothing here names a tool.
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass
from itertools import accumulate, takewhile
from typing import Any

from pydantic import ValidationError

from wikigym.codes import ErrorCode
from wikigym.tools import Tool, ToolArgs, all_tools, example_call, invalid_arguments_message
from wikigym.tools.calls import short_repr
from wikigym.tools.schema import format_example, tag_example

MAX_ACTION_CHARS = 2_000_000
"""Longer actions are not parsed at all (one ``action_too_long`` error)."""
MAX_CALL_CHARS = 200_000
"""Longest JSON tool call read (a 20,000-character program, JSON-escaped, fits)."""
MAX_MARKERS = 10_000
"""Tags and fences read per action; the text after the last one read is free text (bounds time)."""
MAX_JSON_DEPTH = 32
"""Deepest JSON nesting read; tool arguments are flat, and deep input would exhaust the stack."""
MAX_LENIENT_CHARS = 20_000
"""Longest call given the lenient retry (trailing commas, single quotes); bounds its cost."""
MAX_MESSAGE_CHARS = 1200
MAX_RAW_CHARS = 2000
_SNIPPET_CHARS = 200


@dataclass(frozen=True)
class ToolCall:
    """One validated call: `args` is an instance of the tool's argument model; `raw` its text."""

    name: str
    args: ToolArgs
    raw: str


@dataclass(frozen=True)
class ActionError:
    """A failed call attempt. `message` is shown to the model; `raw` is clipped to 2,000 chars."""

    code: ErrorCode
    message: str
    raw: str


@dataclass(frozen=True)
class ParsedAction:
    """The calls to run (in order), the errors, and the free text outside the calls (stripped)."""

    calls: tuple[ToolCall, ...]
    errors: tuple[ActionError, ...]
    text: str


@dataclass(frozen=True)
class _Attempt:
    """A span of the action that tries to be a call, before interpretation."""

    kind: str  # "bare", "json" (fenced) or a tag: "tool_call", "search", "answer", "python"
    body: str
    raw: str
    closed: bool
    value: Any = None  # the decoded JSON, when scanning already decoded it


class _CallFailure(Exception):
    """Internal: carries an `ActionError` out of nested helpers; never leaves this module."""

    def __init__(self, error: ActionError) -> None:
        super().__init__(error.code)
        self.error = error


_NAME_KEYS = ("name", "tool")
_ARGS_KEYS = ("arguments", "parameters", "args")
_IGNORED_KEYS = ("id", "type")

# All patterns below are linear: no nested or overlapping quantifiers.
_UNSAFE_CHARS = re.compile("[\ud800-\udfff\x00]")
_UNSAFE_TABLE = dict.fromkeys([0, *range(0xD800, 0xE000)], 0xFFFD)
_FENCE_LANG = re.compile(r"[A-Za-z0-9_+.-]{0,30}")
_CALL_KEY = re.compile(r"[\"'](?:name|tool|function)[\"']\s*:")
# A chunk is a double-quoted string, a single-quoted string (either may be unterminated) or a
# run of other characters; the string bodies use the unrolled-loop form, so matching is linear.
_JSON_CHUNK = re.compile(
    r"""(?P<double>"[^"\\]*(?:\\.[^"\\]*)*"?)"""
    r"""|(?P<single>'(?P<single_body>[^'\\]*(?:\\.[^'\\]*)*)(?P<single_end>'?))"""
    r"""|(?P<other>[^"']+)""",
    re.DOTALL,
)
_DOUBLE_QUOTED = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"?', re.DOTALL)
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_DEPTH_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}
_RELAXED = re.compile(r",(?=\s*[}\]])|\b(?:True|False|None)\b")
_PY_LITERALS = {"True": "true", "False": "false", "None": "null"}
_SINGLE_QUOTED_ESCAPE = re.compile(r"""\\.|\"""", re.DOTALL)


@functools.lru_cache(maxsize=16)
def _opener(tags: tuple[str, ...]) -> re.Pattern[str]:
    """The markers that open an attempt: ``<tool_call>``, the tools' tags, ``<think>``, fences."""
    return re.compile("<(" + "|".join(("tool_call", *tags, "think")) + ")>|```")


def _tagged() -> dict[str, Tool]:
    """The registered tools that have a shorthand tag, by tag name (every registered tool's
    tag is read, enabled or not: a disabled one is an ``unknown_tool`` error, not text)."""
    return _tags_of(all_tools())


@functools.lru_cache(maxsize=16)
def _tags_of(tools: tuple[Tool, ...]) -> dict[str, Tool]:
    return {tool.name: tool for tool in tools if tool.tag is not None}


def _clip(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, saying how much was cut."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}... [{len(text) - limit} more characters]"


def _sanitize(text: str) -> str:
    """Replace lone surrogates and NUL (which break UTF-8 encoders and C strings) by U+FFFD."""
    if _UNSAFE_CHARS.search(text) is None:
        return text
    return text.translate(_UNSAFE_TABLE)


def _error(code: ErrorCode, message: str, raw: str) -> ActionError:
    return ActionError(
        code=code, message=_clip(message, MAX_MESSAGE_CHARS), raw=_clip(raw, MAX_RAW_CHARS)
    )


def _example_for(kind: str, tool: Tool) -> str:
    """A correct call of `tool` in the form the model tried (tag form for a tag)."""
    tagged = tag_example(tool) if kind == tool.name else None
    return tagged if tagged is not None else example_call(tool.name)


def _available(tools: tuple[Tool, ...]) -> str:
    return ", ".join(tool.name for tool in tools)


# --- JSON -------------------------------------------------------------------------------------


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a valid JSON number")


def _requote(match: re.Match[str]) -> str:
    """Map one token of a single-quoted string's body to its double-quoted JSON form."""
    token = match.group()
    if token == "\\'":
        return "'"
    return '\\"' if token == '"' else token


def _json_depth(text: str, *, first_value_only: bool = False) -> int:
    """The bracket depth of JSON text, double-quoted strings skipped (all in C-level loops).

    With `first_value_only`, brackets after the first top-level value closes are not counted
    (free text may follow a bare call).
    """
    brackets = _NOT_BRACKET.sub("", _DOUBLE_QUOTED.sub("", text))
    levels: Iterable[int] = accumulate(map(_DEPTH_STEP.__getitem__, brackets))
    if first_value_only:
        levels = takewhile((0).__lt__, levels)
    return max(levels, default=0)


def _relax(match: re.Match[str]) -> str:
    """Drop a trailing comma, or map a Python literal to JSON."""
    token = match.group()
    return "" if token[0] == "," else _PY_LITERALS[token]


def _lenient_json(text: str) -> str:
    """Rewrite JSON-like text as JSON: no trailing commas, no single-quoted strings, no
    Python True/False/None. Unterminated strings are left as they are (and fail later)."""
    out: list[str] = []
    for match in _JSON_CHUNK.finditer(text):
        kind = match.lastgroup
        if kind == "other":
            out.append(_RELAXED.sub(_relax, match.group()))
        elif kind == "single" and match.group("single_end"):
            inner = _SINGLE_QUOTED_ESCAPE.sub(_requote, match.group("single_body"))
            out.append(f'"{inner}"')
        else:
            out.append(match.group())
    return "".join(out)


def _sanitize_json(value: Any) -> Any:
    """`value` with every string (keys too) passed through `_sanitize`; depth is bounded."""
    if isinstance(value, str):
        return _sanitize(value)
    if isinstance(value, list):
        return [_sanitize_json(item) for item in value]
    if isinstance(value, dict):
        return {_sanitize(key): _sanitize_json(item) for key, item in value.items()}
    return value


def _check_depth(text: str, *, first_value_only: bool) -> None:
    """Refuse JSON nested deeper than `MAX_JSON_DEPTH` before a decoder recurses into it.

    Raises:
        ValueError: If it is nested deeper.
    """
    brackets = text.count("{") + text.count("[")  # a cheap upper bound of the depth
    if brackets <= MAX_JSON_DEPTH:
        return
    if _json_depth(text, first_value_only=first_value_only) > MAX_JSON_DEPTH:
        raise ValueError(f"JSON nested more than {MAX_JSON_DEPTH} levels deep")


def _load_json(text: str, *, allow_trailing: bool) -> tuple[Any, str]:
    """Parse JSON text (strict, then lenient). Returns the value and any text after it.

    Raises:
        ValueError: With a short reason, when the text is not readable JSON.
    """
    if len(text) > MAX_CALL_CHARS:
        raise ValueError(f"the call has {len(text)} characters, more than {MAX_CALL_CHARS}")
    _check_depth(text, first_value_only=allow_trailing)
    decoder = json.JSONDecoder(parse_constant=_reject_constant)
    try:
        if allow_trailing:
            value, end = decoder.raw_decode(text)
            return _sanitize_json(value), text[end:]
        return _sanitize_json(decoder.decode(text)), ""
    except (ValueError, RecursionError) as strict_error:
        reason = str(strict_error) if not isinstance(strict_error, RecursionError) else "too deep"
        lenient = _lenient_json(text) if len(text) <= MAX_LENIENT_CHARS else text
        if lenient == text:
            raise ValueError(f"invalid JSON ({reason})") from None
        _check_depth(lenient, first_value_only=False)  # quotes may pair up differently now
        try:
            return _sanitize_json(decoder.decode(lenient)), ""
        except (ValueError, RecursionError):
            raise ValueError(f"invalid JSON ({reason})") from None


def _strip_fence(body: str) -> str:
    """Drop a ```json ... ``` fence some models put inside <tool_call> tags."""
    if not body.startswith("```"):
        return body
    newline = body.find("\n")
    inner = body[newline + 1 :] if newline >= 0 else body[3:]
    inner = inner.rstrip()
    return inner[:-3].strip() if inner.endswith("```") else inner


def _envelope(value: Any, attempt: _Attempt) -> tuple[Any, Any]:
    """Split a decoded call object into (tool name, arguments).

    Raises:
        _CallFailure: When the object is not shaped like a tool call.
    """

    def fail(detail: str) -> _CallFailure:
        return _CallFailure(
            _error(
                ErrorCode.PARSE_ERROR,
                f"Could not read the tool call: {detail}. Expected "
                f'{{"name": <tool name>, "arguments": {{...}}}}, for example: '
                f"{format_example()}",
                attempt.raw,
            )
        )

    if not isinstance(value, dict):
        raise fail(f"expected a JSON object, got {type(value).__name__} {short_repr(value)}")
    function = value.get("function")
    if isinstance(function, dict):
        outer = sorted(key for key in value if key not in ("function", *_IGNORED_KEYS))
        if outer:
            raise fail(f"unexpected keys {outer} beside 'function'")
        value = function
    name_keys = [key for key in _NAME_KEYS if key in value]
    if len(name_keys) != 1:
        found = sorted(value)[:10]
        raise fail(f"expected exactly one 'name' key, found keys {found}")
    args_keys = [key for key in _ARGS_KEYS if key in value]
    rest = sorted(key for key in value if key not in (*name_keys, *args_keys, *_IGNORED_KEYS))
    if len(args_keys) > 1:
        raise fail(f"both {args_keys[0]!r} and {args_keys[1]!r} given; use 'arguments'")
    if not args_keys:
        return value[name_keys[0]], {key: value[key] for key in rest}
    if rest:
        raise fail(f"unexpected keys {rest[:10]} beside 'arguments'; put arguments inside it")
    arguments = value[args_keys[0]]
    if arguments is None or (isinstance(arguments, str) and not arguments.strip()):
        arguments = {}
    elif isinstance(arguments, str):
        try:
            arguments, _ = _load_json(arguments.strip(), allow_trailing=False)
        except ValueError as error:
            raise fail(f"the arguments string is not JSON: {_clip(str(error), 200)}") from None
    if not isinstance(arguments, dict):
        raise fail(f"'arguments' must be a JSON object, got {type(arguments).__name__}")
    return value[name_keys[0]], arguments


# --- interpretation ---------------------------------------------------------------------------


def _resolve_tool(name: Any, attempt: _Attempt, tools: tuple[Tool, ...]) -> Tool:
    """The enabled tool called `name`.

    Raises:
        _CallFailure: An ``unknown_tool`` error otherwise.
    """
    key = name.strip().lower() if isinstance(name, str) else None
    tool = next((t for t in tools if t.name == key), None)
    if tool is None:
        shown = short_repr(name) if not isinstance(name, str) else repr(_clip(name, 60))
        raise _CallFailure(
            _error(
                ErrorCode.UNKNOWN_TOOL,
                f"Unknown tool {shown}. Available tools: {_available(tools)}. "
                f"Example: {example_call(tools[0].name)}",
                attempt.raw,
            )
        )
    return tool


def _validation_message(tool: Tool, error: ValidationError, kind: str) -> str:
    return f"{invalid_arguments_message(tool.name, error)} Example: {_example_for(kind, tool)}"


def _interpret(attempt: _Attempt, tools: tuple[Tool, ...]) -> ToolCall:
    """Turn one attempt into a validated call.

    Raises:
        _CallFailure: With the ``parse_error``, ``unknown_tool`` or ``invalid_arguments`` error.
    """
    tagged = _tagged().get(attempt.kind)
    if tagged is not None and tagged.tag is not None:
        tool = _resolve_tool(attempt.kind, attempt, tools)
        arguments: Any = {tagged.tag.argument: tagged.tag.prepare(attempt.body)}
    else:
        body = attempt.body.strip()
        if attempt.kind == "tool_call":
            body = _strip_fence(body)
        try:
            value = attempt.value
            if value is None:
                value, _ = _load_json(body, allow_trailing=False)
        except ValueError as error:
            unclosed = "" if attempt.closed else " (the call was not closed)"
            raise _CallFailure(
                _error(
                    ErrorCode.PARSE_ERROR,
                    f"Could not read the tool call{unclosed}: {_clip(str(error), 300)}. "
                    f"Got: {_clip(body, _SNIPPET_CHARS)!r}. Expected a JSON object, for example: "
                    f"{format_example()}",
                    attempt.raw,
                )
            ) from None
        name, arguments = _envelope(value, attempt)
        tool = _resolve_tool(name, attempt, tools)
    try:
        args = tool.args.model_validate(arguments)
    except ValidationError as error:
        raise _CallFailure(
            _error(
                ErrorCode.INVALID_ARGUMENTS,
                _validation_message(tool, error, attempt.kind),
                attempt.raw,
            )
        ) from None
    return ToolCall(name=tool.name, args=args, raw=attempt.raw)


# --- scanning ---------------------------------------------------------------------------------


@dataclass
class _Scan:
    """What a scan found so far: attempts, free-text pieces, and markers left to read."""

    attempts: list[_Attempt]
    pieces: list[str]
    markers_left: int


def _read_fence(text: str, start: int) -> tuple[str, int, int, int]:
    """The fenced block opening at `start`: its language, body start and end, and block end."""
    body_start = start + 3
    close = text.find("```", body_start)
    body_end = close if close >= 0 else len(text)
    end = close + 3 if close >= 0 else len(text)
    newline = text.find("\n", body_start, body_end)
    lang = ""
    if newline >= 0:
        first_line = text[body_start:newline].strip()
        if _FENCE_LANG.fullmatch(first_line):
            lang, body_start = first_line.lower(), newline + 1
    return lang, body_start, body_end, end


def _scan_markup(text: str, scan: _Scan, opener: re.Pattern[str]) -> None:
    """Add the tag and fence attempts of `text`, in order, and the text around them, to `scan`.

    A fenced block is a call when it holds a JSON call; otherwise its body is scanned for tags
    when it has any (a fence holds no fence, so this recurses once at most), else it is text.
    """
    pos = 0
    while scan.markers_left > 0:
        match = opener.search(text, pos)
        if match is None:
            break
        scan.markers_left -= 1
        start, tag = match.start(), match.group(1)
        if tag is None:
            lang, body_start, body_end, end = _read_fence(text, start)
            body = text[body_start:body_end]
            if lang in ("", "json", "tool_call") and body.lstrip().startswith("{"):
                is_call = _CALL_KEY.search(body) is not None
            else:
                is_call = False
            if is_call:
                scan.pieces.append(text[pos:start])
                scan.attempts.append(_Attempt("json", body, text[start:end], end > body_end))
            elif opener.search(body):
                scan.pieces.append(text[pos:start])
                _scan_markup(body, scan, opener)
            else:
                scan.pieces.append(text[pos:end])
            pos = end
            continue
        closing = f"</{tag}>"
        close = text.find(closing, match.end())
        end = close + len(closing) if close >= 0 else len(text)
        if tag == "think":
            scan.pieces.append(text[pos:end])
        else:
            body = text[match.end() : close if close >= 0 else len(text)]
            scan.pieces.append(text[pos:start])
            scan.attempts.append(_Attempt(tag, body, text[start:end], close >= 0))
        pos = end
    scan.pieces.append(text[pos:])


def _scan(text: str) -> tuple[list[_Attempt], str]:
    """Find the call attempts in order of appearance, and the free text around them."""
    scan = _Scan(attempts=[], pieces=[], markers_left=MAX_MARKERS)
    stripped = text.strip()
    if stripped.startswith("{") and _CALL_KEY.search(stripped):
        try:  # the object may be followed by free text (and more calls)
            value, rest = _load_json(stripped, allow_trailing=True)
        except ValueError:  # reported when the attempt is interpreted
            return [_Attempt("bare", stripped, stripped, True)], ""
        body = stripped[: len(stripped) - len(rest)]
        scan.attempts.append(_Attempt("bare", body, body, True, value))
        text = rest
    _scan_markup(text, scan, _opener(tuple(sorted(_tagged()))))
    return scan.attempts, "".join(scan.pieces).strip()


def parse_action(
    action: str | bytes, *, max_calls: int = 1, tools: Iterable[str] | None = None
) -> ParsedAction:
    """Parse a model's action text into validated tool calls and errors (never raises on content).

    Args:
        action: The model's text; bytes are decoded as UTF-8 with replacement characters.
        max_calls: How many call attempts are run per action (>= 1); see the module docstring.
        tools: The enabled tools (default: all); a call of any other tool is ``unknown_tool``.

    Returns:
        A `ParsedAction` with at least one call or one error.

    Raises:
        TypeError: If `action` is not str or bytes (a programming error, not a model error).
        ValueError: If `max_calls` < 1 or `tools` is empty.
    """
    if isinstance(action, bytes | bytearray):
        action = bytes(action).decode("utf-8", errors="replace")
    if not isinstance(action, str):
        raise TypeError(f"action must be str or bytes, got {type(action).__name__}")
    if max_calls < 1:
        raise ValueError(f"max_calls must be >= 1, got {max_calls}")
    wanted = None if tools is None else set(tools)
    enabled = tuple(tool for tool in all_tools() if wanted is None or tool.name in wanted)
    if not enabled:
        raise ValueError("tools must name at least one registered tool; got none")
    if len(action) > MAX_ACTION_CHARS:
        message = (
            f"The action has {len(action)} characters; at most {MAX_ACTION_CHARS} are read. "
            f"Write one short tool call, for example: {example_call(enabled[0].name)}"
        )
        return ParsedAction(
            (), (_error(ErrorCode.ACTION_TOO_LONG, message, action[:MAX_RAW_CHARS]),), ""
        )
    text = _sanitize(action)
    if not text.strip():
        message = f"The action is empty. Call a tool, for example: {example_call(enabled[0].name)}"
        return ParsedAction((), (_error(ErrorCode.EMPTY_ACTION, message, text),), "")
    attempts, free_text = _scan(text)
    if not attempts:
        message = (
            "No tool call found in the action. Call a tool, for example: "
            f"{example_call(enabled[0].name)}"
        )
        final = next((tool for tool in enabled if tool.ends_episode), None)
        if final is not None:
            message += f" To give the final answer: {example_call(final.name)}"
        return ParsedAction((), (_error(ErrorCode.NO_TOOL_CALL, message, text),), free_text)
    calls: list[ToolCall] = []
    errors: list[ActionError] = []
    for index, attempt in enumerate(attempts):
        if index == max_calls:
            extra = len(attempts) - index
            message = (
                f"Only {max_calls} tool call(s) per turn are run; the {extra} call(s) after "
                f"that were not run. Make at most {max_calls} call(s) per turn."
            )
            errors.append(_error(ErrorCode.TOO_MANY_CALLS, message, attempt.raw))
            break
        try:
            call = _interpret(attempt, enabled)
        except _CallFailure as failure:
            errors.append(failure.error)
            continue
        calls.append(call)
        if _ends_episode(call, enabled):
            break
    return ParsedAction(tuple(calls), tuple(errors), free_text)


def _ends_episode(call: ToolCall, tools: tuple[Tool, ...]) -> bool:
    return any(tool.ends_episode for tool in tools if tool.name == call.name)
