"""The stable codes of model-facing failures: one enum each, string-valued.

The values are written into trajectories, logs and ``info["tool_error"]``; rewards and
metrics key on them. Members compare, hash and serialize (JSON) as their string values, so
``ErrorCode.NOT_FOUND == "not_found"`` and old trajectories read back unchanged. Never
change a value; add members instead.
"""

from __future__ import annotations

import sys
from enum import Enum

if sys.version_info >= (3, 11):
    from enum import StrEnum
else:  # Python 3.10: the same behaviour, spelled out

    class StrEnum(str, Enum):
        """A str-valued enum whose ``str()`` and ``format()`` are the value (3.11's StrEnum)."""

        def __str__(self) -> str:
            return str(self.value)

        def __format__(self, spec: str) -> str:
            return format(str(self.value), spec)


class ErrorCode(StrEnum):
    """Why an action or a tool call failed (``info["tool_error"]``)."""

    # The action could not be read as a tool call (wikigym.envs.actions).
    EMPTY_ACTION = "empty_action"
    NO_TOOL_CALL = "no_tool_call"
    PARSE_ERROR = "parse_error"
    UNKNOWN_TOOL = "unknown_tool"
    INVALID_ARGUMENTS = "invalid_arguments"
    TOO_MANY_CALLS = "too_many_calls"
    ACTION_TOO_LONG = "action_too_long"
    # A valid call that the tool could not serve (wikigym.tools).
    NOT_FOUND = "not_found"
    SANDBOX_ERROR = "sandbox_error"
    INVALID_PART = "invalid_part"
    TOOL_DISABLED = "tool_disabled"


ACTION_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode.EMPTY_ACTION,
    ErrorCode.NO_TOOL_CALL,
    ErrorCode.PARSE_ERROR,
    ErrorCode.UNKNOWN_TOOL,
    ErrorCode.INVALID_ARGUMENTS,
    ErrorCode.TOO_MANY_CALLS,
    ErrorCode.ACTION_TOO_LONG,
)
"""Codes of actions that are not a valid tool call (``ActionError.code``)."""

TOOL_ERROR_CODES: tuple[ErrorCode, ...] = (
    ErrorCode.NOT_FOUND,
    ErrorCode.SANDBOX_ERROR,
    ErrorCode.INVALID_PART,
    ErrorCode.TOOL_DISABLED,
)
"""Codes of valid calls that a tool could not serve (``ToolResult.error``)."""

PARSE_FAILURE_CODES: tuple[ErrorCode, ...] = (
    ErrorCode.PARSE_ERROR,
    ErrorCode.NO_TOOL_CALL,
    ErrorCode.EMPTY_ACTION,
)
"""Actions in which no well-formed tool call was found (training-health metrics)."""

NO_ATTEMPT_CODES: frozenset[ErrorCode] = frozenset({ErrorCode.NO_TOOL_CALL, ErrorCode.EMPTY_ACTION})
"""Actions that did not even try to call a tool."""


class SandboxCode(StrEnum):
    """Why a sandboxed program did not finish cleanly (``SandboxResult.error``)."""

    TIMEOUT = "timeout"
    MEMORY = "memory"
    KILLED = "killed"
    OUTPUT_LIMIT = "output_limit"
    NONZERO_EXIT = "nonzero_exit"
    UNAVAILABLE = "unavailable"
