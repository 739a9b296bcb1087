"""Typed exceptions. Each message says what was expected, what came, and what to do.

Model-facing problems (a bad tool call, an unknown page) never raise: they become
observations. These exceptions are for users and programmers.
"""

from __future__ import annotations

from collections.abc import Mapping


class WikigymError(Exception):
    """Base class of every error wikigym raises on purpose."""


class SourceError(WikigymError):
    """A build source cannot be read: unknown format, truncated or not a dump."""


class BuildError(WikigymError):
    """A snapshot build failed; no snapshot was left behind."""


class SnapshotError(WikigymError):
    """A snapshot directory is missing, of an unknown version or unreadable."""


class SnapshotCorruptedError(SnapshotError):
    """A snapshot file does not match the sha256 recorded in its manifest."""


class SnapshotMismatchError(SnapshotError):
    """The snapshot at a path is not the one that was expected there (another snapshot_id)."""


class SandboxUnavailableError(WikigymError):
    """Linux namespaces (bubblewrap/unshare) are not usable on this machine."""


class SandboxLimitsError(WikigymError, ValueError):
    """A sandbox limit is unknown, of the wrong type or out of range (the message names it)."""


class TaskSetError(WikigymError):
    """A TaskSet file is missing fields, malformed, or for another snapshot."""


class TrajectoryError(WikigymError):
    """A trajectory file is malformed or cannot be replayed."""


class SynthError(WikigymError):
    """Question synthesis failed: bad options, an unusable snapshot, or a task that is not proved."""


class EvalError(WikigymError):
    """An evaluation cannot run or found a broken task (bad agent spec, oracle failure, ...)."""


class RewardConfigError(WikigymError, ValueError):
    """A reward config has a value out of range or names an unknown preset or component."""


class UnknownRewardComponentError(RewardConfigError):
    """A reward config lists a component that is not registered."""


class ConfigError(WikigymError, ValueError):
    """A command-line option or config value is unknown, out of range or unusable."""


class OutputExistsError(WikigymError):
    """An output path exists and replacing it was not asked for (``--overwrite``)."""


class RolloutError(WikigymError):
    """Rollout actors died more often than a pool may restart them; ``trajectories`` holds
    the episodes that finished (by index), so a caller loses none of them."""

    def __init__(self, message: str, trajectories: Mapping[int, object] | None = None) -> None:
        super().__init__(message)
        self.trajectories = dict(trajectories or {})


class Terminated(KeyboardInterrupt):
    """SIGTERM (what Slurm, Kubernetes and ``timeout`` send), raised in the main thread.

    A :class:`KeyboardInterrupt` on purpose: every clean-up that runs on Ctrl-C (hidden build
    siblings, partial outputs, worker processes, sandboxes) runs on SIGTERM too, and the CLI
    then exits 143 instead of 130 (:func:`wikigym.cliutil.run_command`).
    """
