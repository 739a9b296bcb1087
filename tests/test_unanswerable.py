"""Questions with no answer: near-miss generation, proofs of emptiness, the abstain form of
``answer`` and the ``abstention`` reward component."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wikigym.corpora.default import build_world_snapshot
from wikigym.corpora.snapshot import Snapshot
from wikigym.envs.recipe import env_spec, make_env
from wikigym.envs.rewards import EpisodeOutcome, RewardConfig, compute_reward
from wikigym.errors import SynthError
from wikigym.eval.agents import OracleAgent
from wikigym.eval.runner import run_eval
from wikigym.synth.cli import main
from wikigym.synth.generate import SynthConfig, generate_tasks
from wikigym.synth.unanswerable import unanswerable_slots
from wikigym.synth.verify import verify_taskset
from wikigym.tasks.taskset import NO_ANSWER, UNANSWERABLE, TaskSet
from wikigym.tools import format_tool_call, openai_tools_schema
from wikigym.tools.answer import AnswerArgs


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("unanswerable") / "world"
    build_world_snapshot(1500, 3, out, progress=False)
    return out


@pytest.fixture(scope="module")
def mixed(world: Path) -> TaskSet:
    return generate_tasks(
        Snapshot.open(world), SynthConfig(difficulty="mixed", n=20, seed=1, unanswerable=0.3)
    )


def test_rate_gives_that_share_of_near_misses_that_verify(world: Path, mixed: TaskSet) -> None:
    missing = [t for t in mixed if t.unanswerable]
    assert len(missing) == 6  # round(0.3 * 20), at the seeded slots
    assert [i for i, t in enumerate(mixed) if t.unanswerable] == sorted(
        unanswerable_slots(20, 0.3, 1)
    )
    originals = {t.task_id for t in mixed}
    for t in missing:
        assert t.answer == NO_ANSWER and t.answer_type == UNANSWERABLE and not t.rubric
        assert t.difficulty["form"] == "unanswerable"
        assert str(t.difficulty["near_miss_of"]).startswith(f"synth-{t.level}-")
        assert t.difficulty["near_miss_of"] not in originals  # the twin itself is not kept
        assert NO_ANSWER not in t.question and "[" not in t.question
        last = t.oracle[-1]
        assert last.name == "answer" and last.arguments["abstain"] is True
        assert len(t.oracle) >= 2  # gathers evidence before abstaining
    assert verify_taskset(mixed, Snapshot.open(world)) == []
    # Deterministic.
    again = generate_tasks(
        Snapshot.open(world), SynthConfig(difficulty="mixed", n=20, seed=1, unanswerable=0.3)
    )
    assert again.taskset_id == mixed.taskset_id


def test_rate_zero_leaves_the_taskset_unchanged(world: Path) -> None:
    snap = Snapshot.open(world)
    plain = generate_tasks(snap, SynthConfig(difficulty="mixed", n=8, seed=1))
    zero = generate_tasks(snap, SynthConfig(difficulty="mixed", n=8, seed=1, unanswerable=0.0))
    assert plain.taskset_id == zero.taskset_id
    assert not any(t.unanswerable for t in plain)


def test_verify_fails_a_tampered_unanswerable_task(world: Path, mixed: TaskSet) -> None:
    snap = Snapshot.open(world)
    missing = next(t for t in mixed if t.unanswerable)
    answerable = next(t for t in mixed if not t.unanswerable and t.answer_type == "entity")
    # The query now has an answer: emptiness is no longer proved.
    tampered = missing.model_copy(update={"query": answerable.query})
    failures = verify_taskset(TaskSet([tampered]), snap)
    assert failures and "must match none" in failures[0].reason
    # An oracle that answers instead of abstaining.
    calls = [*missing.oracle[:-1]]
    last = missing.oracle[-1].model_copy(update={"arguments": {"text": "Paris"}})
    failures = verify_taskset(
        TaskSet([missing.model_copy(update={"oracle": [*calls, last]})]), snap
    )
    assert failures and "instead of abstaining" in failures[0].reason


def test_cli_generate_unanswerable_and_verify(world: Path, tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    argv = ["generate", "--corpus", str(world), "--n", "6", "--seed", "2", "--unanswerable", "0.5",
            "--difficulty", "medium", "--out", str(out)]  # fmt: skip
    assert main(argv) == 0
    tasks = TaskSet.load(out)
    assert sum(t.unanswerable for t in tasks) == 3
    assert main(["verify", str(out), "--corpus", str(world)]) == 0
    bad = [*argv[:-2], "--unanswerable", "1.5", "--out", str(tmp_path / "u.jsonl")]
    assert main(bad) == 1 and not (tmp_path / "u.jsonl").exists()
    with pytest.raises(SynthError, match=r"in \[0, 1\]"):
        generate_tasks(Snapshot.open(world), SynthConfig(n=2, unanswerable=-0.1))


def _episode_reward(world: Path, tasks_file: Path, task_id: str, action: str) -> dict:
    env = make_env(env_spec("WikiSearch-v1", corpus=str(world), tasks=str(tasks_file)))
    env.reset(seed=0, options={"task_id": task_id})
    _, reward, terminated, _, info = env.step(action)
    env.close()
    assert terminated
    return {"reward": reward, **info}


def test_rewards_of_abstaining_and_answering(world: Path, mixed: TaskSet, tmp_path: Path) -> None:
    path = mixed.save(tmp_path / "m.jsonl")
    missing = next(t for t in mixed if t.unanswerable)
    answerable = next(t for t in mixed if not t.unanswerable)
    abstain = format_tool_call("answer", {"text": "nothing fits", "abstain": True})
    concrete = format_tool_call("answer", {"text": answerable.answer})
    right = format_tool_call("answer", {"text": answerable.answer})
    assert _episode_reward(world, path, missing.task_id, abstain)["reward"] == 1.0
    assert _episode_reward(world, path, missing.task_id, concrete)["reward"] == 0.0
    # Even the placeholder text, given as a concrete answer, is wrong.
    placeholder = format_tool_call("answer", {"text": NO_ANSWER})
    assert _episode_reward(world, path, missing.task_id, placeholder)["reward"] == 0.0
    assert _episode_reward(world, path, answerable.task_id, abstain)["reward"] == 0.0
    assert _episode_reward(world, path, answerable.task_id, right)["reward"] == 1.0
    # The oracle abstains on every unanswerable task and solves the rest.
    run = run_eval(OracleAgent(), path, tmp_path / "rep", agent_name="oracle", corpus=world)
    assert all(r.success for r in run.records)


def test_abstention_component() -> None:
    cfg = RewardConfig(weights={"outcome": 1.0, "abstention": 1.0})

    def score(answer: str | None, abstained: bool, unanswerable: bool) -> dict:
        outcome = EpisodeOutcome(
            answer=answer, golds=("Paris",), steps_used=2, max_steps=4,
            abstained=abstained, unanswerable=unanswerable,
        )  # fmt: skip
        return compute_reward(outcome, cfg).components

    assert score("none", True, True) == {"outcome": 1.0, "abstention": 1.0}
    assert score("Paris", False, True) == {"outcome": 0.0, "abstention": 0.0}
    assert score(None, False, True)["abstention"] == 0.0
    assert score("Paris", True, False) == {"outcome": 0.0, "abstention": 0.0}
    assert "abstention" not in score("Paris", False, False)  # nothing to score: absent
    assert score("Paris", False, False)["outcome"] == 1.0


def test_abstain_is_in_the_one_tool_schema() -> None:
    (spec,) = [t for t in openai_tools_schema() if t["function"]["name"] == "answer"]
    props = spec["function"]["parameters"]["properties"]
    assert props["abstain"]["type"] == "boolean" and "abstain" not in spec["function"][
        "parameters"
    ].get("required", [])
    assert "abstain=true" in spec["function"]["description"]
    assert AnswerArgs.model_validate({"text": "x"}).abstain is False
    assert json.dumps(AnswerArgs.model_validate({"text": "x", "abstain": True}).abstain) == "true"
