"""The OpenEnv wire format: message types, error codes, action and observation shapes.

OpenEnv's client (``GenericEnvClient``) sends ``{"type": "reset"|"step"|"state"|"close",
"data": {...}}`` over ``/ws`` and reads ``{"type": "observation", "data": {"observation":
{...}, "reward": r, "done": d}}`` back, or ``{"type": "error", "data": {"message", "code"}}``.
OpenEnv drops ``Observation.metadata`` on the wire, so the env's ``info`` travels in its own
observation field.
"""

from __future__ import annotations

import json
import math
from enum import Enum
from typing import Any

try:  # orjson encodes and decodes a message several times faster; json is the fallback
    import orjson
except ImportError:  # pragma: no cover - orjson is installed wherever the tests run
    orjson = None  # type: ignore[assignment, unused-ignore]  # typed only where installed

ACTION_FIELD = "message"
"""The action's one required field: the model's text, as the env's ``step`` takes it."""

RESET_FIELDS = ("seed", "task_id", "options", "env_id", "episode_id")
"""What a reset message's ``data`` may carry."""

QUOTE_CHARS = 64
"""The most characters of a client's value an error reply quotes (a prefix, then ``...``)."""


MESSAGE_CHARS = 400
"""The longest error message a reply carries (a message built from client input is cut)."""


def clip(message: str) -> str:
    """An error message cut to :data:`MESSAGE_CHARS` characters."""
    return message if len(message) <= MESSAGE_CHARS else message[:MESSAGE_CHARS] + "..."


def quote(value: Any) -> str:
    """A client's value as an error reply shows it: ``repr`` of a short prefix, never more
    than about :data:`QUOTE_CHARS` characters, whatever its size (a 256 MB string, a deep
    list)."""
    if isinstance(value, str | bytes):
        head = value[:QUOTE_CHARS]
        return repr(head) + ("..." if len(value) > QUOTE_CHARS else "")
    if isinstance(value, bool | int | float) or value is None:
        text = repr(value)
        return text if len(text) <= QUOTE_CHARS else text[:QUOTE_CHARS] + "..."
    return f"a {type(value).__name__}"


class WireCode(str, Enum):
    """Protocol error codes (OpenEnv's ``WSErrorCode`` values, plus wikigym's own).

    The string values are part of the protocol and never change.
    """

    INVALID_JSON = "INVALID_JSON"
    UNKNOWN_TYPE = "UNKNOWN_TYPE"
    VALIDATION_ERROR = "VALIDATION_ERROR"
    EXECUTION_ERROR = "EXECUTION_ERROR"
    CAPACITY_REACHED = "CAPACITY_REACHED"
    FACTORY_ERROR = "FACTORY_ERROR"
    SESSION_ERROR = "SESSION_ERROR"
    NOT_RESET = "NOT_RESET"
    EPISODE_DONE = "EPISODE_DONE"
    SESSION_TIMEOUT = "SESSION_TIMEOUT"
    SHUTTING_DOWN = "SHUTTING_DOWN"
    UNAUTHORIZED = "UNAUTHORIZED"


class ProtocolError(Exception):
    """A client message the server cannot act on; becomes an ``error`` message, never a crash.

    Attributes:
        code: The stable code.
        message: One line: what was expected, what came, what to do.
    """

    def __init__(self, code: WireCode, message: str) -> None:
        message = clip(message)
        super().__init__(message)
        self.code = code
        self.message = message


def _refuse_constant(name: str) -> Any:
    raise json.JSONDecodeError(f"{name} is not JSON", name, 0)


def loads(raw: str | bytes) -> Any:
    """Strict JSON of a wire message: no NaN/Infinity, nesting bounded (orjson: 1,024 levels).

    Raises:
        json.JSONDecodeError: Not JSON (orjson's error is a subclass), or nested too deep.
    """
    if orjson is not None:
        return orjson.loads(raw)
    try:
        return json.loads(raw, parse_constant=_refuse_constant)
    except RecursionError:
        raise json.JSONDecodeError("nested too deep", "", 0) from None


def dumps(message: Any) -> bytes:
    """A wire message as UTF-8 JSON (no ASCII escapes), encoded once; its parse equals
    ``message``."""
    if orjson is not None:
        try:
            return orjson.dumps(message)
        except TypeError:  # an int past 64 bits: json writes it exactly
            pass
    return json.dumps(message, ensure_ascii=False, allow_nan=False).encode()


def error_message(code: WireCode, message: str, **extra: Any) -> dict[str, Any]:
    """An OpenEnv ``error`` message."""
    return {"type": "error", "data": {"message": message, "code": code.value, **extra}}


