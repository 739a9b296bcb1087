"""The house rules: rooms import only downward, no module import circle, light rooms stay light.

Every import statement counts, at any depth (function-level and ``TYPE_CHECKING`` ones too):
an import inside a function is still an arrow between rooms.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import wikigym

PACKAGE = Path(wikigym.__file__).parent

# errors 0 < corpora 1 < tasks 2 < envs 3 < synth 4 < eval, trainers 5 < integrations 6.
# "root" is the package itself and its top-level modules (the CLI, the wiring): they see all.
RANKS: dict[str, float] = {
    "errors": 0,
    "version": 0,
    # CLI helpers that every room's command may use; they import only errors.
    "cliutil": 0.5,
    "cli_args": 0.5,
    "cli_examples": 0.5,
    "outputs": 0.5,
    "corpora": 1,
    "tasks": 2,
    "envs": 3,
    "synth": 4,
    "eval": 5,
    "trainers": 5,
    "integrations": 6,
    # Above integrations: the CLI mounts `wikigym serve` (integrations/serve) like every room.
    "root": 6.5,
}
ROOT_MODULES = ("wikigym", "wikigym.cli", "wikigym.__main__", "wikigym.wiring")


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _room(module: str) -> str:
    if module in ROOT_MODULES:
        return "root"
    return module.split(".")[1]


def _imports() -> dict[str, set[str]]:
    """Every wikigym module -> the wikigym modules it imports (at any depth)."""
    modules = {_module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in sorted(modules.items()):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        found: set[str] = set()
        for node in ast.walk(tree):
            targets: list[str] = []
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                # ``from pkg import sub`` is an arrow to ``pkg.sub``; ``from mod import name``
                # one to ``mod``.
                subs = [f"{node.module}.{a.name}" for a in node.names]
                targets = [t for t in subs if t in modules] or [node.module]
            for t in targets:
                if t in modules and t != name and t.startswith("wikigym"):
                    found.add(t)
        graph[name] = found
    return graph


def test_every_room_has_a_rank() -> None:
    rooms = {_room(m) for m in _imports()}
    assert rooms <= set(RANKS), f"rooms without a rank: {sorted(rooms - set(RANKS))}"


def test_no_upward_or_sideways_import() -> None:
    bad = []
    for module, targets in _imports().items():
        room = _room(module)
        for target in sorted(targets):
            other = _room(target)
            if other != room and RANKS[other] >= RANKS[room]:
                bad.append(f"{module} ({room}) -> {target} ({other})")
    assert not bad, "imports that do not point downward:\n" + "\n".join(bad)


def test_no_import_circle() -> None:
    graph = _imports()
    state: dict[str, int] = {}
    cycles: list[list[str]] = []

    def visit(node: str, stack: list[str]) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append([*stack[stack.index(nxt) :], nxt])
            elif nxt not in state:
                visit(nxt, stack)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node, [])
    shown = [" -> ".join(c) for c in cycles]
    assert not cycles, "import circles:\n" + "\n".join(shown)


def _loaded_after(statement: str) -> set[str]:
    code = f"import sys\n{statement}\nprint('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    ).stdout
    return set(out.split())


def test_corpora_user_loads_no_gymnasium_and_no_envs() -> None:
    loaded = _loaded_after("import wikigym.corpora")
    assert "gymnasium" not in loaded
    assert not {
        m for m in loaded if m.startswith(("wikigym.envs.", "wikigym.synth", "wikigym.eval"))
    } - {"wikigym.envs.registration"}
    assert "wikigym.envs.tool_specs" not in loaded


def test_import_wikigym_registers_envs_whichever_comes_first() -> None:
    for statement in (
        "import wikigym, gymnasium as gym",
        "import gymnasium as gym, wikigym",
        "import wikigym.corpora, gymnasium.spaces as s, gymnasium as gym",
    ):
        code = f"{statement}\nprint(sorted(i for i in gym.registry if i in wikigym.ENV_IDS))"
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
        ).stdout
        assert out.strip() == "['Calc-v0', 'WikiSearch-v0']", statement


def test_one_stop_word_list_one_sentence_splitter_one_hit() -> None:
    from wikigym.corpora.index import ENGLISH_STOPWORDS, Hit
    from wikigym.corpora.passages import split_sentences
    from wikigym.envs import results, wrappers
    from wikigym.eval import heuristic

    assert wrappers.STOPWORDS == heuristic.STOPWORDS == frozenset(ENGLISH_STOPWORDS)
    assert split_sentences("Snow is white. 3 cats sat!\n\nA list\n") == [
        "Snow is white.",
        "3 cats sat!",
        "A list",
    ]
    assert wrappers.Hit is Hit and results.Hit is Hit
    assert not hasattr(wrappers, "sentences") and not hasattr(heuristic, "_SENTENCE")
