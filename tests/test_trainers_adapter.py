"""The TRL adapter over the real default world: tools run through the env, rewards, masking,
the finishing hook, the dataset, the SFT export. No model involved (fast)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

pytest.importorskip("trl")

from transformers.utils import get_json_schema

from wikigym.trainers.adapter import (
    EnvSpec,
    dataset_rows,
    make_environment_factory,
    make_finish_episodes,
)
from wikigym.trainers.episodes import EpisodeSink
from wikigym.trainers.sft import export_sft, load_sft_dataset


@pytest.fixture(scope="module")
def spec() -> EnvSpec:
    return EnvSpec("WikiSearch-v1", kwargs={"python": "off", "max_steps": 3})


def oracle_args(spec: EnvSpec, i: int = 0) -> tuple[str, list]:
    task = spec.taskset()[i]
    return task.task_id, task.oracle


def test_tool_methods_are_the_env_tools_with_schemas(spec: EnvSpec) -> None:
    factory = make_environment_factory(spec)
    env = factory()
    public = sorted(n for n in dir(type(env)) if not n.startswith("_"))
    assert public == ["answer", "find", "get_reward", "open", "reset", "search"]  # python off
    schema = get_json_schema(env.search)["function"]
    assert schema["name"] == "search"
    assert schema["parameters"]["properties"]["k"]["type"] == "integer"
    assert get_json_schema(env.answer)["function"]["parameters"]["required"] == ["text"]
    calc = make_environment_factory(EnvSpec("Calc-v0"))()
    assert sorted(n for n in dir(type(calc)) if not n.startswith("_")) == [
        "answer",
        "get_reward",
        "reset",
    ]


def test_trl_schema_of_the_adapter_is_the_env_schema() -> None:
    """The schema TRL derives from the adapter's methods is the env's exported schema (in the
    dialect TRL can express: names, descriptions, types, nullability, required)."""
    from wikigym.tools import get_tool, openai_tools_schema, tool_names
    from wikigym.tools.methods import trl_schema
    from wikigym.trainers.adapter import tool_env_class

    cls = tool_env_class(tool_names())
    exported = {t["function"]["name"]: t["function"] for t in openai_tools_schema()}
    for name in tool_names():
        derived = get_json_schema(getattr(cls, name))
        assert derived == trl_schema(name), name
        function = derived["function"]
        env_side = exported[name]
        assert function["description"] == env_side["description"] == get_tool(name).description
        params, env_params = function["parameters"], env_side["parameters"]
        assert params.get("required", []) == env_params.get("required", [])
        assert list(params["properties"]) == list(env_params["properties"])
        for arg, prop in params["properties"].items():
            assert prop["description"] == env_params["properties"][arg]["description"]


def test_oracle_episode_through_tools_scores_one(spec: EnvSpec) -> None:
    sink = EpisodeSink()
    env = make_environment_factory(spec, sink)()
    task_id, oracle = oracle_args(spec)
    assert env.reset(prompt=[], task_id=task_id, seed=0) is None
    outputs = [getattr(env, c.name)(**c.arguments) for c in oracle]
    assert "results" in outputs[0] and outputs[0].count("[p") >= 1  # real search output
    assert env.get_reward() == 1.0
    assert "episode is over" in env.search("more")  # no step after the end
    (rec,) = sink.drain()
    assert rec.task_id == task_id and rec.answered and rec.finished_by == "tool"
    assert rec.tool_calls == len(oracle) and rec.valid_tool_calls == len(oracle)
    assert rec.components["outcome"] == 1.0 and not rec.masked


def test_budget_spent_is_masked_and_none(spec: EnvSpec) -> None:
    sink = EpisodeSink()
    env = make_environment_factory(spec, sink)()
    task_id, _ = oracle_args(spec, 1)
    env.reset(task_id=task_id, seed=1)
    env.search("first")
    env.open("No Such Page At All")  # not_found
    env.search("third")
    assert env.get_reward() is None
    (rec,) = sink.drain()
    assert rec.masked and rec.mask_reason == "env_truncated" and rec.finished_by == "budget"
    assert rec.tool_errors.get("not_found") == 1 and rec.valid_tool_calls == 2


def test_finish_hook_reads_text_answers_and_masks_cut_completions(spec: EnvSpec) -> None:
    sink = EpisodeSink()
    factory = make_environment_factory(spec, sink)
    envs = [factory() for _ in range(4)]
    task = spec.taskset()[2]
    for e in envs:
        e.reset(task_id=task.task_id, seed=0)
    completions = [
        [{"role": "assistant", "content": f"<answer>{task.answer}</answer>"}],
        [{"role": "assistant", "content": "I do not know"}],
        [{"role": "assistant", "content": f"<answer>{task.answer}"}],  # cut by the length limit
        [{"role": "assistant", "content": "wrong wrong"}],
    ]
    stop = 7
    ids = [[1, stop], [1, stop], [1, 2], [1, stop]]
    hook = make_finish_episodes([stop])
    assert hook(completions=completions, environments=envs, completion_ids=ids) == [None] * 4
    rewards = [e.get_reward() for e in envs]
    assert rewards == [1.0, 0.0, None, 0.0]
    recs = sink.drain()
    assert [r.finished_by for r in recs][:2] == ["text", "no_answer"]
    assert recs[2].mask_reason == "length_truncated"
    assert recs[1].tool_errors == {"no_tool_call": 1}


def test_calc_episode_through_answer_tool() -> None:
    spec = EnvSpec("Calc-v0", kwargs={"level": 1})
    rows = dataset_rows(spec, num_rows=3, seed=5)
    assert [r["seed"] for r in rows] == [5, 6, 7] and rows[0]["task_id"].startswith("calc-L1-")
    env = make_environment_factory(spec)()
    env.reset(**rows[0])
    assert env.answer(text="-1") and env.get_reward() == 0.0
    # The same seed gives the same problem: the prompt in the row is what the env asks.
    env.reset(**rows[0])
    assert env._env.unwrapped._question in rows[0]["prompt"][0]["content"]


def test_dataset_rows_cover_the_taskset(spec: EnvSpec) -> None:
    rows = dataset_rows(spec, num_rows=5)
    ids = [t.task_id for t in list(spec.taskset())[:5]]
    assert [r["task_id"] for r in rows] == ids
    assert rows[0]["prompt"][0]["role"] == "user" and "Question:" in rows[0]["prompt"][0]["content"]


def test_sft_export_roundtrip(spec: EnvSpec, tmp_path: Path) -> None:
    path = export_sft(spec, tmp_path, limit=5)
    lines = path.read_text().splitlines()
    assert len(lines) == 5
    chat = json.loads(lines[0])
    roles = [m["role"] for m in chat["messages"]]
    assert roles[0] == "user" and roles[1:3] == ["assistant", "tool"] and roles[-1] == "assistant"
    call = chat["messages"][1]["tool_calls"][0]["function"]
    assert call["name"] == "search" and isinstance(json.loads(call["arguments"]), dict)
    assert "results" in chat["messages"][2]["content"]  # the real tool output
    assert {t["function"]["name"] for t in json.loads(chat["tools"])} >= {"search", "answer"}
    ds = load_sft_dataset(tmp_path)
    assert len(ds) == 5 and set(ds.column_names) >= {"messages", "tools", "task_id"}
