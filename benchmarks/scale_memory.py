"""Where a build's memory goes: peak RSS of its process tree, split by kind and by phase.

``VmRSS`` counts the file pages a process has mapped as well as its own memory: Tantivy
reads segments through ``mmap`` (merges, the layout check), so a merge of large segments
shows up in RSS as the page cache of the files it reads, which the kernel can drop at any
time. Here each sample sums, over the tree, ``RssAnon`` (the process's own memory) and
``RssFile`` (mapped file pages) from ``/proc/PID/status``, and tags it with the build's
phase, read from the build's temporary folder (``stream``: staging tables exist, up to the
index close;
``resolve``: the resolution's files exist; ``finish``: the stage is gone).
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import psutil
from common import Poller

KINDS = ("VmRSS", "RssAnon", "RssFile")


def _status(pid: int) -> dict[str, int]:
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as f:
            for line in f:
                key, _, value = line.partition(":")
                if key in KINDS:
                    out[key] = int(value.split()[0]) * 1024
    except OSError:
        pass
    return out


def build_phase(out: Path) -> str:
    """The phase of the build writing ``out``, from its temporary sibling."""
    building = sorted(out.parent.glob(f".{out.name}.building-*"))
    if not building:
        return "none"
    tmp = building[0]
    if not (tmp / "stage").exists():
        return "finish"
    if (tmp / "stage" / "resolve").exists():
        return "resolve"
    return "stream"


@dataclass
class PhaseMemory(Poller):
    """Sample the tree of ``pid`` every ``interval`` s; peaks per phase and kind."""

    pid: int
    out: Path
    interval: float = 0.25
    peaks: dict[str, dict[str, int]] = field(default_factory=dict)
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def _sample(self) -> None:
        try:
            root = psutil.Process(self.pid)
            pids = [self.pid, *(p.pid for p in root.children(recursive=True))]
        except psutil.NoSuchProcess:
            return
        total = dict.fromkeys(KINDS, 0)
        for pid in pids:
            for key, value in _status(pid).items():
                total[key] += value
        phase = self.peaks.setdefault(build_phase(self.out), dict.fromkeys(KINDS, 0))
        for key in KINDS:
            phase[key] = max(phase[key], total[key])

    def summary(self) -> dict[str, Any]:
        """``peak_anon_bytes``, ``peak_file_bytes`` (each its own peak) and the per-phase
        peaks (``VmRSS``, ``RssAnon``, ``RssFile`` summed over the tree)."""
        return {
            "peak_anon_bytes": max((p["RssAnon"] for p in self.peaks.values()), default=0),
            "peak_file_bytes": max((p["RssFile"] for p in self.peaks.values()), default=0),
            "memory_by_phase": self.peaks,
        }
