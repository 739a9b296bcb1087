"""``wikigym replay`` on untrusted trajectory files: each attack of issue 9 (item 2) is refused.

The trajectories are recorded for real (enwiki excerpt snapshot, one-hop tasks), then edited
the way a hostile or broken file would be.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest

from wikigym.cli import main as cli
from wikigym.corpora import Snapshot
from wikigym.envs import trajectory_file
from wikigym.envs.replay import RecordTrajectory, load_trajectory, replay
from wikigym.errors import TrajectoryError
from wikigym.sandbox import SandboxLimits
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tools import format_tool_call


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


@pytest.fixture(scope="module")
def task_file(enwiki_snapshot: Snapshot, tmp_path_factory: pytest.TempPathFactory) -> Path:
    tasks = one_hop_tasks(enwiki_snapshot, n=5, seed=0)
    return tasks.save(tmp_path_factory.mktemp("tasks") / "tasks.jsonl")


def record(
    snap: Snapshot, task_file: Path, folder: Path, actions: list[str], **kwargs: Any
) -> Path:
    """Record one episode of ``actions`` (the last one must end it)."""
    env = RecordTrajectory(
        gym.make("WikiSearch-v1", corpus=str(snap.path), tasks=str(task_file), **kwargs), folder
    )
    env.reset(seed=7, options={"task_id": env.unwrapped.tasks[0].task_id})  # type: ignore[attr-defined]
    done = False
    for action in actions:
        assert not done
        _, _, terminated, truncated, _ = env.step(action)
        done = terminated or truncated
    assert done and env.last_path is not None
    return env.last_path


@pytest.fixture(scope="module")
def good(
    enwiki_snapshot: Snapshot, task_file: Path, tmp_path_factory: pytest.TempPathFactory
) -> Path:
    actions = ["<search>anarchism</search>", call("answer", text="Anarchism", citations=["p1"])]
    return record(
        enwiki_snapshot, task_file, tmp_path_factory.mktemp("traj"), actions, python="off"
    )


def lines_of(path: Path) -> list[dict[str, Any]]:
    return [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines()]


def write(path: Path, lines: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def edited(good: Path, tmp_path: Path, **header: Any) -> Path:
    lines = lines_of(good)
    lines[0].update(header)
    return write(tmp_path / "edited.jsonl", lines)


def one_line_failure(path: Path, capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    """Run ``wikigym replay PATH``: exit 1, one line on stderr, no traceback; the line."""
    capsys.readouterr()
    assert cli(["replay", str(path), *argv]) == 1
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err
    return err


def test_good_trajectory_replays(good: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert replay(good) == (2, None)
    assert cli(["replay", str(good)]) == 0
    assert "2 steps replayed identically" in capsys.readouterr().out
    header, *steps = load_trajectory(good)
    assert header["env_id"] == "WikiSearch-v1" and len(steps) == 2


# ---- the env a file asks for ---------------------------------------------------------------
def test_env_id_cannot_import_a_module(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    marker = tmp_path / "imported"
    module = tmp_path / "mods" / "wikigym_attack_mod.py"
    module.parent.mkdir()
    module.write_text(f"open({str(marker)!r}, 'w').close()\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(module.parent))
    for env_id in ("wikigym_attack_mod:WikiSearch-v1", "wikigym_attack_mod/WikiSearch-v1"):
        path = edited(good, tmp_path, env_id=env_id)
        with pytest.raises(TrajectoryError, match="not replayable"):
            replay(path)
        err = one_line_failure(path, capsys)
        assert "WikiSearch-v1" in err
    assert not marker.exists() and "wikigym_attack_mod" not in sys.modules
    # the module is importable: without the allow-list gym.make would have run it
    path = edited(good, tmp_path, env_id="Calc-v0")
    with pytest.raises(TrajectoryError, match="not replayable"):
        replay(path)


def test_unsafe_python_needs_trust(
    enwiki_snapshot: Snapshot,
    task_file: Path,
    good: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    marker = tmp_path / "ran-on-host"
    lines = lines_of(good)
    lines[0]["env_kwargs"]["python"] = "unsafe"
    code = f"open({str(marker)!r}, 'w').close()"
    lines[1]["action"] = call("python", code=code)
    path = write(tmp_path / "unsafe.jsonl", lines)
    with pytest.raises(TrajectoryError, match=r"python='unsafe'.*--trust"):
        replay(path)
    err = one_line_failure(path, capsys)
    assert "--trust" in err
    assert not marker.exists()
    # a file recorded by the user with python="unsafe" replays with the explicit flag
    actions = [call("python", code="print(6 * 7)"), call("answer", text="42", citations=[])]
    mine = record(enwiki_snapshot, task_file, tmp_path / "mine", actions, python="unsafe")
    with pytest.raises(TrajectoryError, match="--trust"):
        replay(mine)
    assert replay(mine, trust=True) == (2, None)
    capsys.readouterr()
    assert cli(["replay", str(mine), "--trust"]) == 0


def test_a_file_cannot_raise_the_sandbox_limits_of_its_replay(
    enwiki_snapshot: Snapshot,
    task_file: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Issue 33: the replayer's limits (the defaults, or --sandbox-limits) are ceilings; a
    file may ask for less, never more, unless --trust."""
    actions = [call("python", code="print(6 * 7)"), call("answer", text="42", citations=[])]
    mine = record(
        enwiki_snapshot, task_file, tmp_path / "mine", actions, sandbox={"wall_seconds": 5}
    )
    assert replay(mine) == (2, None)  # less than the defaults: replayed as recorded
    lines = lines_of(mine)
    lines[0]["env_kwargs"]["sandbox"] = {"wall_seconds": 86_400.0, "max_file_bytes": 1 << 30}
    hostile = write(tmp_path / "hostile.jsonl", lines)
    with pytest.raises(TrajectoryError, match=r"wall_seconds=86400, above this replay's 10"):
        replay(hostile)
    err = one_line_failure(hostile, capsys)
    assert "--sandbox-limits" in err and "--trust" in err
    # No sandbox limit given by the file means the defaults: above a lower ceiling too.
    with pytest.raises(TrajectoryError, match=r"cpu_seconds=5, above this replay's 1"):
        replay(mine, sandbox_limits={"cpu_seconds": 1})
    assert "cpu_seconds=5" in one_line_failure(
        mine, capsys, "--sandbox-limits", '{"cpu_seconds": 1}'
    )
    # Every field is capped, each by its own ceiling.
    for name, value in SandboxLimits().to_dict().items():
        lines[0]["env_kwargs"]["sandbox"] = {name: value * 2}
        path = write(tmp_path / f"{name}.jsonl", lines)
        with pytest.raises(TrajectoryError, match=f"{name}="):
            replay(path)
        assert replay(path, sandbox_limits={name: value * 2}) == (2, None)
    # The replayer may raise its ceilings, or trust a file it made.
    ceiling = '{"wall_seconds": 86400, "max_file_bytes": 1073741824}'
    capsys.readouterr()
    assert cli(["replay", str(hostile), "--sandbox-limits", ceiling]) == 0
    assert replay(hostile, trust=True) == (2, None)
    # A bad ceiling is one line too.
    assert "JSON object" in one_line_failure(hostile, capsys, "--sandbox-limits", "{wall")
    assert "unknown sandbox limit" in one_line_failure(
        hostile, capsys, "--sandbox-limits", '{"wall": 1}'
    )


