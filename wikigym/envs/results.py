"""What a step shows besides tool results: action errors and the env's own notices.

A step's observation is the rendering of its outputs in order (:attr:`WikiSearchEnv.last_outputs`):
tool results (:mod:`wikigym.tools`: ``SearchOutput``, ``PageOutput``, ... each in its tool's
module), :class:`ActionErrorOutput` for actions that are not a valid call, and
:class:`NoticeOutput`. Every output renders itself (``render()``); wrappers, agents and
importers read the objects, never the text.
"""

from __future__ import annotations

from dataclasses import dataclass

from wikigym.codes import ErrorCode
from wikigym.tools import Output


@dataclass(frozen=True)
class ActionErrorOutput:
    """An action that is not a valid tool call (see :mod:`wikigym.envs.actions`)."""

    code: ErrorCode
    message: str

    def render(self) -> str:
        """``error (code): message``."""
        return f"error ({self.code}): {self.message}"


@dataclass(frozen=True)
class NoticeOutput:
    """A line from the env itself (the episode is over, the step budget is spent)."""

    text: str

    def render(self) -> str:
        """The line."""
        return self.text


StepOutput = Output
"""One part of a step's observation, in order: anything that renders itself."""
