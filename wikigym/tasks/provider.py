"""The slot for the builder of the default TaskSet.

The default TaskSet of the default world is synthesized by :mod:`wikigym.synth` (a room above
envs), yet ``gym.make("WikiSearch-v0")`` with no arguments needs it. So the room that may see
every other one, the ``wikigym`` package itself, registers the builder here at import, and the
defaults resolver (:mod:`wikigym.tasks.defaults`) calls it: nothing below synth imports synth.
Standard library only, so registering costs nothing at import.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from wikigym.errors import TaskSetError

if TYPE_CHECKING:
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.taskset import TaskSet


class DefaultTaskSetProvider(Protocol):
    """What builds the default TaskSet of a snapshot."""

    def generator(self) -> str:
        """The generator's name and version (names the cached TaskSet file)."""
        ...

    def build(self, snapshot: Snapshot) -> TaskSet:
        """The default TaskSet of ``snapshot``."""
        ...

    def build_for_corpus(self, snapshot: Snapshot) -> TaskSet:
        """The default questions of a corpus given without tasks (any snapshot)."""
        ...


_PROVIDER: list[DefaultTaskSetProvider] = []


def set_default_taskset_provider(provider: DefaultTaskSetProvider) -> None:
    """Register the builder of the default TaskSet (the last one registered wins)."""
    _PROVIDER[:] = [provider]


def default_taskset_provider() -> DefaultTaskSetProvider:
    """The registered builder.

    Raises:
        TaskSetError: None is registered (``wikigym`` registers synth's when imported).
    """
    if not _PROVIDER:
        raise TaskSetError(
            "no builder of the default TaskSet is registered; import wikigym (which registers "
            "synth's) or pass tasks=FILE"
        )
    return _PROVIDER[0]
