"""SIGTERM stops a trainer fed by the async rollout service as Ctrl-C does: the main thread
gets :class:`~wikigym.errors.Terminated` (a ``KeyboardInterrupt``), the ``with`` blocks stop
generation and kill the actors, and no Ray process outlives the driver. Ray's own handler,
which ``ray.init`` installs and which was in force on 3c40d63, calls ``sys.exit(15)`` instead:
the script's ``except Terminated`` never ran and it exited 15."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from integration_support import need
from ray_support import small_world

need("ray")
psutil = pytest.importorskip("psutil")

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import json, sys, time
from wikigym.tools import format_tool_call
from wikigym.errors import Terminated
from wikigym.integrations.ray import ReplayBuffer, RolloutPool, RolloutService

WRONG = format_tool_call("answer", {"text": "certainly not the answer"})


class Slow:
    def __call__(self, turn):
        time.sleep(0.05)
        return WRONG


try:
    with RolloutPool(2, **json.loads(sys.argv[1])) as pool:
        with RolloutService(pool, Slow(), ReplayBuffer(capacity=8), seed=0) as service:
            service.take(2)
            print("ready", flush=True)
            while True:
                service.take(2)
except Terminated:
    print("trainer: stopped on SIGTERM", file=sys.stderr, flush=True)
    sys.exit(143)
"""


def test_sigterm_stops_the_service_and_its_actors(tmp_path: Path) -> None:
    world = small_world(tmp_path)
    script = tmp_path / "trainer.py"
    script.write_text(SCRIPT)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    proc = subprocess.Popen(
        [sys.executable, str(script), json.dumps(world)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.strip() == "ready", proc.stderr.read() if proc.stderr else ""
        family = psutil.Process(proc.pid).children(recursive=True)
        assert family  # Ray's processes and the actors
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 143, err
    assert err.strip().splitlines()[-1] == "trainer: stopped on SIGTERM", err
    _, alive = psutil.wait_procs(family, timeout=60)
    assert not alive, [p.info if hasattr(p, "info") else p for p in alive]
