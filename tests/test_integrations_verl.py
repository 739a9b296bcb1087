"""verl (0.9), on the trainer's side: the "wikigym" agent loop, built and run by verl's own
``AgentLoopWorker`` (its ``_run_agent_loop``: hydra instantiate from an agent-loop config file,
``run``, padding; then ``_postprocess`` into the ``DataProto`` verl trains on), plays
episodes on a user's own corpus against a scripted token server that reads its turn from
the context it is given. Checked on the token ids: at every turn the context is the chat
template over the in-process conversation (each turn once); ``response_mask`` is 1 exactly on
the model's tokens; ``rm_scores`` carry the env's reward; a masked episode's ``response_mask``
is all zero, so verl's GRPO advantage and ``agg_loss`` give it no gradient. Runs in verl's
own venv (.ci/run makes it)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
import pytest
from integration_support import (
    NEVER_ANSWER,
    WRONG_ANSWER,
    chat_turns,
    in_process_episode,
    need,
    oracle_actions,
    question_of,
    user_world,
)

need("verl")

import hydra  # noqa: E402
import torch  # noqa: E402
from omegaconf import OmegaConf  # noqa: E402
from verl.experimental.agent_loop.agent_loop import (  # noqa: E402
    AgentLoopWorker,
    DictConfigWrap,
    ToolListWrap,
    _agent_loop_registry,
)
from verl.protocol import DataProto  # noqa: E402
from verl.trainer.ppo.core_algos import agg_loss, compute_grpo_outcome_advantage  # noqa: E402
from verl.utils.dataset.rl_dataset import RLHFDataset, collate_fn  # noqa: E402
from verl.workers.rollout.replica import TokenOutput  # noqa: E402

import wikigym.integrations.verl as wverl  # noqa: E402
from wikigym.integrations.common import IntegrationConfigError  # noqa: E402
from wikigym.tasks.taskset import TaskSet  # noqa: E402

pytestmark = pytest.mark.slow  # builds the tiny tokenizer (~30 s)

RESPONSE_LENGTH = 6000
MAX_STEPS = 3
# Per task (by position), what the scripted model does on its first and second sample.
PLAN = {0: ("oracle", "never"), 1: ("wrong", "oracle")}


class ScriptedTokenServer:
    """verl's LLM server interface (``generate`` -> TokenOutput): a scripted model that reads
    the question and its turn from the context, and acts by the sample's order per task."""

    def __init__(self, tokenizer: Any, tasks: list[Any]) -> None:
        self.tokenizer = tokenizer
        self.tasks = tasks
        self.by_question = {t.question: i for i, t in enumerate(tasks)}
        self.samples: dict[str, tuple[int, int]] = {}  # request id -> (task, sample)
        self.contexts: dict[str, list[list[int]]] = {}
        self.actions: dict[str, list[str]] = {}

    async def generate(self, *, request_id: str, prompt_ids: list[int], **_: Any) -> TokenOutput:
        context = self.tokenizer.decode(prompt_ids)
        if request_id not in self.samples:
            index = self.by_question[question_of(context)]
            sample = sum(1 for i, _ in self.samples.values() if i == index)
            self.samples[request_id] = (index, sample)
        index, sample = self.samples[request_id]
        mode = PLAN.get(index, ("oracle", "oracle"))[sample]
        turn = chat_turns(context)  # from the context, as a model would
        if mode == "oracle":
            action = oracle_actions(self.tasks[index])[turn]
        else:
            action = WRONG_ANSWER if mode == "wrong" else NEVER_ANSWER
        self.contexts.setdefault(request_id, []).append(list(prompt_ids))
        self.actions.setdefault(request_id, []).append(action)
        ids = self.tokenizer.encode(action, add_special_tokens=False)
        ids.append(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        return TokenOutput(token_ids=ids, log_probs=[-0.5] * len(ids))


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from wikigym.trainers.tiny import build_tokenizer

    return build_tokenizer()


def trainer_config() -> Any:
    rollout = {"prompt_length": 4096, "response_length": RESPONSE_LENGTH, "temperature": 1.0}
    rollout.update(top_p=1.0, top_k=-1, calculate_log_probs=False)
    return OmegaConf.create(
        {
            "actor_rollout_ref": {"rollout": rollout},
            "data": {"apply_chat_template_kwargs": {}},
        }
    )


def build_loop(entry: Any, tokenizer: Any, server: Any) -> Any:
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


def play(entry: Any, tokenizer: Any, server: Any, sampling: dict, **row: Any) -> Any:
    """Build and run the loop inside one event loop, as verl's worker does."""

    async def go() -> Any:
        return await build_loop(entry, tokenizer, server).run(sampling, **row)

    return asyncio.run(go())


def worker(tokenizer: Any, server: Any, agent_loops: Path) -> AgentLoopWorker:
    """verl's AgentLoopWorker as its __init__ leaves it for a text model (set directly: its
    __init__ builds the tokenizer from a model directory, which would be the same object)."""
    config = trainer_config()
    config.actor_rollout_ref.rollout.agent = {"agent_loop_config_path": str(agent_loops)}
    w = AgentLoopWorker.__new__(AgentLoopWorker)
    w.config = config
    w.llm_client = server
    w.teacher_client = None
    w.reward_loop_worker_handles = None
    w.rollout_config = config.actor_rollout_ref.rollout
    w.dataset_cls = RLHFDataset
    w.tokenizer = tokenizer
    w.processor = None
    w.hf_model_type = "qwen3"  # the tiny tokenizer's template is Qwen3's
    w.mm_processor_kwargs = {}
    w.distillation_enabled = False
    w.tools = []
    for entry in OmegaConf.load(agent_loops):  # as its __init__ registers the file's loops
        _agent_loop_registry[entry.name] = entry
    return w


def test_registered_by_name() -> None:
    assert wverl.AGENT_NAME == "wikigym"
    assert _agent_loop_registry["wikigym"]["_target_"] == (
        "wikigym.integrations.verl.WikigymAgentLoop"
    )


def test_worker_batch_holds_each_turn_once_and_masks(tokenizer: Any, tmp_path: Path) -> None:
    data = user_world(tmp_path)
    env_kwargs = {**data, "python": "off", "max_steps": MAX_STEPS}
    train = wverl.verl_dataset(tmp_path / "train.parquet", n=len(PLAN), **env_kwargs)
    dataset = RLHFDataset(  # the rows as verl's RLHFDataset hands them to the worker
        str(train),
        tokenizer,
        OmegaConf.create({"max_prompt_length": 4096, "cache_dir": str(tmp_path)}),
    )
    tasks = list(TaskSet.load(data["tasks"]))
    server = ScriptedTokenServer(tokenizer, tasks)
    agent_loops = tmp_path / "agent_loops.yaml"  # the documented config-file form
    agent_loops.write_text(
        "- name: wikigym\n"
        "  _target_: wikigym.integrations.verl.WikigymAgentLoop\n"
        "  env_id: WikiSearch-v1\n"
        f"  corpus: {data['corpus']}\n"
        f"  tasks: {data['tasks']}\n"
        f"  env_kwargs: {{python: 'off', max_steps: {MAX_STEPS}}}\n"
    )
    w = worker(tokenizer, server, agent_loops)
    for i in range(len(PLAN)):
        row = dataset[i]
        assert row["agent_name"] == "wikigym"
        assert row["reward_model"]["ground_truth"]["target"] == list(tasks[i].golds)
    # The batch as verl's trainer hands it to the worker: collated rows, rollout.n = 2.
    rows = DataProto.from_single_dict(collate_fn([dataset[i] for i in range(len(PLAN))]))
    rows = rows.repeat(repeat_times=2, interleave=True)
    rows.meta_info = {"global_steps": 0, "validate": False}
    batch = asyncio.run(w.generate_sequences(rows))
    responses, mask = batch.batch["responses"], batch.batch["response_mask"]
    lengths = batch.batch["attention_mask"][:, batch.batch["prompts"].shape[1] :].sum(dim=1)
    end = tokenizer.convert_tokens_to_ids("<|im_end|>")
    # The samples ran concurrently: find each row's request by its response tokens.
    expected = {}
    for request, contexts in server.contexts.items():
        last = [*tokenizer.encode(server.actions[request][-1], add_special_tokens=False), end]
        expected[request] = (contexts[-1] + last)[len(contexts[0]) :]
    for row in range(len(rows)):
        response = responses[row][: lengths[row]].tolist()
        (request,) = [r for r, e in expected.items() if e == response]
        index, sample = server.samples[request]
        assert index == row // 2
        actions = server.actions[request]
        task, extra = tasks[index], dataset[index]["extra_info"]
        messages, reward, info = in_process_episode(
            env_kwargs, task.task_id, extra["seed"], actions
        )
        # The context at each turn: the template over the in-process chat, each turn once.
        for turn, context in enumerate(server.contexts[request]):
            assert context == tokenizer.apply_chat_template(
                messages[: 2 * turn + 1],
                tokenize=True,
                add_generation_prompt=True,
                return_dict=False,
            ), f"turn {turn} of row {row}: the context is not the chat with each turn once"
        assert batch.batch["rm_scores"][row].sum().item() == reward  # the env's reward
        kept = responses[row][mask[row].bool()].tolist()
        if info.get("mask"):
            assert PLAN[index][sample] == "never" and len(actions) == MAX_STEPS
            assert mask[row].sum().item() == 0  # out of verl's loss
            assert batch.non_tensor_batch["wikigym_mask"][row]
            masked_row = row
        else:
            model = [
                t for a in actions for t in [*tokenizer.encode(a, add_special_tokens=False), end]
            ]
            assert kept == model  # exactly the model's tokens
        if PLAN[index][sample] != "wrong":
            assert len(actions) > 1
    # What verl would train on: GRPO advantages over the groups, agg_loss over the batch.
    uids = np.array([f"uid{r // 2}" for r in range(len(rows))], dtype=object)
    advantages, _ = compute_grpo_outcome_advantage(batch.batch["rm_scores"], mask, uids)
    log_prob = torch.zeros(mask.shape, requires_grad=True)
    agg_loss(-advantages * log_prob, mask.float(), "token-mean").backward()
    weights = log_prob.grad.abs().sum(dim=1)
    assert weights[masked_row] == 0.0  # the masked sample
    assert all(weights[r] > 0 for r in range(len(rows)) if r != masked_row)


def test_rows_of_other_data_are_refused(tokenizer: Any, tmp_path: Path) -> None:
    data = user_world(tmp_path)
    rows = wverl.verl_rows(n=1, python="off")  # written for the default world
    entry = OmegaConf.create(
        {"_target_": "wikigym.integrations.verl.WikigymAgentLoop", **data, "env_kwargs": {}}
    )
    server = ScriptedTokenServer(tokenizer, [])
    with pytest.raises(IntegrationConfigError, match="dataset row was written for"):
        play(
            entry,
            tokenizer,
            server,
            {},
            raw_prompt=rows[0]["prompt"],
            **{"extra_info": rows[0]["extra_info"]},
        )


def test_registry_entry_builds_with_defaults_for_calc(tokenizer: Any) -> None:
    class CalcServer(ScriptedTokenServer):
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
    server = CalcServer(tokenizer, [])
    out = play(entry, tokenizer, server, {}, raw_prompt=[], extra_info={"seed": 7})
    assert out.reward_score == 1.0 and sum(out.response_mask) == len(out.response_ids)
