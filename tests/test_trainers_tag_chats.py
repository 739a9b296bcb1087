"""Search-R1 tag chats for the cold start: the env's own observations, tags the env parses,
answers only from what a search showed."""

from __future__ import annotations

import re

import pytest

from wikigym.envs.actions import parse_action
from wikigym.errors import WikigymError
from wikigym.tasks.defaults import default_resources
from wikigym.trainers.adapter import EnvSpec
from wikigym.trainers.coldstart import compact_prompt, level_subset
from wikigym.trainers.tag_chats import shows, tag_chats


@pytest.fixture(scope="module")
def spec() -> EnvSpec:
    _, tasks = default_resources(progress=False)
    return EnvSpec(
        tasks=level_subset(tasks, "easy"),
        kwargs={"python": "off", "max_steps": 4, "tool_format": "search-r1", "search_k": 3},
    )


def test_tag_chats_replay_to_a_positive_reward_with_the_env_observations(spec: EnvSpec) -> None:
    chats = tag_chats(spec)
    tasks = {t.task_id: t for t in spec.taskset()}
    # Most easy tasks show their answer in the question's or the entity's 3 results.
    assert 30 <= len(chats) <= len(tasks)
    assert {c["searches"] for c in chats} <= {1, 2}
    env = spec.make()
    snapshot = env.unwrapped.snapshot
    for chat in chats:
        task = tasks[chat["task_id"]]
        msgs = chat["messages"]
        assert msgs[0] == compact_prompt(task.question, system=False)[0]
        assert [m["role"] for m in msgs[1:]] == ["assistant", "tool"] * chat["searches"] + [
            "assistant"
        ]
        # The first search is the question as written; the answer is the last turn.
        assert msgs[1]["content"] == f"<search> {task.question} </search>"
        assert msgs[-1]["content"] == f"<answer> {task.answer} </answer>"
        env.reset(seed=0, options={"task_id": task.task_id})
        for i in range(1, len(msgs), 2):
            parsed = parse_action(msgs[i]["content"])
            assert not parsed.errors and len(parsed.calls) == 1
            got, _, term, _, info = env.step(msgs[i]["content"])
            if i == len(msgs) - 1:
                assert term and not info["mask"] and info["reward_components"]["outcome"] > 0
            else:
                assert got == msgs[i + 1]["content"]  # the env's own observation, <= 3 results
                assert re.match(r"search\('.*'\): [123] results?\n", got, flags=re.S)
        # The answer was shown by the last search (as words), not guessed.
        query = msgs[-3]["content"].removeprefix("<search> ").removesuffix(" </search>")
        assert shows(task.answer, snapshot.search(query, 3))
    env.close()
    assert tag_chats(spec) == chats  # deterministic


def test_shows_needs_whole_words() -> None:
    class Hit:
        def __init__(self, title: str, text: str) -> None:
            self.title, self.text = title, text

    assert shows("5", [Hit("A", "It has 5 rooms.")])
    assert not shows("5", [Hit("A", "Built in 1905 [p15].")])
    assert shows("Brondusk Textiles", [Hit("Brondusk Textiles", "")])
    assert not shows("Brondusk", [Hit("A", "Brondusks")])


def test_tag_chats_need_a_taskset() -> None:
    with pytest.raises(WikigymError, match="no TaskSet"):
        tag_chats(EnvSpec(env_id="Calc-v0"))
