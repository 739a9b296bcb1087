"""``wikigym serve`` against OpenEnv's real client (``openenv`` 0.10's GenericEnvClient), on
loopback only, every wait bounded: determinism over the wire, many sessions over one snapshot,
capacity, disconnects, idle timeout, isolation, token, HTTP one-shots and SIGTERM."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from integration_support import WRONG_ANSWER, need, oracle_actions

need("uvicorn")
need("starlette")
openenv = need("openenv")

from wikigym.envs.recipe import env_spec, make_env  # noqa: E402
from wikigym.integrations.serve import ServeConfig  # noqa: E402
from wikigym.integrations.serve.protocol import jsonable  # noqa: E402
from wikigym.integrations.serve.server import serve_in_thread  # noqa: E402
from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402

pytestmark = pytest.mark.timeout(180)
GenericEnvClient = openenv.GenericEnvClient
ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def paths() -> tuple[str, str]:
    snapshot, _ = default_resources(progress=False)
    return str(snapshot.path), str(default_tasks_path())


@pytest.fixture(scope="module")
def tasks(paths):
    return list(default_resources(progress=False)[1])


def config(paths, **kw: Any) -> ServeConfig:
    corpus, tasks = paths
    kwargs = {"WikiSearch-v1": {"python": "off"}}
    return ServeConfig(corpus=corpus, tasks=tasks, env_kwargs=kwargs, **kw)


def in_process(paths, task_id: str | None, seed: int, actions: list[str], env_id="WikiSearch-v1"):
    """The transcript an in-process env gives (through the env recipe)."""
    corpus, tasks = paths
    kw = {"corpus": corpus, "tasks": tasks, "python": "off"} if env_id == "WikiSearch-v1" else {}
    env = make_env(env_spec(env_id, **kw))
    options = {"task_id": task_id} if task_id else None
    obs, info = env.reset(seed=seed, options=options)
    out = [(obs, jsonable(info), None, False)]
    for a in actions:
        obs, r, term, trunc, info = env.step(a)
        out.append((obs, jsonable(info), float(r), bool(term or trunc)))
        if term or trunc:
            break
    return out


def transcript_of(results) -> list[tuple]:
    return [(r.observation["text"], r.observation["info"], r.reward, r.done) for r in results]


async def run_episode(url: str, reset: dict, actions: list[str]):
    async with GenericEnvClient(base_url=url) as client:
        results = [await client.reset(**reset)]
        for a in actions:
            results.append(await client.step({"message": a}))
            if results[-1].done:
                break
        state = await client.state()
    return results, state


def metric(url: str, name: str) -> float:
    text = urllib.request.urlopen(f"{url}/metrics", timeout=5).read().decode()
    for line in text.splitlines():
        if line.startswith(name + " "):
            return float(line.split()[-1])
    raise AssertionError(f"no {name} in /metrics")


def wait_until(cond, timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while not cond():
        assert time.monotonic() < deadline, "condition not reached in time"
        time.sleep(0.05)


def test_episodes_over_the_wire_equal_in_process(paths, tasks) -> None:
    with (
        serve_in_thread(config(paths)) as (url, _),
        GenericEnvClient(base_url=url).sync() as client,
    ):
        for i, task in enumerate(tasks[:3]):
            actions = [*oracle_actions(task)] if i != 1 else ["<search>x</search>", WRONG_ANSWER]
            results = [client.reset(seed=7 + i, task_id=task.task_id)]
            results += [client.step({"message": a}) for a in actions]
            assert transcript_of(results) == in_process(paths, task.task_id, 7 + i, actions)
            assert results[0].observation["session_id"] == results[-1].observation["session_id"]
        # a seed alone picks the task as in process; Calc-v0 by env_id in the same session
        got = [client.reset(seed=11), client.step({"message": "<answer>3</answer>"})]
        assert transcript_of(got) == in_process(paths, None, 11, ["<answer>3</answer>"])
        got = [
            client.reset(seed=5, env_id="Calc-v0"),
            client.step({"message": "<answer>4</answer>"}),
        ]
        assert transcript_of(got) == in_process(paths, None, 5, ["<answer>4</answer>"], "Calc-v0")
        assert client.state()["env_id"] == "Calc-v0"
    assert tasks[0].oracle  # the oracle episode ended with reward 1 (checked against in-process)


@pytest.mark.parametrize("workers", [None, 3], ids=["on-the-loop", "in-threads"])
def test_many_concurrent_sessions_share_one_snapshot(paths, tasks, workers) -> None:
    n = 24
    plans = [(tasks[i % len(tasks)], oracle_actions(tasks[i % len(tasks)])) for i in range(n)]
    with serve_in_thread(config(paths, max_sessions=n, workers=workers)) as (url, app):

        async def main():
            return await asyncio.gather(
                *(
                    run_episode(url, {"seed": i, "task_id": t.task_id}, a)
                    for i, (t, a) in enumerate(plans)
                )
            )

        outcomes = asyncio.run(asyncio.wait_for(main(), 120))
        env_threads = [t for t in threading.enumerate() if t.name.startswith("wikigym-env")]
        ids = {state["session_id"] for _, state in outcomes}
        assert len(ids) == n
        for i, ((task, actions), (results, _)) in enumerate(zip(plans, outcomes, strict=True)):
            assert transcript_of(results) == in_process(paths, task.task_id, i, actions)
            assert results[-1].reward == 1.0
        assert metric(url, "wikigym_sessions_active") == 0
        # python off: steps run on the event loop unless --workers asks for threads
        assert bool(env_threads) == (workers is not None)

        # while sessions are held, every env of every session reads the same Snapshot object
        async def hold():
            clients = [GenericEnvClient(base_url=url) for _ in range(6)]
            for c in clients:
                await c.reset(seed=1)
            pool = app.state.pool
            snaps = {
                id(env.unwrapped.snapshot)
                for s in pool.sessions.values()
                for env in s.envs.values()
            }
            held = len(pool.sessions)
            for c in clients:
                await c.close()
            return snaps, held

        snaps, held = asyncio.run(asyncio.wait_for(hold(), 60))
        assert held == 6 and len(snaps) == 1


def test_full_server_refuses_new_sessions_and_recovers(paths) -> None:
    with serve_in_thread(config(paths, max_sessions=2)) as (url, _):
        a, b = (GenericEnvClient(base_url=url).sync() for _ in range(2))
        a.reset(seed=1)
        b.reset(seed=2)
        start = time.monotonic()
        with (
            GenericEnvClient(base_url=url).sync() as c,
            pytest.raises(RuntimeError, match="CAPACITY_REACHED"),
        ):
            c.reset(seed=3)
        assert time.monotonic() - start < 10  # refused at once, never hangs
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(
                urllib.request.Request(f"{url}/reset", b"{}", method="POST"), timeout=5
            )
        assert err.value.code == 503 and json.loads(err.value.read())["code"] == "CAPACITY_REACHED"
        a.close()
        wait_until(lambda: metric(url, "wikigym_sessions_active") == 1)
        with GenericEnvClient(base_url=url).sync() as c:
            assert c.reset(seed=3).observation["text"]
        b.close()
        assert metric(url, 'wikigym_sessions_total{outcome="refused"}') >= 2


def test_client_that_disconnects_mid_episode_frees_its_session(paths) -> None:
    from websockets.sync.client import connect

    with serve_in_thread(config(paths, max_sessions=1)) as (url, _):
        ws = connect(url.replace("http://", "ws://") + "/ws", open_timeout=10)
        ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        ws.send(json.dumps({"type": "step", "data": {"message": "<search>city</search>"}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        ws.socket.shutdown(socket.SHUT_RDWR)  # gone without a close message or frame
        ws.socket.close()
        wait_until(lambda: metric(url, "wikigym_sessions_active") == 0)
        with GenericEnvClient(base_url=url).sync() as c:  # the one slot is free again
            assert c.reset(seed=2).observation["info"]["step"] == 0


def test_idle_session_is_closed_with_a_clear_error(paths) -> None:
    from websockets.sync.client import connect

    with serve_in_thread(config(paths, idle_timeout_s=0.5)) as (url, _):
        ws = connect(url.replace("http://", "ws://") + "/ws", open_timeout=10)
        ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
        assert json.loads(ws.recv(timeout=30))["type"] == "observation"
        expired = json.loads(ws.recv(timeout=10))  # sent by the server once idle
        assert expired["type"] == "error" and expired["data"]["code"] == "SESSION_TIMEOUT"
        ws.close()
        with GenericEnvClient(base_url=url).sync() as c:
            c.reset(seed=1)
            time.sleep(2.0)
            # OpenEnv's client reads the timeout error, or (having reconnected on the closed
            # socket) is told that its new session has no episode: either way, never a hang
            with pytest.raises(RuntimeError, match=r"SESSION_TIMEOUT|NOT_RESET"):
                c.step({"message": "<search>city</search>"})
        assert metric(url, 'wikigym_sessions_total{outcome="expired"}') >= 2
        wait_until(lambda: metric(url, "wikigym_sessions_active") == 0)


def test_one_sessions_failures_never_touch_another(paths, tasks) -> None:
    from websockets.sync.client import connect

    task = tasks[0]
    actions = oracle_actions(task)
    with serve_in_thread(config(paths)) as (url, _):
        with GenericEnvClient(base_url=url).sync() as good:
            results = [good.reset(seed=3, task_id=task.task_id)]
            bad = connect(url.replace("http://", "ws://") + "/ws", open_timeout=10)
            codes = []
            for raw in [
                "not json",
                json.dumps({"type": "teleport"}),
                json.dumps({"type": "step", "data": {"message": "hi"}}),
                json.dumps({"type": "reset", "data": {"task_id": "no-such-task"}}),
                json.dumps({"type": "reset", "data": {"seed": -1}}),
                json.dumps({"type": "reset", "data": {"env_id": "Nope-v0"}}),
                json.dumps({"type": "reset", "data": {"seed": 1, "bogus": 1}}),
            ]:
                bad.send(raw)
                results.append(good.step({"message": actions[len(results) - 1]})) if len(
                    results
                ) <= len(actions) else None
                codes.append(json.loads(bad.recv(timeout=30))["data"]["code"])
            bad.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            bad.recv(timeout=30)
            bad.send(json.dumps({"type": "step", "data": {"message": WRONG_ANSWER}}))
            bad.recv(timeout=30)
            bad.send(json.dumps({"type": "step", "data": {"message": WRONG_ANSWER}}))
            codes.append(json.loads(bad.recv(timeout=30))["data"]["code"])
            bad.socket.close()
            while len(results) <= len(actions):
                results.append(good.step({"message": actions[len(results) - 1]}))
        assert codes == [
            "INVALID_JSON", "UNKNOWN_TYPE", "NOT_RESET", "VALIDATION_ERROR",
            "VALIDATION_ERROR", "VALIDATION_ERROR", "VALIDATION_ERROR", "EPISODE_DONE",
        ]  # fmt: skip
        assert transcript_of(results) == in_process(paths, task.task_id, 3, actions)
        assert metric(url, 'wikigym_errors_total{code="VALIDATION_ERROR"}') == 4


def test_http_one_shots_are_stateless(paths, tasks) -> None:
    def post(url: str, body: dict) -> dict:
        req = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
        return json.loads(urllib.request.urlopen(req, timeout=30).read())

    task = tasks[1]
    action = oracle_actions(task)[0]
    with serve_in_thread(config(paths)) as (url, _):
        ref = in_process(paths, task.task_id, 4, [action])
        for _ in range(2):  # the same answer each time: nothing is kept between calls
            got = post(f"{url}/reset", {"seed": 4, "task_id": task.task_id})
            assert (got["observation"]["text"], got["observation"]["info"]) == ref[0][:2]
            got = post(
                f"{url}/step",
                {"reset": {"seed": 4, "task_id": task.task_id}, "action": {"message": action}},
            )
            assert (got["observation"]["text"], got["observation"]["info"], got["reward"]) == ref[
                1
            ][:3]
        health = json.loads(urllib.request.urlopen(f"{url}/health", timeout=5).read())
        assert health["status"] == "healthy"
        schema = json.loads(urllib.request.urlopen(f"{url}/schema", timeout=5).read())
        assert (
            schema["action"]["required"] == ["message"]
            and "info" in schema["observation"]["properties"]
        )
        assert metric(url, "wikigym_sessions_active") == 0
        assert metric(url, "wikigym_step_seconds_count") == 2


def test_token_is_required_when_set(paths) -> None:
    with serve_in_thread(config(paths, token="s3cret")) as (url, _):
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}/health", timeout=5)
        assert err.value.code == 401
        with pytest.raises(ConnectionError, match="403"):  # refused before the handshake ends
            GenericEnvClient(base_url=url).sync().connect()
        req = urllib.request.Request(f"{url}/health", headers={"Authorization": "Bearer s3cret"})
        assert json.loads(urllib.request.urlopen(req, timeout=5).read())["status"] == "healthy"
        with GenericEnvClient(base_url=f"{url}/s3cret").sync() as c:
            assert c.reset(seed=1).observation["info"]["step"] == 0


def _serve_process(paths, *extra: str) -> tuple[subprocess.Popen, str]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    corpus, tasks = paths
    cmd = [
        sys.executable,
        "-m",
        "wikigym",
        "serve",
        "--corpus",
        corpus,
        "--tasks",
        tasks,
        "--port",
        "0",
        "--python",
        "off",
        *extra,
    ]
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    line = proc.stdout.readline()  # the first line names the address (blocks until bound)
    assert line.startswith("wikigym serve: http://127.0.0.1:"), (
        line,
        proc.stderr.read() if proc.poll() is not None else "",
    )
    return proc, line.split()[2]


def test_sigterm_shuts_down_gracefully(paths) -> None:
    proc, url = _serve_process(paths)
    try:
        c = GenericEnvClient(base_url=url).sync()
        c.reset(seed=1)
        c.step({"message": "<search>city</search>"})  # mid-episode
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=30)
        with pytest.raises((ConnectionError, RuntimeError, OSError)):
            c.step({"message": "<search>town</search>"})  # the server is gone: an error
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    # Drained, then ended as every long command ends on SIGTERM: 143 and one line.
    assert proc.returncode == 128 + signal.SIGTERM, err
    assert "stopped" in out and "Traceback" not in err
    assert err.strip().splitlines()[-1] == "wikigym: terminated (SIGTERM)"


def test_cli_mistakes_are_one_line(paths, tmp_path) -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for args, needle in [
        (["--corpus", str(tmp_path / "nope")], "nope"),
        (["--max-sessions", "0"], "max_sessions"),
        (["--env", "Nope-v0"], "Nope-v0"),
    ]:
        p = subprocess.run(
            [sys.executable, "-m", "wikigym", "serve", "--port", "0", *args],
            capture_output=True, text=True, env=env, timeout=120,
        )  # fmt: skip
        lines = p.stderr.strip().splitlines()
        assert p.returncode == 1 and len(lines) == 1 and needle in lines[0], p.stderr


def test_websocket_sessions_are_never_compressed(paths) -> None:
    """permessage-deflate (zlib on every observation) is never negotiated, even when offered;
    the session is served uncompressed and JSON stays strict."""
    from websockets.sync.client import connect

    with serve_in_thread(config(paths)) as (url, _):  # noqa: SIM117
        # the client offers permessage-deflate (websockets' default)
        with connect(url.replace("http://", "ws://") + "/ws", open_timeout=10) as ws:
            assert not ws.response.headers.get("Sec-WebSocket-Extensions")
            ws.send(json.dumps({"type": "reset", "data": {"seed": 1}}))
            assert json.loads(ws.recv(timeout=30))["type"] == "observation"
            ws.send('{"type": "step", "data": {"message": NaN}}')  # strict JSON on the wire
            reply = json.loads(ws.recv(timeout=30))
            assert reply["type"] == "error" and reply["data"]["code"] == "INVALID_JSON"
            ws.send(json.dumps({"type": "step", "data": {"message": "<search>city</search>"}}))
            assert json.loads(ws.recv(timeout=30))["type"] == "observation"  # still served


def test_openenv_validator_passes(paths) -> None:
    """OpenEnv's own runtime validator (``openenv validate``'s checks of a running server)."""
    from openenv.cli._validation import validate_running_environment

    with serve_in_thread(config(paths)) as (url, _):
        report = validate_running_environment(url, timeout_s=30)
    assert report["passed"], [c for c in report["criteria"] if not c["passed"]]
    assert report["mode"] == "simulation" and report["standard_profile"] == "openenv-http/1.x"


def test_metadata_and_capacity_read_as_openenv_models(paths) -> None:
    from openenv.core.env_server.types import (
        ConcurrencyConfig,
        EnvironmentMetadata,
        ServerCapacityStatus,
    )

    def get(url: str) -> dict:
        return json.loads(urllib.request.urlopen(url, timeout=10).read())

    with serve_in_thread(config(paths, max_sessions=7, idle_timeout_s=60)) as (url, _):
        meta = get(f"{url}/metadata")
        described = EnvironmentMetadata(**{k: meta[k] for k in EnvironmentMetadata.model_fields})
        assert described.name == "wikigym" and described.version
        limit = ConcurrencyConfig(
            max_concurrent_envs=meta["max_concurrent_envs"], session_timeout=meta["session_timeout"]
        )
        assert limit.max_concurrent_envs == 7 and limit.session_timeout == 60
        assert meta["SUPPORTS_CONCURRENT_SESSIONS"] is True
        with GenericEnvClient(base_url=url).sync() as c:
            c.reset(seed=1)
            capacity = get(f"{url}/capacity")
            assert (
                ServerCapacityStatus(
                    **{k: capacity[k] for k in ("active_sessions", "max_sessions")}
                ).available_slots
                == 6
            )


def test_state_is_the_sessions_env_state(paths, tasks) -> None:
    task = tasks[0]
    with serve_in_thread(config(paths)) as (url, _):
        fresh = json.loads(urllib.request.urlopen(f"{url}/state", timeout=10).read())
        assert fresh == {
            "session_id": None, "episode_id": None, "env_id": None,
            "step_count": 0, "task_id": None, "done": False,
        }  # fmt: skip
        with GenericEnvClient(base_url=url).sync() as c:
            first = c.reset(seed=2, task_id=task.task_id, episode_id="ep-1")
            c.step({"message": oracle_actions(task)[0]})
            session_id = first.observation["session_id"]
            over_http = json.loads(
                urllib.request.urlopen(f"{url}/state?session_id={session_id}", timeout=10).read()
            )
            assert over_http == c.state() == {
                "session_id": session_id, "episode_id": "ep-1", "env_id": "WikiSearch-v1",
                "step_count": 1, "task_id": task.task_id, "done": False,
            }  # fmt: skip
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(f"{url}/state?session_id=s-nope", timeout=10)
        assert err.value.code == 404


def test_schema_is_what_the_server_accepts(paths, tasks) -> None:
    """Every action form /schema describes is stepped; every other is refused with a
    validation error naming the field (``{"text": ...}`` is not re-encoded as a tool call)."""
    import jsonschema

    task = tasks[0]
    call = {"name": "search", "arguments": {"query": "city"}}
    candidates = [
        {"message": "<search>city</search>"},
        {"message": "<search>city</search>", "metadata": {"k": 1}},
        call,
        {"type": "call_tool", "tool_name": "search", "arguments": {"query": "city"}},
        {"text": "Paris"},
        {"message": "x", "text": "y"},
        {"message": 3},
        {},
        {"name": "search", "arguments": {"query": "city"}, "extra": 1},
        {"type": "call_tool", "arguments": {}},
    ]

    def post(url: str, body: dict) -> tuple[int, dict]:
        request = urllib.request.Request(url, json.dumps(body).encode(), method="POST")
        try:
            return 200, json.loads(urllib.request.urlopen(request, timeout=30).read())
        except urllib.error.HTTPError as exc:
            return exc.code, json.loads(exc.read())

    with serve_in_thread(config(paths)) as (url, _):
        schema = json.loads(urllib.request.urlopen(f"{url}/schema", timeout=10).read())
        forms = [schema["action"], *schema["action"]["x-wikigym-also-accepts"]]
        for action in candidates:
            described = any(jsonschema.Draft202012Validator(f).is_valid(action) for f in forms)
            status, reply = post(
                f"{url}/step", {"reset": {"seed": 1, "task_id": task.task_id}, "action": action}
            )
            assert (status == 200) == described, (action, status, reply)
            if status != 200:
                assert reply["code"] == "VALIDATION_ERROR"
        # a tool-call object steps exactly as its JSON text does
        _, by_object = post(
            f"{url}/step", {"reset": {"seed": 1, "task_id": task.task_id}, "action": call}
        )
        _, by_text = post(
            f"{url}/step",
            {
                "reset": {"seed": 1, "task_id": task.task_id},
                "action": {"message": json.dumps(call)},
            },
        )
        assert by_object["observation"]["text"] == by_text["observation"]["text"]
        assert by_object["observation"]["info"]["tools"] == ["search"]
        # over the WebSocket too: the refusal names the field
        with GenericEnvClient(base_url=url).sync() as c:
            c.reset(seed=1)
            with pytest.raises(
                RuntimeError, match=r"VALIDATION_ERROR.*'text'|'text'.*VALIDATION_ERROR"
            ):
                c.step({"text": "Paris"})
            assert c.state()["step_count"] == 0  # nothing was stepped
        # reset requests: the fields the schema lists, and no others
        reset_schema = jsonschema.Draft202012Validator(schema["reset"])
        for body in ({"seed": 1}, {"task_id": task.task_id}, {"seed": -1}, {"bogus": 1}):
            status, _ = post(f"{url}/reset", body)
            assert (status == 200) == reset_schema.is_valid(body), body
