"""``python(code)``: run model-written Python in the sandbox (:mod:`wikigym.sandbox`)."""

from __future__ import annotations

import textwrap
from dataclasses import dataclass
from typing import Annotated

from pydantic import Field, StringConstraints, field_validator
from pydantic_core import PydanticCustomError

from wikigym.codes import ErrorCode, SandboxCode
from wikigym.tasks.limits import MAX_CODE_CHARS
from wikigym.tools.base import Tag, Tool, ToolArgs, ToolBox, ToolResult, failure


class PythonArgs(ToolArgs):
    """Arguments of `python`. The code is kept verbatim (whitespace matters in Python)."""

    code: Annotated[str, StringConstraints(min_length=1, max_length=MAX_CODE_CHARS)] = Field(
        description="The program; print the results you need."
    )

    @field_validator("code")
    @classmethod
    def _not_blank(cls, code: str) -> str:
        if not code.strip():
            raise PydanticCustomError("code_blank", "code must not be blank", {})
        return code


@dataclass(frozen=True)
class PythonOutput:
    """A program's run in the sandbox (outputs already cut to the shown length)."""

    exit_code: int | None
    stdout: str
    stderr: str
    error: str | None = None  # a SandboxCode value

    def render(self) -> str:
        """``python exit=N``, stdout, ``stderr:`` and the failure code in brackets."""
        parts = [f"python exit={self.exit_code}"]
        if self.stdout:
            parts.append(self.stdout)
        if self.stderr:
            parts.append("stderr:\n" + self.stderr)
        if self.error is not None:
            parts.append(f"[{self.error}]")
        return "\n".join(parts)


def run(box: ToolBox, args: PythonArgs, seed: int) -> ToolResult:
    """The program's output; ``seed`` seeds ``random`` (and ``numpy.random``) in the sandbox."""
    if box.sandbox is None:
        return failure(
            ErrorCode.TOOL_DISABLED, "python: the python tool is disabled in this environment."
        )
    result = box.sandbox.run(args.code, seed=seed)
    limit = box.config.python_output_chars
    if result.error == SandboxCode.UNAVAILABLE:
        return failure(
            ErrorCode.TOOL_DISABLED, result.stderr[:limit] or "python: sandbox unavailable"
        )
    output = PythonOutput(
        result.exit_code, result.stdout[:limit], result.stderr[:limit], result.error
    )
    return ToolResult(output, error=None if result.error is None else ErrorCode.SANDBOX_ERROR)


def _tag_code(body: str) -> str:
    """A ``<python>`` body as code: dedented, blank lines around it dropped (a body longer
    than any valid program is left alone: it fails validation anyway)."""
    return textwrap.dedent(body).strip("\n") if len(body) <= 2 * MAX_CODE_CHARS else body


TOOL = Tool(
    name="python",
    description=(
        "Run Python 3 code in a sandbox (no network, no files, limited time and memory). "
        "Returns what it prints. Use it for arithmetic, dates and counting."
    ),
    args=PythonArgs,
    example={"code": "print(2024 - 1889)"},
    run=run,
    order=40,
    tag=Tag("code", prepare=_tag_code),
    uses_sandbox=True,
)
