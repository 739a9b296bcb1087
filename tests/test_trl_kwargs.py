"""``wikigym.trainers.trl_kwargs``: one call gives TRL everything, and all of it pickles.

TRL's ``AsyncGRPOTrainer`` pickles the environment factory and the reward functions into a
spawned process; here the whole dict goes through pickle and cloudpickle, and a spawned process
runs an episode with the unpickled factory and hook (real default world, no model)."""

from __future__ import annotations

import multiprocessing as mp
import pickle
from typing import Any

import pytest

pytest.importorskip("trl")

import cloudpickle

import wikigym.trainers
from wikigym.trainers.adapter import EnvironmentFactory, FinishEpisodes, ToolEnv, tool_env_class
from wikigym.trainers.trl_inputs import TrainerStopTokens

ENV_KWARGS: dict[str, Any] = {"python": "off", "max_steps": 10}  # oracles take 3 to 9 steps


@pytest.fixture(scope="module")
def kw() -> dict[str, Any]:
    return wikigym.trainers.trl_kwargs("WikiSearch-v1", **ENV_KWARGS)


def play(kw: dict[str, Any], task_index: int, answer: str | None) -> dict[str, Any]:
    """One episode the way TRL runs it: reset from a dataset row, the oracle's tool calls but
    its last (the answer call), then the final assistant turn as plain text through the hook."""
    row = kw["train_dataset"][task_index]
    env = kw["environment_factory"]()
    env.reset(**row)
    task = env._env.unwrapped.tasks.get(row["task_id"])
    outputs = [getattr(env, c.name)(**c.arguments) for c in task.oracle[:-1]]
    text = f"<answer>{answer if answer is not None else task.answer}</answer>"
    (finish,) = kw["reward_funcs"]
    none = finish(
        completions=[[{"role": "assistant", "content": text}]],
        environments=[env],
        completion_ids=[[1, 2]],
    )
    return {"outputs": outputs, "reward": env.get_reward(), "hook": none, "cls": type(env)}


def child(payload: bytes, queue: Any) -> None:
    kw = pickle.loads(payload)
    right, wrong = play(kw, 0, None), play(kw, 0, "certainly not this")
    queue.put(
        {
            "right": right["reward"],
            "wrong": wrong["reward"],
            "searched": right["outputs"][0].splitlines()[0],
            "cls": right["cls"].__qualname__,
            "resolved_before_use": kw["environment_factory"].spec._resolved is not None,
        }
    )


def test_trl_kwargs_is_everything_grpo_takes(kw: dict[str, Any]) -> None:
    import inspect

    from trl import GRPOTrainer

    assert set(kw) == {"train_dataset", "environment_factory", "reward_funcs", "callbacks"}
    assert set(kw) <= set(inspect.signature(GRPOTrainer).parameters)
    assert isinstance(kw["environment_factory"], EnvironmentFactory)
    (finish,) = kw["reward_funcs"]
    (callback,) = kw["callbacks"]
    assert isinstance(finish, FinishEpisodes) and callback.finish is finish
    row = kw["train_dataset"][0]
    assert set(row) == {"prompt", "task_id", "seed"} and row["prompt"][0]["role"] == "user"
    assert len(kw["train_dataset"]) == len(kw["environment_factory"].spec.taskset())


def test_plain_text_answer_scores_in_process(kw: dict[str, Any]) -> None:
    right, wrong = play(kw, 3, None), play(kw, 3, "certainly not this")
    assert right["hook"] == [None] and right["reward"] == 1.0 and wrong["reward"] == 0.0
    assert right["outputs"][0].startswith("search(")


@pytest.mark.parametrize("dumps", [pickle.dumps, cloudpickle.dumps], ids=["pickle", "cloudpickle"])
def test_round_trip_keeps_every_part(kw: dict[str, Any], dumps: Any) -> None:
    back = pickle.loads(dumps(kw))
    assert set(back) == set(kw)
    assert back["train_dataset"].to_list() == kw["train_dataset"].to_list()
    factory = back["environment_factory"]
    assert factory.env_class is kw["environment_factory"].env_class  # by reference
    assert factory.spec._resolved is None  # the snapshot travels as a recipe, reopened on use
    assert factory.spec.recipe() == kw["environment_factory"].spec.recipe()
    finish, callback = back["reward_funcs"][0], back["callbacks"][0]
    assert callback.finish is finish  # the callback still configures the hook TRL calls
    assert finish.__name__ == "finish_episodes"
    assert play(back, 5, None)["reward"] == 1.0


