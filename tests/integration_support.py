"""Helpers of the adapter tests (tests/test_integrations_*.py)."""

from __future__ import annotations

import os
from types import ModuleType

import pytest

from wikigym.tasks.taskset import Task
from wikigym.tools import format_tool_call

REQUIRED = os.environ.get("WIKIGYM_REQUIRE_INTEGRATIONS") == "1"
"""Set by .ci/run in the venv that installs the extras: a missing package fails, not skips."""


def need(module: str) -> ModuleType:
    """Import a framework, or skip (fail where the extras are meant to be installed)."""
    if REQUIRED:
        return __import__(module)
    return pytest.importorskip(module)


def oracle_actions(task: Task) -> list[str]:
    """The task's oracle calls as model text (the Hermes ``<tool_call>`` form)."""
    return [format_tool_call(c.name, c.arguments) for c in task.oracle]


WRONG_ANSWER = format_tool_call("answer", {"text": "certainly not the answer"})
