"""Every registered env id produces what it produced when it was pinned.

``tests/data/env_ids/<id>.json`` holds, per id, its pinned kwargs and a few episodes on the
embedded default (first observations and infos, and steps: an oracle run, an odd run that
walks the error paths). A change to what an id produces (a tool's description, a rendering,
a reward, the default world or TaskSet) fails here until the id's version moves: register
the next version in ``wikigym/envs/registration.py`` and record its pins with
``python tests/test_env_ids.py --record`` (which writes only ids that have no record; an
existing id's record is never rewritten).
"""

from __future__ import annotations

import inspect
import json
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import wikigym  # noqa: F401  (registers the env ids)
from wikigym.envs.registration import (
    ENV_IDS,
    ENV_VERSIONS,
    WIKI_SEARCH,
    WIKI_SEARCH_ENTRY,
    EnvVersion,
    env_version,
    register_envs,
    replayable_env_ids,
)
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import SnapshotError, TaskSetError
from wikigym.tools import format_tool_call

RECORDS = Path(__file__).parent / "data" / "env_ids"

# Actions that walk the parser's and the tools' error paths (no python: machine-dependent).
ODD_ACTIONS = [
    "",
    "I think the answer is somewhere.",
    "<search>capital city</search>",
    '<tool_call>{"name": "browse", "arguments": {}}</tool_call>',
    '<tool_call>{"name": "search", "arguments": {"query": 5}}</tool_call>',
    '{"name": "open", "arguments": {"page": "No Such Page Anywhere"}}',
    format_tool_call("open", {"page": 2, "section": "Economy"}),
    format_tool_call("find", {"page": 2, "text": "qqqzzz"}),
    format_tool_call("search", {"query": "river", "k": 2})
    + format_tool_call("find", {"page": 2, "text": "the"}),
    "<answer>nobody</answer>",
]


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, ensure_ascii=False))


def _episode(env: gym.Env[Any, Any], seed: int, actions: list[str] | None) -> dict[str, Any]:
    obs, info = env.reset(seed=seed)
    if actions is None:  # the task's oracle
        task = env.unwrapped.tasks.get(info["task_id"])  # type: ignore[attr-defined]
        actions = [format_tool_call(c.name, c.arguments) for c in task.oracle]
    steps = []
    for action in actions:
        out = env.step(action)
        steps.append(_plain({"action": action, "step": list(out)}))
        if out[2] or out[3]:
            break
    return _plain({"seed": seed, "observation": obs, "info": info, "steps": steps})


def produce(env_id: str) -> dict[str, Any]:
    """What ``env_id`` produces now, with its own kwargs only."""
    version = env_version(env_id)
    env = gym.make(env_id)
    if version.entry_point == WIKI_SEARCH_ENTRY:
        runs = [(0, None), (1, None), (2, ODD_ACTIONS), (5, None)]
    else:
        runs = [(s, ["<answer>7</answer>"]) for s in range(3)] + [(3, ["no answer here"])]
    episodes = [_episode(env, seed, actions) for seed, actions in runs]
    env.close()
    return {"env_id": env_id, "kwargs": _plain(dict(version.kwargs)), "episodes": episodes}


def _made_or_refused(env_id: str) -> dict[str, Any]:
    """What ``env_id`` produces, on any cache, fresh ones included: an older id's embedded
    default is still made (the world generator keeps its versions; TaskSets today's synth no
    longer makes ship in ``wikigym/tasks/pinned``). One that cannot be made fails here."""
    try:
        return produce(env_id)
    except (SnapshotError, TaskSetError) as exc:
        message = str(exc)
        assert f"{env_id} pins " in message and "\n" not in message, message
        pytest.fail(f"{env_id} is no longer reproducible on this cache: {message}")


def _first_difference(old: Any, new: Any, where: str = "") -> str:
    if type(old) is not type(new):
        return where or "(top)"
    if isinstance(old, dict):
        for key in sorted(set(old) | set(new)):
            if old.get(key) != new.get(key):
                return _first_difference(old.get(key), new.get(key), f"{where}.{key}")
    if isinstance(old, list):
        if len(old) != len(new):
            return f"{where} (length {len(old)} -> {len(new)})"
        for i, (a, b) in enumerate(zip(old, new, strict=True)):
            if a != b:
                return _first_difference(a, b, f"{where}[{i}]")
    return where


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_each_id_produces_what_it_was_pinned_to(env_id: str) -> None:
    record = RECORDS / f"{env_id}.json"
    assert record.is_file(), (
        f"{env_id} has no record; record it with `python tests/test_env_ids.py --record`"
    )
    pinned = json.loads(record.read_text(encoding="utf-8"))
    now = _made_or_refused(env_id)
    assert now == pinned, (
        f"{env_id} now produces something else (first difference at "
        f"{_first_difference(pinned, now)}). A trajectory recorded under {env_id} would not "
        "replay. If the change is meant, register the next version of the id in "
        "wikigym/envs/registration.py (the old one keeps its kwargs) and record it with "
        "`python tests/test_env_ids.py --record`; never re-record an existing id."
    )