@pytest.mark.parametrize(
    "kwargs,field",
    [
        ({"entry_point": "os:system"}, "entry_point"),
        ({"tool_config": {"page_chars": 1}}, "tool_config"),
        ({"max_steps": "5"}, "max_steps"),
        ({"max_steps": True}, "max_steps"),
        ({"max_steps": 10**9}, "max_steps"),
        ({"max_obs_chars": 0}, "max_obs_chars"),
        ({"reward": "wikigym.evil:Reward"}, "reward"),
        ({"tools": ["search", "shell", "answer"]}, "tools"),
        ({"python": "host"}, "python"),
        ({"corpus": 5}, "corpus"),
        ({"tasks": ["a.jsonl"]}, "tasks"),
        ({"tool_format": "xml"}, "tool_format"),
        ({"search_k": 0}, "search_k"),
        ({"search_k": 10**6}, "search_k"),
        ({"search_k": "3"}, "search_k"),
    ],
)
def test_env_kwargs_allow_list(
    good: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kwargs: dict[str, Any],
    field: str,
) -> None:
    lines = lines_of(good)
    lines[0]["env_kwargs"].update(kwargs)
    path = write(tmp_path / "kw.jsonl", lines)
    with pytest.raises(TrajectoryError, match=field):
        replay(path)
    assert field in one_line_failure(path, capsys)


