"""How the package root wires the rooms together when ``wikigym`` is imported.

Three hooks, none loading anything heavy at import:

- the envs are registered with Gymnasium as soon as Gymnasium is loaded;
- synth's builder of the default TaskSet is registered with the tasks room
  (:mod:`wikigym.tasks.provider`), which envs, eval, trainers and the CLI resolve defaults
  through: envs need the default TaskSet but may not import synth, which sits above them,
  and only the root sees every room;
- eval's runner of repeated episodes is registered with the tasks room
  (:mod:`wikigym.tasks.episode_runner`) for ``synth calibrate``: synth may not import eval.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from wikigym.envs.registration import register_when_gymnasium_loads
from wikigym.tasks.episode_runner import Outcome, set_episode_runner
from wikigym.tasks.provider import set_default_taskset_provider

if TYPE_CHECKING:
    from pathlib import Path

    from wikigym.corpora.snapshot import Snapshot
    from wikigym.tasks.taskset import TaskSet


class SynthDefaultTaskSet:
    """synth's mixed-difficulty default TaskSet (synth is loaded on first use only)."""

    def generator(self) -> str:
        """synth's generator name and version."""
        from wikigym.synth.generate import GENERATOR

        return GENERATOR

    def build(self, snapshot: Snapshot) -> TaskSet:
        """synth's default TaskSet of ``snapshot`` (200 tasks, 50 per level, seed 0)."""
        from wikigym.synth.default import default_taskset

        return default_taskset(snapshot)

    def build_for_corpus(self, snapshot: Snapshot) -> TaskSet:
        """synth's questions of any corpus (typed relations; one line when it has none)."""
        from wikigym.synth.default import corpus_taskset

        return corpus_taskset(snapshot)


class EvalEpisodes:
    """eval's runner of repeated episodes, for ``synth calibrate`` (eval loads on use)."""

    def run(
        self,
        tasks_file: Path,
        *,
        agent: str,
        k: int,
        seed: int,
        corpus: str | None,
        max_steps: int,
        temperature: float,
        model: str | None,
    ) -> dict[str, list[Outcome]]:
        """See :class:`wikigym.tasks.episode_runner.EpisodeRunner`."""
        from wikigym.eval.calibrate import EvalEpisodeRunner

        return EvalEpisodeRunner().run(
            tasks_file, agent=agent, k=k, seed=seed, corpus=corpus, max_steps=max_steps,
            temperature=temperature, model=model,
        )  # fmt: skip


def wire() -> None:
    """Install the hooks (idempotent)."""
    register_when_gymnasium_loads()
    set_default_taskset_provider(SynthDefaultTaskSet())
    set_episode_runner(EvalEpisodes())
