"""The default questions of a corpus given without tasks come from synth's typed relations, on
any real dump; a corpus that cannot make them says so in one line (issue 36).

Before, ``gym.make("WikiSearch-v1", corpus=<real snapshot>)`` drew one-hop questions of raw
infobox keys ("What is the ld7 of Arabic?", tasks/one_hop.py)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import gymnasium as gym
import pytest

from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
from wikigym.corpora.vocabulary import vocabulary
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import TaskSetError
from wikigym.synth.generate import GENERATOR
from wikigym.synth.query import relations_of, unwrap
from wikigym.synth.templates import TEMPLATES
from wikigym.tasks.defaults import resolve_resources
from wikigym.tasks.one_hop import one_hop_tasks

# A raw key shows as a token with an underscore or letters and digits run together ("ld7",
# "population_total"); no typed relation's wording has one.
RAW_KEY = re.compile(r"\b(?:[a-z]+_[a-z_]+|[a-z]+\d+[a-z\d]*)\b")


def typed(relation: str) -> bool:
    return relation in vocabulary().relations or relation in TEMPLATES


def test_the_default_questions_of_a_real_dump_ask_typed_relations(
    enwiki_snapshot: Snapshot,
) -> None:
    _, tasks = resolve_resources(enwiki_snapshot, None)
    assert len(tasks) >= 20
    for t in tasks:
        assert t.generator == GENERATOR and t.snapshot_id == enwiki_snapshot.snapshot_id
        relations = relations_of(unwrap(t.query))
        assert relations and all(typed(r) for r in relations), (relations, t.question)
        assert not RAW_KEY.search(t.question), t.question
    # Every level its facts allow, each at most 50: easy and medium on this excerpt.
    levels = {t.level for t in tasks}
    assert {"easy", "medium"} <= levels
    assert "closed_world" in tasks[0].difficulty


def test_the_env_made_on_a_real_dump_plays_them(enwiki_snapshot: Snapshot) -> None:
    env = gym.make("WikiSearch-v1", corpus=str(enwiki_snapshot.path), python="off")
    base = env.unwrapped
    assert isinstance(base, WikiSearchEnv)
    questions = []
    for seed in range(12):
        obs, info = env.reset(seed=seed)
        task = base.tasks.get(info["task_id"])
        questions.append(task.question)
        assert task.question in obs and task.generator == GENERATOR
    assert not any(RAW_KEY.search(q) for q in questions), questions
    env.close()


def test_the_old_one_hop_questions_asked_raw_keys(enwiki_snapshot: Snapshot) -> None:
    """What the default was: the check above would have failed on it."""
    old = one_hop_tasks(enwiki_snapshot)
    assert any(RAW_KEY.search(t.question) for t in old)


def test_a_corpus_without_typed_facts_says_so_in_one_line(
    shared_data: Path, tmp_path: Path
) -> None:
    out = tmp_path / "dpr"
    src = open_build_source(shared_data / "wiki/dpr-wiki18-1000passages.jsonl")
    build_snapshot([src], out, BuildConfig(), progress=False)
    snap = Snapshot.open(out)
    with pytest.raises(TaskSetError) as err:
        resolve_resources(snap, None)
    message = str(err.value)
    assert "\n" not in message and "no default questions" in message and "tasks=FILE" in message


def test_the_default_questions_are_cached_by_snapshot_and_generator(
    enwiki_snapshot: Snapshot,
) -> None:
    from wikigym.tasks.defaults import corpus_tasks_path

    path = corpus_tasks_path(enwiki_snapshot)
    resolve_resources(enwiki_snapshot, None)
    assert path.is_file() and enwiki_snapshot.snapshot_id[:16] in path.name
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert first["generator"] == GENERATOR