def test_corpus_and_tasks_paths_are_data(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A path is opened as a snapshot or a TaskSet, never run; a wrong one is one typed line."""
    script = tmp_path / "tasks.py"
    script.write_text(f"open({str(tmp_path / 'ran')!r}, 'w').close()\n", encoding="utf-8")
    lines = lines_of(good)
    lines[0]["env_kwargs"]["tasks"] = str(script)
    path = write(tmp_path / "paths.jsonl", lines)
    err = one_line_failure(path, capsys)
    assert ".jsonl or .parquet" in err and not (tmp_path / "ran").exists()
    lines[0]["env_kwargs"]["tasks"] = str(tmp_path / "nothere.jsonl")
    assert "nothere.jsonl" in one_line_failure(write(path, lines), capsys)


# ---- the header's ids ------------------------------------------------------------------------
@pytest.mark.parametrize("field", ["snapshot_id", "taskset_id", "task_id"])
def test_header_ids_must_match(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    recorded = lines_of(good)[0][field]
    fake = "0" * 64 if field != "task_id" else "not-the-task\nsecond line"
    path = edited(good, tmp_path, **{field: fake})
    err = one_line_failure(path, capsys)
    assert field in err and repr(fake) in err and recorded in err


# ---- episodes that did not end, or went on after ending ----------------------------------------
def test_incomplete_recording_is_reported(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cut = write(tmp_path / "cut.jsonl", lines_of(good)[:-1])  # the answer step is missing
    with pytest.raises(TrajectoryError, match="incomplete"):
        replay(cut)
    assert "after step 1" in one_line_failure(cut, capsys)
    header_only = write(tmp_path / "header.jsonl", lines_of(good)[:1])
    assert "after step 0" in one_line_failure(header_only, capsys)


def test_steps_after_the_end_are_refused(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lines = lines_of(good)
    path = write(tmp_path / "more.jsonl", [*lines, lines[-1]])
    assert "ends the episode" in one_line_failure(path, capsys)


# ---- corrupt and hostile bytes ---------------------------------------------------------------
def corrupt_variants(good: Path) -> dict[str, bytes]:
    raw = good.read_bytes()
    lines = lines_of(good)
    header = json.dumps(lines[0]).encode()

    def with_step(**change: Any) -> bytes:
        step = {**lines[1], **change}
        return header + b"\n" + json.dumps(step).encode() + b"\n"

    return {
        "truncated JSON": raw[: len(raw) - 40],
        "empty file": b"",
        "not UTF-8": header + b"\n\xff\xfe{}\n",
        "deep nesting": header + b"\n" + b"[" * 200_000 + b"\n",
        "NaN reward": with_step().replace(b'"reward": 0.0', b'"reward": NaN'),
        "huge integer": header.replace(b'"seed": 7', b'"seed": ' + b"9" * 5000),
        "negative seed": json.dumps({**lines[0], "seed": -1}).encode(),
        "reward as text": with_step(reward="0.0"),
        "action not text": with_step(action={"name": "search"}),
        "missing field": with_step(terminated=None),
        "unknown field": with_step(extra=1),
        "header is a list": b"[1, 2]\n",
        "no format": json.dumps({k: v for k, v in lines[0].items() if k != "format"}).encode(),
        "other format": json.dumps({**lines[0], "format": "wikigym.trajectory/9"}).encode(),
        "options not allowed": json.dumps({**lines[0], "options": {"seed": 1}}).encode(),
        "env_kwargs not an object": json.dumps({**lines[0], "env_kwargs": [1]}).encode(),
        "step is a string": header + b'\n"step"\n',
    }


CORRUPT = (
    "truncated JSON",
    "empty file",
    "not UTF-8",
    "deep nesting",
    "NaN reward",
    "huge integer",
    "negative seed",
    "reward as text",
    "action not text",
    "missing field",
    "unknown field",
    "header is a list",
    "no format",
    "other format",
    "options not allowed",
    "env_kwargs not an object",
    "step is a string",
)


@pytest.mark.parametrize("label", CORRUPT)
def test_corrupt_files_are_one_typed_line(
    good: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], label: str
) -> None:
    variants = corrupt_variants(good)
    assert set(variants) == set(CORRUPT)
    path = tmp_path / "bad.jsonl"
    path.write_bytes(variants[label])
    with pytest.raises(TrajectoryError) as exc:
        replay(path)
    assert "incomplete" not in str(exc.value)  # each variant fails on what it breaks
    assert str(path) in one_line_failure(path, capsys)


def test_huge_lines_and_files_are_refused(
    good: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    size = max(len(x) for x in good.read_bytes().splitlines()) + 1
    monkeypatch.setattr(trajectory_file, "MAX_LINE_BYTES", size)
    assert replay(good) == (2, None)  # the limit itself is fine
    big = tmp_path / "big.jsonl"
    big.write_bytes(good.read_bytes() + b" " * (size + 10) + b"\n")
    assert "longer than" in one_line_failure(big, capsys)
    monkeypatch.setattr(trajectory_file, "MAX_FILE_BYTES", len(good.read_bytes()) - 1)
    assert "larger than" in one_line_failure(good, capsys)
    assert "does not exist" in one_line_failure(tmp_path, capsys)  # a directory


def test_cli_flag_reaches_replay_in_a_subprocess(good: Path, tmp_path: Path) -> None:
    """The real command line: a hostile file gives exit 1 and one line, no traceback."""
    path = edited(good, tmp_path, env_id="os:WikiSearch-v1")
    proc = subprocess.run(
        [sys.executable, "-m", "wikigym", "replay", str(path), "--trust"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1 and "not replayable" in proc.stderr


def test_recorder_refuses_an_id_replay_would_refuse(
    enwiki_snapshot: Snapshot, task_file: Path, tmp_path: Path
) -> None:
    env = gym.make("WikiSearch-v1", corpus=str(enwiki_snapshot.path), tasks=str(task_file))
    with pytest.raises(TrajectoryError, match="cannot be replayed"):
        RecordTrajectory(env, tmp_path, env_id="mymodule:WikiSearch-v1")
