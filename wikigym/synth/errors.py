"""The error synth raises on purpose."""

from __future__ import annotations

from wikigym.errors import WikigymError


class SynthError(WikigymError):
    """Question synthesis failed: bad options, an unusable snapshot, or a task that is not proved."""
