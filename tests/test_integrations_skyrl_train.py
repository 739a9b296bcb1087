"""SkyRL's trainer (skyrl 0.4), on the trainer's side: the command line of
docs/integrations.md parses into wikigym's config subclass, and SkyRL's own generator
(PromptDataset rows -> prepare_generator_input -> generate, with a scripted inference engine)
plays multi-turn episodes on a user's own corpus and tasks. What SkyRL would train on is
checked: prompt and response ids equal the chat rendering of the in-process episode, the
loss mask is 1 exactly on the model's tokens, rewards equal the env's, and a masked episode
has an all-zero loss mask, so SkyRL's GRPO advantage and PPO loss give its tokens zero
gradient. Runs in its own venv (skyrl 0.4 installed with --no-deps on Python 3.11, .ci/run).
"""

from __future__ import annotations

import asyncio
import re
import shlex
import sys
import typing
from pathlib import Path
from typing import Any

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

if sys.version_info < (3, 12):
    # skyrl 0.4 declares Python >= 3.12, where pydantic takes typing.TypedDict in a model;
    # on 3.11 it needs typing_extensions' (the one difference met installing it on 3.11).
    import typing_extensions

    typing.TypedDict = typing_extensions.TypedDict  # type: ignore[misc]

need("skyrl")

import numpy as np  # noqa: E402
import torch  # noqa: E402
from skyrl.backends.skyrl_train.utils.ppo_utils import (  # noqa: E402
    compute_grpo_outcome_advantage,
    ppo_policy_loss,
)
from skyrl.train.config import AlgorithmConfig  # noqa: E402
from skyrl.train.dataset import PromptDataset  # noqa: E402
from skyrl.train.dataset.preprocess import (  # noqa: E402
    convert_prompts_responses_to_batch_tensors,
)
from skyrl.train.generators.utils import prepare_generator_input  # noqa: E402

from wikigym.integrations.common import IntegrationConfigError  # noqa: E402
from wikigym.integrations.skyrl import skyrl_dataset  # noqa: E402
from wikigym.integrations.skyrl_train import (  # noqa: E402
    WikigymGymGenerator,
    WikigymSkyRLConfig,
    main,
    parse,
    prepare,
)
from wikigym.tasks.taskset import TaskSet  # noqa: E402

pytestmark = pytest.mark.slow  # builds the tiny tokenizer (~40 s on a loaded machine)

DOCS = Path(__file__).resolve().parents[1] / "docs" / "integrations.md"
MAX_STEPS = 3  # small, so a never-answering episode spends it quickly
# Per task (by position), what the scripted model does on repetition 0 and 1 of GRPO.
PLAN = {0: ("oracle", "never"), 1: ("wrong", "oracle")}


def docs_arguments() -> list[str]:
    """The ``key=value`` arguments of the SkyRL command in docs/integrations.md."""
    text = DOCS.read_text()
    block = re.search(r"<!-- skyrl-command.*?```bash\n(.*?)```", text, re.S)
    assert block, "docs/integrations.md lost its SkyRL command"
    return [a for a in shlex.split(block.group(1).replace("\\\n", " ")) if "=" in a]


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    root = tmp_path_factory.mktemp("skyrl-user")
    data = user_world(root)
    env_kwargs = {**data, "python": "off", "max_steps": MAX_STEPS}
    train = skyrl_dataset(root / "train.parquet", n=len(PLAN), **env_kwargs)
    args = [
        a.replace("/data/snap", data["corpus"])
        .replace("/data/tasks.jsonl", data["tasks"])
        .replace("data/train.parquet", str(train))
        .replace("max_steps=12", f"max_steps={MAX_STEPS}")
        for a in docs_arguments()
    ]
    args.append('environment.skyrl_gym.wikigym.env_kwargs={"python": "off"}')
    return {**data, "env_kwargs": env_kwargs, "train": train, "args": args}


