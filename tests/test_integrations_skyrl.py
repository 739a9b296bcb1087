"""SkyRL (skyrl-gym): the "wikigym" BaseTextEnv built by skyrl_gym.make from env_config +
the dataset row's extras, as SkyRL's generator does, runs reset -> tool steps -> reward."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from integration_support import WRONG_ANSWER, need, oracle_actions

skyrl_gym = need("skyrl_gym")
omegaconf = need("omegaconf")

from wikigym.integrations.common import IntegrationConfigError  # noqa: E402
from wikigym.integrations.skyrl import ENV_CLASS, skyrl_dataset  # noqa: E402

ENV_CONFIG = {"env_id": "WikiSearch-v1", "python": "off", "max_steps": 12}


def prompt_dataset_rows(path: Path) -> list[tuple[list, str, dict[str, Any]]]:
    """What SkyRL's PromptDataset yields per row: (prompt, env_class, extras)."""
    import datasets

    table = datasets.load_dataset("parquet", data_files=str(path), keep_in_memory=True)["train"]
    out = []
    for i in range(len(table)):
        row = dict(table[i])
        prompt, env_class = row.pop("prompt"), row.pop("env_class")
        out.append((prompt, env_class, row))
    return out


@pytest.fixture(scope="module")
def rows(tmp_path_factory: pytest.TempPathFactory) -> list[tuple[list, str, dict[str, Any]]]:
    path = skyrl_dataset(tmp_path_factory.mktemp("skyrl") / "train.parquet", n=4, **ENV_CONFIG)
    return prompt_dataset_rows(path)


def make(extras: dict[str, Any], **overrides: Any):
    # SkyRL hands env_config over as an OmegaConf DictConfig section.
    config = omegaconf.DictConfig({**ENV_CONFIG, **overrides})
    return skyrl_gym.make(ENV_CLASS, env_config=config, extras={**extras, "max_turns": 12})


def test_dataset_has_the_generator_columns(rows) -> None:
    prompt, env_class, extras = rows[0]
    assert env_class == "wikigym" and prompt[0]["role"] == "user"
    assert "Question:" in prompt[0]["content"]
    assert {"task_id", "seed", "reward_spec", "data_source", "extra_info"} <= set(extras)
    assert [r[2]["seed"] for r in rows] == [0, 1, 2, 3]


def test_oracle_episode_scores_one_and_wrong_answer_zero(rows) -> None:
    tasks = gym.make("WikiSearch-v1", python="off").unwrapped.tasks
    for prompt, _, extras in rows:
        env = make(extras)
        history, meta = env.init(prompt)
        assert history == prompt and meta["task_id"] == extras["task_id"]
        outs = [env.step(a) for a in oracle_actions(tasks.get(extras["task_id"]))]
        for out in outs[:-1]:
            assert not out["done"] and out["observations"][0]["role"] == "user"
            assert out["observations"][0]["content"] and out["reward"] == 0.0
        last = outs[-1]
        assert last["done"] and last["reward"] == 1.0 and last["observations"] == []
        assert last["metadata"]["task_id"] == extras["task_id"]
        assert env.get_metrics()["reward/outcome"] == 1.0
        assert env.get_metrics()["masked"] == 0.0
        env.close()
    env = make(rows[0][2])
    env.init(rows[0][0])
    out = env.step(WRONG_ANSWER)
    assert out["done"] and out["reward"] == 0.0


def test_budget_spent_is_a_masked_episode(rows) -> None:
    prompt, _, extras = rows[1]
    config = {**ENV_CONFIG, "max_steps": 2}
    env = skyrl_gym.make(ENV_CLASS, env_config=config, extras={**extras, "max_turns": 2})
    env.init(prompt)
    assert not env.step("<search>zzqx</search>")["done"]
    assert env.get_metrics()["masked"] == 1.0  # not ended yet: would leave the loss if cut
    out = env.step("<search>zzqx</search>")
    assert out["done"] and out["reward"] == 0.0 and out["metadata"]["mask"]
    assert env.get_metrics()["masked"] == 1.0


def test_max_turns_below_the_budget_and_foreign_rows_are_refused(rows, tmp_path) -> None:
    prompt, _, extras = rows[1]
    with pytest.raises(IntegrationConfigError, match="max_turns=2 is below the env's step budget"):
        skyrl_gym.make(ENV_CLASS, env_config=ENV_CONFIG, extras={**extras, "max_turns": 2})
    with pytest.raises(IntegrationConfigError, match="no config"):
        skyrl_gym.make(ENV_CLASS, env_config=None, extras=extras)
    # A row written for the default world, given to an env over another TaskSet.
    other = skyrl_dataset(tmp_path / "calc.parquet", n=1, **{**ENV_CONFIG, "max_steps": 3})
    (row,) = prompt_dataset_rows(other)
    foreign = {**row[2], "extra_info": {**row[2]["extra_info"], "taskset_id": "f" * 64}}
    with pytest.raises(IntegrationConfigError, match="written for taskset_id ffffffffffff"):
        skyrl_gym.make(ENV_CLASS, env_config=ENV_CONFIG, extras=foreign)


def test_calc_and_empty_prompt() -> None:
    env = skyrl_gym.make(ENV_CLASS, env_config={"env_id": "Calc-v0"}, extras={"seed": 3})
    history, _ = env.init([])
    assert "Problem:" in history[0]["content"]
    gold = env.env.unwrapped.gold
    assert env.step(f"<answer>{gold}</answer>")["reward"] == 1.0


def test_bad_config_is_one_clear_error() -> None:
    with pytest.raises(IntegrationConfigError, match="takes no argument 'max_stepz'"):
        skyrl_gym.make(ENV_CLASS, env_config={"max_stepz": 3}, extras={})
    with pytest.raises(IntegrationConfigError, match="env_id must be one of"):
        skyrl_gym.make(ENV_CLASS, env_config={"env_id": "Nope-v0"}, extras={})
