"""What the adapters share, without any framework: config checks, plain values, rows."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from wikigym.integrations.common import (
    IntegrationConfigError,
    env_kwargs,
    episode_rows,
    make_env,
    plain,
    write_rows,
)


def test_plain_turns_mappings_and_sequences_into_dicts_and_lists() -> None:
    value = OrderedDict(a=(1, 2), b=OrderedDict(c=["x", ("y",)]), s="str")
    assert plain(value) == {"a": [1, 2], "b": {"c": ["x", ["y"]]}, "s": "str"}


def test_env_kwargs_checks_names() -> None:
    assert env_kwargs("Calc-v0", {"level": 1, "corpus": None}) == {"level": 1}
    assert env_kwargs("WikiSearch-v1", {"corpus": None, "max_steps": 3}) == {
        "corpus": None,
        "max_steps": 3,
    }
    with pytest.raises(IntegrationConfigError, match="Calc-v0 takes no argument 'corpus'"):
        env_kwargs("Calc-v0", {"corpus": "snap"})
    with pytest.raises(IntegrationConfigError, match="env_id must be one of"):
        env_kwargs("Other-v0", {})


def test_rows_are_deterministic_and_reset_to_their_prompt(tmp_path: Path) -> None:
    env = make_env("WikiSearch-v1", python="off")
    rows = episode_rows(env, n=3, seed=5)
    assert rows == episode_rows(make_env("WikiSearch-v1", python="off"), n=3, seed=5)
    assert [r.seed for r in rows] == [5, 6, 7]
    for row in rows:
        obs, info = env.reset(seed=row.seed, options={"task_id": row.task_id})
        assert obs == row.prompt and info["task_id"] == row.task_id
    calc = episode_rows(make_env("Calc-v0"), n=2)
    assert [r.task_id for r in calc] == [None, None] and calc[0].golds[0].isdigit()
    path = write_rows(tmp_path / "d" / "rows.parquet", [{"a": 1, "b": [{"role": "user"}]}])
    assert pq.read_table(path).to_pylist() == [{"a": 1, "b": [{"role": "user"}]}]
    assert not list(path.parent.glob(".*.tmp"))
