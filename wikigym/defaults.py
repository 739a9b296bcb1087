"""Every default of wikigym, resolved in one place: the cache, the embedded corpus, the default
TaskSet and its generator (and eval's episode runner, which synth borrows).

The package root sees every room, so this module answers for the rooms below it: the env,
eval, the trainers, synth and the CLI ask :mod:`wikigym.tasks.defaults`, which asks the
:class:`PackageDefaults` installed here (:func:`install`, run by ``import wikigym``). Nothing
heavy is loaded until a default is first used.

- cache: ``$WIKIGYM_CACHE``, else ``$XDG_CACHE_HOME/wikigym``, else ``~/.cache/wikigym``;
- corpus: the generated world (:data:`wikigym.corpora.default.DEFAULT_ARTICLES` articles,
  seed :data:`~wikigym.corpora.default.DEFAULT_SEED`), built once into the cache;
- tasks: synth's mixed-difficulty default TaskSet (:func:`wikigym.synth.default.default_taskset`),
  cached beside the world under the generator's name;
- a corpus's questions (given without tasks): synth's typed relations
  (:func:`wikigym.synth.default.corpus_taskset`), cached by snapshot id and generator;
- generator: :data:`wikigym.synth.generate.GENERATOR`.

Which of these an env id uses is pinned by the id (:mod:`wikigym.envs.registration`).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

from wikigym.envs.registration import register_when_gymnasium_loads
from wikigym.tasks.hooks import EpisodeRequest, Outcome, install_root_services

if TYPE_CHECKING:
    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.taskset import TaskSet


class PackageDefaults:
    """The root's :class:`~wikigym.tasks.hooks.RootServices`."""

    def cache_dir(self) -> Path:
        """``$WIKIGYM_CACHE``, else ``$XDG_CACHE_HOME/wikigym``, else ``~/.cache/wikigym``."""
        return cache_dir()

    def embedded_snapshot(self, *, progress: bool, world_version: str | None = None) -> Path:
        """The generated world, built once into the cache (see :mod:`wikigym.corpora.default`)."""
        from wikigym.corpora.default import ensure_default_snapshot

        return ensure_default_snapshot(self.cache_dir(), progress=progress, version=world_version)

    def task_generator(self) -> str:
        """synth's generator name and version."""
        from wikigym.synth.generate import GENERATOR

        return GENERATOR

    def build_default_taskset(self, snapshot: Snapshot) -> TaskSet:
        """synth's default TaskSet of ``snapshot`` (200 tasks, 50 per level, seed 0)."""
        from wikigym.synth.default import default_taskset

        return default_taskset(snapshot)

    def build_corpus_taskset(self, snapshot: Snapshot) -> TaskSet:
        """synth's questions of any corpus (up to 50 a level; one line when it has none)."""
        from wikigym.synth.default import corpus_taskset

        return corpus_taskset(snapshot)

    def run_episodes(self, request: EpisodeRequest) -> dict[str, list[Outcome]]:
        """eval's runner of repeated episodes (for ``synth calibrate``)."""
        from wikigym.eval.calibrate import run_episodes

        return run_episodes(request)


def cache_dir() -> Path:
    """``$WIKIGYM_CACHE``, else ``$XDG_CACHE_HOME/wikigym``, else ``~/.cache/wikigym``."""
    if env := os.environ.get("WIKIGYM_CACHE"):
        return Path(env)
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "wikigym"


def install() -> None:
    """Register the env ids (when Gymnasium loads) and install the defaults (idempotent)."""
    register_when_gymnasium_loads()
    install_root_services(PackageDefaults())
