"""The one slot through which the package root serves the rooms below it.

Some defaults live above the room that needs them: ``gym.make("WikiSearch-v1")`` (envs) needs
the default TaskSet, which synth (above envs) builds; ``synth calibrate`` needs eval's episode
runner. The package root sees every room, so :mod:`wikigym.defaults` implements
:class:`RootServices` (every default, resolved once) and installs it here when ``wikigym`` is
imported; the rooms below call :func:`root_services`, usually through
:mod:`wikigym.tasks.defaults`. Each signature is written here once and implemented once.
Standard library only, so installing costs nothing at import.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from wikigym.errors import TaskSetError

if TYPE_CHECKING:
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.taskset import TaskSet

Outcome = tuple[bool, float]
"""One episode's (exact-match success, total reward)."""


@dataclass(frozen=True)
class EpisodeRequest:
    """Run every task of a TaskSet file ``k`` times with one agent (``synth calibrate``).

    Attributes:
        tasks_file: The TaskSet file.
        agent: Agent spec (``heuristic``, ``openai:URL``, ``hf:PATH``).
        k: Runs per task.
        seed: Base seed: run ``r`` samples with agent seed ``seed + r``.
        corpus: Snapshot directory; None for the embedded default world.
        max_steps: The env's step budget.
        temperature: Sampling temperature of model agents (0: greedy).
        model: Model name sent to an OpenAI-compatible endpoint.
    """

    tasks_file: Path
    agent: str
    k: int
    seed: int
    corpus: str | None
    max_steps: int
    temperature: float
    model: str | None


class RootServices(Protocol):
    """What the package root resolves for the rooms below it."""

    def cache_dir(self) -> Path:
        """Where defaults are built and kept (``$WIKIGYM_CACHE``, ...)."""
        ...

    def embedded_snapshot(self, *, progress: bool, world_version: str | None = None) -> Path:
        """The embedded default corpus (the generated world), built once into the cache
        (``world_version``: the world generator's version an env id pins; None: today's)."""
        ...

    def task_generator(self) -> str:
        """The name and version of the generator that builds default TaskSets now."""
        ...

    def build_default_taskset(self, snapshot: Snapshot) -> TaskSet:
        """The default TaskSet of ``snapshot``, made by :meth:`task_generator`."""
        ...

    def build_corpus_taskset(self, snapshot: Snapshot) -> TaskSet:
        """The default questions of any corpus given without tasks, made by
        :meth:`task_generator` (typed relations only; a one-line error when it has none)."""
        ...

    def run_episodes(self, request: EpisodeRequest) -> dict[str, list[Outcome]]:
        """Each task's outcomes, by task id, in run order (run ``r`` with seed ``seed + r``)."""
        ...


_SERVICES: list[RootServices] = []


def install_root_services(services: RootServices) -> None:
    """Install the root's services (the last one installed wins)."""
    _SERVICES[:] = [services]


def root_services() -> RootServices:
    """The installed services.

    Raises:
        TaskSetError: None is installed (``import wikigym`` installs them).
    """
    if not _SERVICES:
        raise TaskSetError(
            "wikigym's defaults are not installed; import wikigym (which installs them) or pass "
            "corpus= and tasks= explicitly"
        )
    return _SERVICES[0]