@pytest.fixture(scope="module")
def tokenizer() -> Any:
    from wikigym.trainers.tiny import build_tokenizer

    return build_tokenizer()


class ScriptedEngine:
    """SkyRL's inference engine interface with a scripted model: it reads the question and
    its turn from the context it is given, and the GRPO repetition from the session id."""

    def __init__(self, tokenizer: Any, tasks: TaskSet) -> None:
        self.tokenizer = tokenizer
        self.tasks = list(tasks)
        self.by_question = {t.question: i for i, t in enumerate(self.tasks)}
        self.actions: dict[tuple[int, int], list[str]] = {}
        self.contexts: dict[tuple[int, int], list[list[int]]] = {}

    @property
    def model_name(self) -> str:
        return "scripted"

    async def generate(self, engine_input: dict[str, Any], model: Any = None) -> dict[str, Any]:
        ids = list(engine_input["prompt_token_ids"][0])
        context = self.tokenizer.decode(ids)
        index = self.by_question[question_of(context)]
        repetition = int(engine_input["session_ids"][0].rsplit("_", 1)[1])
        self.contexts.setdefault((index, repetition), []).append(ids)
        turn = chat_turns(context)
        mode = PLAN[index][repetition]
        if mode == "oracle":
            action = oracle_actions(self.tasks[index])[turn]
        elif mode == "wrong":
            action = WRONG_ANSWER
        else:
            action = NEVER_ANSWER
        self.actions.setdefault((index, repetition), []).append(action)
        ids = self.tokenizer.encode(action, add_special_tokens=False)
        ids.append(self.tokenizer.convert_tokens_to_ids("<|im_end|>"))
        return {
            "responses": [action],
            "response_ids": [ids],
            "stop_reasons": ["stop"],
            "response_logprobs": None,
        }

    async def finish_session(self, session_id: str) -> None:
        return None


def test_docs_config_parses_and_resolves_turns(world: dict[str, Any]) -> None:
    cfg = parse(world["args"])
    assert isinstance(cfg, WikigymSkyRLConfig)
    assert cfg.environment.env_class == "wikigym"
    section = cfg.environment.skyrl_gym.wikigym
    assert (section.corpus, section.tasks) == (world["corpus"], world["tasks"])
    assert cfg.generator.max_turns == 0  # unset: follows the env
    prepare(cfg).close()
    assert cfg.generator.max_turns == MAX_STEPS


def test_config_mistakes_are_one_line(world: dict[str, Any], capsys: Any, tmp_path: Path) -> None:
    cases = [
        (["generator.max_turns=2"], "generator.max_turns=2 is below the env's step budget"),
        (["generator.batched=true"], "generator.batched=true plays one turn"),
        (["environment.skyrl_gym.wikigym.nope=1"], "Invalid fields {'nope'}"),
    ]
    other = skyrl_dataset(tmp_path / "default.parquet", n=1, python="off")  # default world
    cases.append(([f"data.train_data=['{other}']"], "the dataset row was written for"))
    for extra, message in cases:
        with pytest.raises(SystemExit) as exit_info:
            main([*world["args"], *extra])
        assert exit_info.value.code == 2
        err = capsys.readouterr().err.strip()
        assert message in err and "\n" not in err, err