@pytest.mark.slow  # a spawned interpreter imports torch, datasets and transformers (~30 s here)
def test_unpickled_factory_runs_episodes_in_a_spawned_process(kw: dict[str, Any]) -> None:
    ctx = mp.get_context("spawn")  # as TRL's AsyncRolloutWorker starts its child
    queue = ctx.Queue()
    proc = ctx.Process(target=child, args=(cloudpickle.dumps(kw), queue))
    proc.start()
    try:
        got = queue.get(timeout=300)
    finally:
        proc.join(timeout=60)
    assert proc.exitcode == 0
    assert got["right"] == 1.0 and got["wrong"] == 0.0
    assert got["searched"].startswith("search(") and "results" in got["searched"]
    assert got["cls"] == kw["environment_factory"].env_class.__qualname__
    assert got["resolved_before_use"]


def test_callback_reads_the_trainers_stop_ids_and_masking() -> None:
    """The callback gives the hook the stop ids TRL uses, so a length-cut completion is masked."""
    from transformers import GenerationConfig

    finish = FinishEpisodes()
    assert finish.stop_token_ids is None
    tok = type("Tok", (), {"eos_token_id": 7, "pad_token_id": 0})()
    model = type("M", (), {"generation_config": GenerationConfig(eos_token_id=[7, 9])})()
    args = type("A", (), {"mask_truncated_completions": True})()
    TrainerStopTokens(finish).on_init_end(args, None, None, processing_class=tok, model=model)
    assert finish.stop_token_ids == frozenset({0, 7, 9}) and finish.mask_length_truncated


def test_every_tool_set_has_a_module_level_class() -> None:
    import itertools

    from wikigym.tools import tool_names
    from wikigym.trainers import adapter

    names = list(tool_names())
    for size in range(1, len(names) + 1):
        for combo in itertools.combinations(names, size):
            cls = tool_env_class(list(reversed(combo)))  # any order: the same class
            assert issubclass(cls, ToolEnv) and getattr(adapter, cls.__qualname__) is cls
            assert pickle.loads(pickle.dumps(cls)) is cls
            public = {n for n in dir(cls) if not n.startswith("_")}
            assert public == {*combo, "reset", "get_reward"}
    with pytest.raises(ValueError, match="no tool method"):
        tool_env_class(["search", "browse"])
    with pytest.raises(ValueError, match="empty tool list"):
        tool_env_class([])


def test_multi_env_kwargs_route_rows_by_environment() -> None:
    import inspect

    from trl import GRPOTrainer

    kw = wikigym.trainers.trl_multi_kwargs(
        {"search": {"env_id": "WikiSearch-v1", **ENV_KWARGS}, "calc": {"env_id": "Calc-v0"}},
        num_rows={"search": 3, "calc": 2},
    )
    assert set(kw) <= set(inspect.signature(GRPOTrainer).parameters)
    rows = kw["train_dataset"].to_list()
    assert [r["environment"] for r in rows] == ["search"] * 3 + ["calc"] * 2
    factories = kw["environment_factory"]
    assert set(factories) == {"search", "calc"}
    calc = factories["calc"]()
    calc.reset(**rows[3])
    gold = calc._env.unwrapped.gold
    assert calc.answer(text=str(gold)) and calc.get_reward() == 1.0
    search = factories["search"]()
    search.reset(**rows[0])
    assert search._task_id == rows[0]["task_id"] and hasattr(search, "search")
    back = pickle.loads(cloudpickle.dumps(kw))
    assert set(back["environment_factory"]) == {"search", "calc"}


def test_masked_rollouts_do_not_make_trl_print_them(caplog: Any) -> None:
    import logging

    kw = wikigym.trainers.trl_kwargs("WikiSearch-v1", python="off", max_steps=1)
    (finish,), (callback,) = kw["reward_funcs"], kw["callbacks"]
    tok = type("Tok", (), {"eos_token_id": 7, "pad_token_id": 0})()
    callback.on_init_end(type("A", (), {})(), None, None, processing_class=tok)
    env = kw["environment_factory"]()
    env.reset(**kw["train_dataset"][0])
    env.search(query="zzqx")  # the one step of the budget, no answer: masked
    finish(completions=[[]], environments=[env], completion_ids=[[1, 7]])
    assert env.get_reward() is None and finish.masked_last_call == 1
    log = logging.getLogger("trl.trainer.grpo_trainer")
    with caplog.at_level(logging.WARNING, logger=log.name):
        log.warning("All reward functions returned None for the following kwargs:\n{...}\n")
        assert not caplog.records  # wikigym's masked rollout: silenced
        finish.masked_last_call = 0
        log.warning("All reward functions returned None for the following kwargs:\n{...}\n")
        assert len(caplog.records) == 1  # any other all-None row still warns
