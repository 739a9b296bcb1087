"""The one tool registry: every tool, by name, in listing order.

The tools are the modules of this package that define ``TOOL = Tool(...)`` at module level:
:func:`discover` imports them (sorted by module name, on first use) and registers each, so
adding a tool is adding its module. A tool defined elsewhere (a user's own) is registered with
:func:`register_tool`. Nothing else in wikigym lists tools: the env's descriptions, the parser,
the OpenAI schema, TRL's ``environment_factory`` methods, the SFT export, the eval agents and
the server all read this registry.

Listing order is :attr:`Tool.order`, then the name. Registering a tool changes no registered
env id: an id pins the tools it enables (see :mod:`wikigym.envs.registration`).
"""

from __future__ import annotations

import importlib
import pkgutil
import threading
from collections.abc import Iterable

from wikigym.tools.base import Tool

_LOCK = threading.RLock()
_TOOLS: dict[str, Tool] = {}
_SCANNED: set[str] = set()  # modules of this package already looked at
_ORDERED: list[tuple[Tool, ...]] = []  # the listing, cached until the registry changes


def discover() -> None:
    """Import the tool modules of this package not imported yet and register their ``TOOL``
    (the first use of the registry does this; call it again after adding a folder to the
    package's ``__path__``)."""
    package = importlib.import_module(__package__ or "wikigym.tools")
    with _LOCK:
        found = sorted({m.name for m in pkgutil.iter_modules(package.__path__)} - _SCANNED)
        for name in found:
            module = importlib.import_module(f"{package.__name__}.{name}")
            _SCANNED.add(name)
            tool = getattr(module, "TOOL", None)
            if isinstance(tool, Tool):
                register_tool(tool)


def register_tool(tool: Tool) -> None:
    """Add a tool (a user's own; the package's are found by :func:`discover`).

    Raises:
        ValueError: Another tool has the same name.
    """
    with _LOCK:
        known = _TOOLS.get(tool.name)
        if known is not None and known is not tool:
            raise ValueError(f"a tool named {tool.name!r} is registered already")
        _TOOLS[tool.name] = tool
        _ORDERED.clear()


def unregister_tool(name: str) -> None:
    """Remove a registered tool (tests and plugins that clean up after themselves)."""
    with _LOCK:
        _TOOLS.pop(name, None)
        _ORDERED.clear()


def all_tools() -> tuple[Tool, ...]:
    """Every registered tool, in listing order."""
    with _LOCK:
        if not _SCANNED:
            discover()
        if not _ORDERED:
            _ORDERED.append(tuple(sorted(_TOOLS.values(), key=lambda t: (t.order, t.name))))
        return _ORDERED[0]


def tool_names() -> tuple[str, ...]:
    """The names of every registered tool, in listing order."""
    return tuple(t.name for t in all_tools())


def get_tool(name: str) -> Tool:
    """The tool called ``name``.

    Raises:
        KeyError: No tool has that name (the message lists the known ones).
    """
    tool = next((t for t in all_tools() if t.name == name), None)
    if tool is None:
        raise KeyError(f"unknown tool {name!r}; known tools: {list(tool_names())}")
    return tool


def select_tools(names: Iterable[str] | None = None) -> tuple[Tool, ...]:
    """The tools named (default: all), in listing order, without repeats.

    Raises:
        KeyError: A name no tool has.
        TypeError: A name that is not a string.
    """
    if names is None:
        return all_tools()
    wanted = list(names)
    for name in wanted:
        if not isinstance(name, str):
            raise TypeError(f"expected tool names (str), got {name!r} ({type(name).__name__})")
        get_tool(name)
    return tuple(t for t in all_tools() if t.name in wanted)