@pytest.mark.parametrize("env_id", ENV_IDS)
def test_check_env_over_every_id(env_id: str) -> None:
    _made_or_refused(env_id)
    check_env(gym.make(env_id).unwrapped, skip_render_check=True)


def test_wikisearch_ids_pin_every_argument_that_decides_output() -> None:
    """A class default that changes cannot move an id: every id names each such argument."""
    taken = set(inspect.signature(WikiSearchEnv).parameters)
    not_output = {"corpus", "tasks", "tool_config", "render_mode"}  # data, objects, display
    for version in ENV_VERSIONS:
        if version.entry_point == WIKI_SEARCH_ENTRY:
            assert set(version.kwargs) == taken - not_output, version.id
            assert version.kwargs["embedded"]["env_id"] == version.id
    assert set(replayable_env_ids()) == {
        v.id for v in ENV_VERSIONS if v.entry_point == WIKI_SEARCH_ENTRY
    }


def test_an_id_refuses_an_embedded_default_it_was_not_pinned_to() -> None:
    pin = dict(env_version(WIKI_SEARCH).kwargs["embedded"])
    with pytest.raises(TaskSetError, match=f"{WIKI_SEARCH} pins the default TaskSet 000000000000"):
        gym.make(WIKI_SEARCH, embedded={**pin, "taskset_id": "0" * 64})
    with pytest.raises(SnapshotError, match="pins the embedded default world ffffffffffff"):
        gym.make(WIKI_SEARCH, embedded={**pin, "snapshot_id": "f" * 64})
    with pytest.raises(TaskSetError, match="cannot make"):
        gym.make(WIKI_SEARCH, embedded={**pin, "generator": "wikigym.synth/0"})


def test_an_older_id_keeps_the_default_questions_of_a_corpus_it_was_pinned_with(
    enwiki_snapshot: Any,
) -> None:
    """WikiSearch-v0 asked one-hop questions of a corpus given without tasks; v1 asks synth's
    (issue 36). Each id keeps its own."""
    from wikigym.synth.generate import GENERATOR
    from wikigym.tasks.one_hop import GENERATOR as ONE_HOP

    corpus = str(enwiki_snapshot.path)
    old = gym.make("WikiSearch-v0", corpus=corpus, python="off").unwrapped.tasks
    new = gym.make(WIKI_SEARCH, corpus=corpus, python="off").unwrapped.tasks
    assert {t.generator for t in old} == {ONE_HOP}
    assert {t.generator for t in new} == {GENERATOR}


def test_replay_picks_the_env_by_its_recorded_id(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A trajectory replays under the id it names, with that id's pinned kwargs: the same
    file (kwargs left to the id) replays under its own id and diverges under another."""
    from wikigym.envs import registration
    from wikigym.envs.replay import RecordTrajectory, replay

    base = env_version(WIKI_SEARCH)
    v9 = EnvVersion(
        "WikiSearch-v9",
        WIKI_SEARCH_ENTRY,
        {**base.kwargs, "max_steps": 2, "embedded": {**base.kwargs["embedded"], "env_id": "x"}},
        note="a test's version: a smaller step budget",
    )
    monkeypatch.setattr(registration, "ENV_VERSIONS", (*registration.ENV_VERSIONS, v9))
    register_envs()
    try:
        env = RecordTrajectory(gym.make("WikiSearch-v9"), tmp_path)
        env.reset(seed=0)
        env.step("hello")
        assert env.step("hello")[3]  # truncated: v9's budget of 2
        assert env.last_path is not None
        lines = env.last_path.read_text(encoding="utf-8").splitlines()
        header = json.loads(lines[0])
        assert header["env_id"] == "WikiSearch-v9"
        header["env_kwargs"] = {}  # every argument from the id itself
        for env_id, expected in (("WikiSearch-v9", (2, None)), (WIKI_SEARCH, 2)):
            path = tmp_path / f"{env_id}.jsonl"
            text = [json.dumps({**header, "env_id": env_id}), *lines[1:]]
            path.write_text("\n".join(text) + "\n", encoding="utf-8")
            steps, divergence = replay(path)
            if env_id == "WikiSearch-v9":
                assert (steps, divergence) == expected
            else:  # the package's id has 12 steps: step 2 does not end the episode
                assert divergence is not None and divergence.step == expected
    finally:
        del gym.registry["WikiSearch-v9"]


def record_missing() -> list[str]:
    """Write the record of every id that has none (never one that has)."""
    RECORDS.mkdir(parents=True, exist_ok=True)
    written = []
    for env_id in ENV_IDS:
        path = RECORDS / f"{env_id}.json"
        if path.exists():
            continue
        text = json.dumps(produce(env_id), ensure_ascii=False, sort_keys=True, indent=1)
        path.write_text(text + "\n", encoding="utf-8")
        written.append(str(path))
    return written


if __name__ == "__main__":
    if sys.argv[1:] != ["--record"]:
        sys.exit("usage: python tests/test_env_ids.py --record")
    print("\n".join(record_missing()) or "every id has its record")