def parse_message(raw: str) -> tuple[str, dict[str, Any]]:
    """``(type, data)`` of a client message.

    Raises:
        ProtocolError: Not JSON, not an object, or ``data`` not an object.
    """
    try:
        message = loads(raw)
    except json.JSONDecodeError as exc:
        raise ProtocolError(WireCode.INVALID_JSON, f"invalid JSON: {exc}") from None
    if not isinstance(message, dict):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR,
            f"a message must be a JSON object, got {type(message).__name__}",
        )
    kind = message.get("type", "")
    if not isinstance(kind, str):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR, f"'type' must be a string, got {type(kind).__name__}"
        )
    data = message.get("data") or {}
    if not isinstance(data, dict):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR, f"'data' must be an object, got {type(data).__name__}"
        )
    return kind, data


TOOL_CALL_FIELDS = frozenset({"name", "arguments"})
"""A decoded tool call (verifiers' ``openenv`` taskset sends a reply that parses as JSON as
that object)."""

CALL_TOOL_FIELDS = frozenset({"type", "tool_name", "arguments"})
"""OpenEnv's ``CallToolAction`` on the wire (``{"type": "call_tool", "tool_name", "arguments"}``)."""


def action_text(action: Any) -> str:
    """The model's text of an action, which the env's ``step`` takes.

    Three forms are accepted (``metadata`` may ride along with any; :func:`schema` lists
    them): ``{"message": TEXT}`` carries the text as is; a decoded tool call
    ``{"name": TOOL, "arguments": {...}}`` and OpenEnv's ``{"type": "call_tool", "tool_name":
    TOOL, "arguments": {...}}`` are handed to the env as the JSON tool call they encode, which
    the env's parser reads (the server never interprets the call). Anything else is refused.

    Raises:
        ProtocolError: ``VALIDATION_ERROR`` naming the field that is not accepted.
    """
    if not isinstance(action, dict):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR,
            f"an action must be an object {{'{ACTION_FIELD}': TEXT}}, got {type(action).__name__}",
        )
    keys = set(action) - {"metadata"}
    if ACTION_FIELD in keys:
        extra = sorted(keys - {ACTION_FIELD})
        if extra:
            raise ProtocolError(
                WireCode.VALIDATION_ERROR,
                f"action field {quote(extra[0])} is not accepted next to '{ACTION_FIELD}'",
            )
        text = action[ACTION_FIELD]
        if not isinstance(text, str):
            raise ProtocolError(
                WireCode.VALIDATION_ERROR,
                f"action '{ACTION_FIELD}' must be a string, got {type(text).__name__}",
            )
        return text
    if keys and keys <= TOOL_CALL_FIELDS and "name" in keys:
        name, arguments = action["name"], action.get("arguments", {})
    elif keys and keys <= CALL_TOOL_FIELDS and action.get("type") == "call_tool":
        name, arguments = action.get("tool_name"), action.get("arguments", {})
    else:
        unknown = sorted(keys - TOOL_CALL_FIELDS - CALL_TOOL_FIELDS) or sorted(keys)
        field_name = unknown[0] if unknown else None
        raise ProtocolError(
            WireCode.VALIDATION_ERROR,
            (
                f"action field {quote(field_name)} is not accepted"
                if field_name is not None
                else "an action must not be empty"
            )
            + f"; send {{'{ACTION_FIELD}': TEXT}} or a tool call {{'name': TOOL, "
            "'arguments': {...}}",
        )
    if not isinstance(name, str):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR,
            f"a tool call's name must be a string, got {type(name).__name__}",
        )
    # the env's text: one fixed encoding of the call the client sent
    return json.dumps({"name": name, "arguments": arguments}, ensure_ascii=False)


def reset_arguments(data: dict[str, Any]) -> dict[str, Any]:
    """The checked fields of a reset's ``data`` (unknown keys are refused, not ignored).

    Raises:
        ProtocolError: An unknown key, or a field of the wrong type.
    """
    unknown = sorted(set(data) - set(RESET_FIELDS))
    if unknown:
        raise ProtocolError(
            WireCode.VALIDATION_ERROR,
            f"reset takes {list(RESET_FIELDS)}, got unknown {quote(unknown[0])}",
        )
    seed = data.get("seed")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR, f"seed must be a non-negative integer, got {quote(seed)}"
        )
    options = data.get("options")
    if options is not None and not isinstance(options, dict):
        raise ProtocolError(
            WireCode.VALIDATION_ERROR, f"options must be an object, got {type(options).__name__}"
        )
    for key in ("task_id", "env_id", "episode_id"):
        value = data.get(key)
        if value is not None and not isinstance(value, str):
            raise ProtocolError(
                WireCode.VALIDATION_ERROR, f"{key} must be a string, got {type(value).__name__}"
            )
    return {k: data[k] for k in RESET_FIELDS if data.get(k) is not None}


