"""verl (0.9): the "wikigym" agent loop, built the way verl's AgentLoopWorker builds it
(hydra instantiate from the registry, or from an agent-loop config file), plays episodes
against a fake token server: oracle calls score 1, a wrong answer 0, and response_mask is 1
exactly on the model's tokens. Runs in verl's own venv (.ci/run makes it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from integration_support import WRONG_ANSWER, need, oracle_actions

need("verl")

import hydra  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.utils.dataset.rl_dataset import RLHFDataset  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import wikigym.integrations.verl as wverl  # noqa: E402

pytestmark = pytest.mark.slow  # builds the tiny tokenizer (~30 s)

RESPONSE_LENGTH = 6000


class FakeTokenServer:
    """verl's LLM server interface (``generate`` -> TokenOutput) with scripted replies."""

    def __init__(self, tokenizer: Any, tasks: list[Any], wrong: set[str]) -> None:
        self.tokenizer = tokenizer
        self.by_question = {t.question: t for t in tasks}
        self.wrong = wrong
        self.calls: dict[str, int] = {}
        self.replies: dict[str, list[list[int]]] = {}

    async def generate(self, *, request_id: str, prompt_ids: list[int], **_: Any) -> TokenOutput:
        n = self.calls.get(request_id, 0)
        self.calls[request_id] = n + 1
        prompt = self.tokenizer.decode(prompt_ids)
        question = prompt.split("Question: ", 1)[1].split("<|im_end|>", 1)[0].strip()
        task = self.by_question[question]
        action = WRONG_ANSWER if task.task_id in self.wrong else oracle_actions(task)[n]
        ids = self.tokenizer.encode(action, add_special_tokens=False)
        ids.append(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        self.replies.setdefault(request_id, []).append(ids)
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from wikigym.trainers.tiny import build_tokenizer

    return build_tokenizer()


def trainer_config() -> Any:
    return OmegaConf.create(
        {
            "actor_rollout_ref": {
                "rollout": {"prompt_length": 4096, "response_length": RESPONSE_LENGTH}
            },
            "data": {"apply_chat_template_kwargs": {}},
        }
    )


def build_loop(entry: Any, tokenizer: Any, server: FakeTokenServer) -> Any:
    config = trainer_config()
    return hydra.utils.instantiate(  # as verl's AgentLoopWorker._run_agent_loop does
        config=entry,
        trainer_config=DictConfigWrap(config=config),
        server_manager=server,
        tokenizer=tokenizer,
        processor=None,
        hf_model_type=None,
        dataset_cls=RLHFDataset,
        data_config=DictConfigWrap(config.data),
        tools=ToolListWrap([]),
    )


def play(entry: Any, tokenizer: Any, server: FakeTokenServer, sampling: dict, **row: Any) -> Any:
    """Build and run the loop inside one event loop, as verl's worker does."""

    async def go() -> Any:
        return await build_loop(entry, tokenizer, server).run(sampling, **row)

    return asyncio.run(go())


def test_registered_by_name() -> None:
    assert _agent_loop_registry["wikigym"] == {
        "_target_": "wikigym.integrations.verl.WikigymAgentLoop"
    }
    assert wverl.AGENT_NAME == "wikigym"


def test_episodes_reward_and_mask(tokenizer: Any, tmp_path: Path) -> None:
    env_kwargs = {"python": "off", "max_steps": 12}
    data = wverl.verl_dataset(tmp_path / "train.parquet", n=3, **env_kwargs)
    # The rows as verl's RLHFDataset hands them to the agent loop.
    dataset = RLHFDataset(
        str(data),
        tokenizer,
        OmegaConf.create({"max_prompt_length": 4096, "cache_dir": str(tmp_path)}),
    )
    tasks = list(gym.make("WikiSearch-v0", **env_kwargs).unwrapped.tasks)[:3]
    wrong = {tasks[2].task_id}
    server = FakeTokenServer(tokenizer, tasks, wrong)
    # The documented config-file form: name, _target_ and the env's arguments.
    config_file = tmp_path / "agent_loops.yaml"
    config_file.write_text(
        "- name: wikigym\n"
        "  _target_: wikigym.integrations.verl.WikigymAgentLoop\n"
        "  env_id: WikiSearch-v0\n"
        "  env_kwargs: {python: 'off', max_steps: 12}\n"
    )
    (entry,) = OmegaConf.load(config_file)
    for i, task in enumerate(tasks):
        row = dataset[i]
        assert row["agent_name"] == "wikigym" and row["extra_info"]["task_id"] == task.task_id
        out = play(entry, tokenizer, server, {"temperature": 1.0}, **row)
        assert len(server.replies) == i + 1  # one request id per sample
        replies = list(server.replies.values())[-1]
        assert out.extra_fields["wikigym_task_id"] == task.task_id
        if task.task_id in wrong:
            assert out.reward_score == 0.0 and len(replies) == 1
        else:
            assert out.reward_score == 1.0 and out.extra_fields["wikigym_end"] == "answered"
            assert len(replies) == len(task.oracle)
        assert len(out.response_ids) == len(out.response_mask)
        model = [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if m]
        assert model == [t for reply in replies for t in reply]  # exactly the model's tokens
        env_text = tokenizer.decode(
            [t for t, m in zip(out.response_ids, out.response_mask, strict=True) if not m]
        )
        if len(replies) > 1:
            assert "results" in env_text  # the search observation, masked out
        assert out.response_logprobs is not None
        assert len(out.response_logprobs) == len(out.response_ids)
        assert "Question:" in tokenizer.decode(out.prompt_ids)
        assert out.as_dict()["response_mask"].shape == (len(out.response_ids),)


def test_registry_entry_builds_with_defaults_for_calc(tokenizer: Any) -> None:
    class CalcServer(FakeTokenServer):
        async def generate(self, *, request_id: str, prompt_ids: list[int], **_: Any):
            env = gym.make("Calc-v0")
            obs, _ = env.reset(seed=7)
            assert obs.rsplit("Problem: ", 1)[1] in self.tokenizer.decode(prompt_ids)
            ids = self.tokenizer.encode(
                f"<answer>{env.unwrapped.gold}</answer>", add_special_tokens=False
            )
            return TokenOutput(token_ids=ids)

    entry = OmegaConf.create(
        {"_target_": "wikigym.integrations.verl.WikigymAgentLoop", "env_id": "Calc-v0"}
    )
    server = CalcServer(tokenizer, [], set())
    out = play(entry, tokenizer, server, {}, raw_prompt=[], extra_info={"seed": 7})
    assert out.reward_score == 1.0 and sum(out.response_mask) == len(out.response_ids)
