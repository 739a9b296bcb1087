"""wikigym.sandbox: model-written Python run in Linux namespaces (bubblewrap), with seccomp and
cgroup limits. A room of its own below tools and envs: it knows nothing of snapshots, tasks or
tools; the ``python`` tool (:mod:`wikigym.tools`) is its one client in the package."""

from __future__ import annotations

from wikigym.codes import SandboxCode
from wikigym.sandbox.sandbox import LimitPlan, PythonSandbox, SandboxLimits, SandboxResult

__all__ = ["LimitPlan", "PythonSandbox", "SandboxCode", "SandboxLimits", "SandboxResult"]