def jsonable(value: Any) -> Any:
    """``value`` as JSON data (tuples as lists, numpy scalars as numbers, NaN as None).

    Exact built-in types are tested first (an env's ``info`` is almost all str, int, bool,
    None, list and dict, and this runs on every step); anything else takes the general path.
    """
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return value
    if kind is dict:
        return {k if type(k) is str else str(k): jsonable(v) for k, v in value.items()}
    if kind is list or kind is tuple:
        return [jsonable(v) for v in value]
    return _jsonable_other(value)


def _jsonable_other(value: Any) -> Any:
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [jsonable(v) for v in value]
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item):
        return jsonable(item())
    return str(value)


def observation_payload(
    text: str,
    info: dict[str, Any],
    *,
    reward: float | None,
    terminated: bool,
    truncated: bool,
    session_id: str | None,
    episode_id: str | None,
) -> dict[str, Any]:
    """The ``data`` of an OpenEnv ``observation`` message for one env result."""
    return {
        "observation": {
            "text": text,
            "info": jsonable(info),
            "terminated": bool(terminated),
            "truncated": bool(truncated),
            "session_id": session_id,
            "episode_id": episode_id,
        },
        "reward": None if reward is None else float(reward),
        "done": bool(terminated or truncated),
    }


_TOOL_ARGUMENTS = {"type": "object", "description": "The tool's arguments."}

ACTION_SCHEMA: dict[str, Any] = {
    "title": "WikigymAction",
    "type": "object",
    "description": "The model's text: tool calls (JSON, <tool_call>, Search-R1 tags) or an "
    "answer, exactly as the env's step takes it. A decoded tool call is accepted too (see "
    "x-wikigym-also-accepts): the env steps on the JSON call it encodes.",
    "properties": {
        ACTION_FIELD: {"type": "string", "title": "Message"},
        "metadata": {"type": "object"},
    },
    "required": [ACTION_FIELD],
    "additionalProperties": False,
    # OpenEnv clients (verifiers' openenv taskset) send a non-JSON reply as the one required
    # field, so the message form stays the schema's top level; the other accepted forms:
    "x-wikigym-also-accepts": [
        {
            "title": "ToolCall",
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "arguments": _TOOL_ARGUMENTS,
                "metadata": {"type": "object"},
            },
            "required": ["name"],
            "additionalProperties": False,
        },
        {
            "title": "CallToolAction",
            "type": "object",
            "properties": {
                "type": {"const": "call_tool"},
                "tool_name": {"type": "string"},
                "arguments": _TOOL_ARGUMENTS,
                "metadata": {"type": "object"},
            },
            "required": ["type", "tool_name"],
            "additionalProperties": False,
        },
    ],
}
"""Every action form :func:`action_text` accepts (tests check the two agree)."""

_NULLABLE_STRING = {"type": ["string", "null"]}

STATE_SCHEMA: dict[str, Any] = {
    "title": "WikigymState",
    "type": "object",
    "properties": {
        "session_id": _NULLABLE_STRING,
        "episode_id": _NULLABLE_STRING,
        "env_id": _NULLABLE_STRING,
        "step_count": {"type": "integer", "minimum": 0},
        "task_id": _NULLABLE_STRING,
        "done": {"type": "boolean"},
    },
    "required": ["session_id", "episode_id", "env_id", "step_count", "task_id", "done"],
    "additionalProperties": False,
}

RESET_SCHEMA: dict[str, Any] = {
    "title": "WikigymReset",
    "type": "object",
    "properties": {
        "seed": {"type": "integer", "minimum": 0},
        "task_id": {"type": "string"},
        "options": {"type": "object"},
        "env_id": {"type": "string"},
        "episode_id": {"type": "string"},
    },
    "additionalProperties": False,
}


def schema() -> dict[str, Any]:
    """OpenEnv's ``/schema``: JSON schemas of the action, the observations (a reset's and a
    step's are the same shape), the state, and (wikigym's addition) the reset request."""
    observation = {
        "title": "WikigymObservation",
        "type": "object",
        "properties": {
            "text": {"type": "string"},
            "info": {"type": "object"},
            "terminated": {"type": "boolean"},
            "truncated": {"type": "boolean"},
            "session_id": _NULLABLE_STRING,
            "episode_id": _NULLABLE_STRING,
        },
        "required": ["text", "info", "terminated", "truncated"],
    }
    return {
        "action": ACTION_SCHEMA,
        "observation": observation,
        "reset_observation": observation,
        "state": STATE_SCHEMA,
        "reset": RESET_SCHEMA,
    }
