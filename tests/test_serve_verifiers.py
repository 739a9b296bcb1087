"""verifiers' built-in ``openenv`` taskset plays episodes against ``wikigym serve``: ``vf-eval
openenv --env.taskset.base-url URL`` with a scripted OpenAI-compatible model on 127.0.0.1 (the
oracle's calls of each task); each episode's summed OpenEnv reward is the env's."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from integration_support import need, oracle_actions
from openai_stub import StubServer

need("verifiers")
need("openenv")
need("uvicorn")

from wikigym.integrations.serve import ServeConfig  # noqa: E402
from wikigym.integrations.serve.server import serve_in_thread  # noqa: E402
from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402


@pytest.mark.slow  # vf-eval prepares its chat harness with uv on first use (~1 min)
def test_verifiers_openenv_taskset_runs_episodes(tmp_path: Path) -> None:
    vf_eval = shutil.which("vf-eval") or str(Path(sys.executable).with_name("vf-eval"))
    if not Path(vf_eval).exists():
        pytest.skip("vf-eval is not installed")
    snapshot, taskset = default_resources(progress=False)
    tasks = list(taskset)[:2]
    by_id = {t.task_id: t for t in tasks}

    def script(messages: list[dict[str, Any]]) -> str:
        user = next(m["content"] for m in messages if m["role"] == "user")
        task = by_id[json.loads(user)["observation"]["info"]["task_id"]]
        return oracle_actions(task)[sum(1 for m in messages if m["role"] == "assistant")]

    config = ServeConfig(
        corpus=str(snapshot.path),
        tasks=str(default_tasks_path()),
        env_kwargs={"WikiSearch-v1": {"python": "off"}},
    )
    model = StubServer(script)
    out = tmp_path / "runs"
    env = {
        **os.environ,
        "STUB_API_KEY": "not-a-secret",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    resets = [{"seed": i, "task_id": t.task_id} for i, t in enumerate(tasks)]
    try:
        with serve_in_thread(config) as (url, _):
            # verifiers 0.4 validates a positional taskset id before its flags apply (the
            # openenv taskset then lacks base_url): a config file sets them together
            toml = tmp_path / "openenv.toml"
            rows = ", ".join(f'{{seed = {r["seed"]}, task_id = "{r["task_id"]}"}}' for r in resets)
            toml.write_text(
                f'[env.taskset]\nid = "openenv"\nbase_url = "{url}"\nresets = [{rows}]\n'
                # a plain chat loop on this host (the default runtime is a remote box)
                '[env.player.harness]\nid = "null"\n[env.player.runtime]\ntype = "subprocess"\n'
            )
            command = [
                vf_eval, "@", str(toml),
                "-m", "stub", "--client.base-url", model.base_url,
                "--client.api-key-var", "STUB_API_KEY", "--no-push", "-o", str(out),
            ]  # fmt: skip
            run = subprocess.run(
                command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=900
            )
    finally:
        model.close()
    assert run.returncode == 0, run.stderr[-3000:]
    (traces_file,) = out.glob("*/traces.jsonl")
    episodes = [json.loads(line) for line in traces_file.read_text().splitlines()]
    assert len(episodes) == len(tasks)
    rewards = sorted(
        trace["rewards"]["openenv_reward"]["score"] for ep in episodes for trace in ep["traces"]
    )
    assert rewards == [1.0] * len(tasks), rewards