def test_generator_batch_is_the_in_process_chat(world: dict[str, Any], tokenizer: Any) -> None:
    cfg = parse([*world["args"], "generator.n_samples_per_prompt=2"])
    prepare(cfg).close()
    tasks = TaskSet.load(world["tasks"])
    engine = ScriptedEngine(tokenizer, tasks)
    generator = WikigymGymGenerator(
        generator_cfg=cfg.generator,
        skyrl_gym_cfg=cfg.environment.skyrl_gym,
        inference_engine_client=engine,
        tokenizer=tokenizer,
    )
    dataset = PromptDataset(
        datasets=cfg.data.train_data,
        tokenizer=tokenizer,
        max_prompt_length=cfg.trainer.max_prompt_length,
        num_workers=1,
    )
    batch = dataset.collate_fn([dataset[i] for i in range(len(dataset))])
    generator_input, uids = prepare_generator_input(
        batch, 2, None, cfg.environment.env_class, "train", 0
    )
    out = asyncio.run(generator.generate(generator_input, disable_tqdm=True))

    masked_rows = []
    for row, (extras, uid) in enumerate(zip(generator_input["env_extras"], uids, strict=True)):
        index, repetition = int(uid), row % 2
        actions = engine.actions[(index, repetition)]
        task = tasks.get(extras["task_id"])
        messages, reward, info = in_process_episode(
            world["env_kwargs"], task.task_id, extras["seed"], actions
        )
        prompt, response = out["prompt_token_ids"][row], out["response_ids"][row]
        mask = out["loss_masks"][row]
        # Token ids: at every turn the model saw the chat template over the in-process
        # conversation so far (each turn once); the sample is the last context plus the
        # model's last tokens.
        contexts = engine.contexts[(index, repetition)]
        assert len(contexts) == len(actions)
        for turn, context in enumerate(contexts):
            assert context == tokenizer.apply_chat_template(
                messages[: 2 * turn + 1],
                tokenize=True,
                add_generation_prompt=True,
                return_dict=False,
            )
        end = tokenizer.convert_tokens_to_ids("<|im_end|>")
        last = [*tokenizer.encode(actions[-1], add_special_tokens=False), end]
        assert prompt == contexts[0] and prompt + response == contexts[-1] + last
        if PLAN[index][repetition] != "wrong":
            assert len(actions) > 1  # more than one turn
        model_tokens = [
            t for a in actions for t in [*tokenizer.encode(a, add_special_tokens=False), end]
        ]
        reward_out = out["rewards"][row]
        total = sum(reward_out) if isinstance(reward_out, list) else reward_out
        assert total == reward  # the env's reward, as in process
        if info.get("mask"):
            masked_rows.append(row)
            assert PLAN[index][repetition] == "never" and len(actions) == MAX_STEPS
            assert not any(mask)  # leaves SkyRL's loss
        else:
            # 1 exactly on the model's tokens (its actions and their end-of-turn token).
            assert [t for t, m in zip(response, mask, strict=True) if m] == model_tokens
    assert masked_rows == [1]

    # What SkyRL trains on: its batch tensors, GRPO advantages and PPO loss.
    rewards = out["rewards"]  # per token: the env's reward at the end of each turn
    (_, _, _, rewards_t, loss_mask, *_) = convert_prompts_responses_to_batch_tensors(
        tokenizer.pad_token_id,
        out["prompt_token_ids"],
        out["response_ids"],
        rewards,
        out["loss_masks"],
    )
    advantages, _ = compute_grpo_outcome_advantage(rewards_t, loss_mask, np.array(uids))
    log_probs = torch.zeros_like(loss_mask, requires_grad=True)
    loss, _ = ppo_policy_loss(
        log_probs, torch.zeros_like(loss_mask), advantages, AlgorithmConfig(), loss_mask=loss_mask
    )
    loss.backward()
    weights = log_probs.grad.abs().sum(dim=1)
    assert weights[1] == 0.0  # the masked sample: no gradient at all
    assert all(weights[i] > 0 for i in (0, 2, 3))  # its group mate and the other group learn


def test_env_refuses_turns_below_budget_and_no_config(world: dict[str, Any]) -> None:
    import skyrl_gym

    with pytest.raises(IntegrationConfigError, match="max_turns=1 is below"):
        skyrl_gym.make("wikigym", env_config=world["env_kwargs"], extras={"max_turns": 1})
    with pytest.raises(IntegrationConfigError, match="no config"):
        skyrl_gym.make("wikigym", env_config={}, extras={})
