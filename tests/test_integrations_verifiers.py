"""verifiers (v1): ``vf-eval wikigym-verifiers`` loads the environment module and plays real
episodes against a scripted OpenAI-compatible server on 127.0.0.1 that streams SSE: the
oracle's tool calls score 1, a wrong answer 0, and an episode that spends the step budget is
truncated in verifiers' own terms (``Trace.is_truncated``, what its trainers read)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from integration_support import NEVER_ANSWER, WRONG_ANSWER, need, oracle_actions
from openai_stub import StubServer

need("verifiers")

N_TASKS = 4
WRONG_TASK = 2  # the script answers this task (by position) wrongly
NEVER_TASK = 3  # ... and never answers this one: the step budget runs out (masked)
MAX_STEPS = 10


@pytest.mark.slow  # vf-eval prepares its chat harness with uv on first use (~1 min)
def test_vf_eval_runs_wikigym_episodes(tmp_path: Path) -> None:
    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).with_name("vf-eval"))
    if not Path(vf_eval).exists():
        pytest.skip("vf-eval is not installed")
    tasks = list(gym.make("WikiSearch-v1", python="off").unwrapped.tasks)[:N_TASKS]
    by_question = {t.question: i for i, t in enumerate(tasks)}

    def script(messages: list[dict[str, Any]]) -> str:
        first = next(m["content"] for m in messages if m["role"] == "user")
        i = by_question[first.rsplit("Question: ", 1)[-1].strip()]
        if i == WRONG_TASK:
            return WRONG_ANSWER
        if i == NEVER_TASK:
            return NEVER_ANSWER
        actions = oracle_actions(tasks[i])
        return actions[sum(1 for m in messages if m["role"] == "assistant")]

    server = StubServer(script)
    out = tmp_path / "runs"
    env = {
        **os.environ,
        "STUB_API_KEY": "not-a-secret",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    command = [
        vf_eval,
        "wikigym-verifiers",
        "--env.taskset.num-tasks",
        str(N_TASKS),
        "--env.taskset.env-kwargs",
        json.dumps({"python": "off", "max_steps": MAX_STEPS}),
        "-m",
        "stub",
        "--client.base-url",
        server.base_url,
        "--client.api-key-var",
        "STUB_API_KEY",
        "--no-push",
        "-o",
        str(out),
    ]
    try:
        run = subprocess.run(
            command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900
        )
    finally:
        server.close()
    assert run.returncode == 0, run.stderr[-3000:]
    (traces_file,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces_file.read_text().splitlines()]
    from verifiers.v1.trace import Trace

    got = {}
    for ep in episodes:
        (trace,) = ep["traces"]
        # What verifiers' trainers read: the trace model's is_truncated (from stop_condition).
        truncated = Trace.model_validate(trace).is_truncated
        got[ep["task"]["data"]["id"]] = (
            trace["rewards"]["wikigym"]["score"],
            trace["info"],
            truncated,
        )
    assert set(got) == {t.task_id for t in tasks}
    for i, task in enumerate(tasks):
        score, info, truncated = got[task.task_id]
        assert truncated == (i == NEVER_TASK) and info["mask"] == (i == NEVER_TASK)
        if i == WRONG_TASK:
            assert score == 0.0 and info["wikigym_steps"] == 1
        elif i == NEVER_TASK:
            assert score == 0.0 and info["wikigym_end"] == "budget_spent"
            assert info["wikigym_steps"] == MAX_STEPS
        else:
            assert score == 1.0 and info["wikigym_end"] == "answered"
            assert info["wikigym_steps"] == len(task.oracle)
            assert info["reward_components"]["outcome"] == 1.0
    assert server.streamed == len(server.requests) > N_TASKS  # every call streamed SSE
