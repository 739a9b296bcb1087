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

# errors 0 < corpora, sandbox 1 < tasks 2 < tools 3 < envs 4 < synth 5 < eval, trainers 6 <
# integrations 7 (DESIGN.md).
# "root" is the package itself and its top-level modules (the CLI, the defaults): they see all.
RANKS: dict[str, float] = {
    "errors": 0,
    "codes": 0,
    "version": 0,
    # CLI helpers that every room's command may use; they import only errors.
    "cliutil": 0.5,
    "cli_args": 0.5,
    "cli_examples": 0.5,
    "outputs": 0.5,
    "jsonl": 0.5,
    "corpora": 1,
    "sandbox": 1,
    "tasks": 2,
    "tools": 3,
    "envs": 4,
    "synth": 5,
    "eval": 6,
    "trainers": 6,
    "integrations": 7,
    # Above integrations: the CLI mounts `wikigym serve` (integrations/serve) like every room.
    "root": 7.5,
}
ROOT_MODULES = ("wikigym", "wikigym.cli", "wikigym.__main__", "wikigym.defaults")


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
    assert not {m for m in loaded if m.startswith("wikigym.tools")}


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
        assert out.strip() == "['Calc-v0', 'WikiSearch-v0', 'WikiSearch-v1']", statement


def test_one_stop_word_list_one_sentence_splitter_one_hit() -> None:
    from wikigym.corpora.index import ENGLISH_STOPWORDS, Hit
    from wikigym.corpora.passages import split_sentences
    from wikigym.envs import wrappers
    from wikigym.eval import heuristic
    from wikigym.tools import search

    assert wrappers.STOPWORDS == heuristic.STOPWORDS == frozenset(ENGLISH_STOPWORDS)
    assert split_sentences("Snow is white. 3 cats sat!\n\nA list\n") == [
        "Snow is white.",
        "3 cats sat!",
        "A list",
    ]
    assert wrappers.Hit is Hit and search.Hit is Hit
    assert not hasattr(wrappers, "sentences") and not hasattr(heuristic, "_SENTENCE")


def test_the_architecture_map_gives_every_room_its_rank() -> None:
    """docs/architecture.md's room table says what RANKS enforces (the map stays true)."""
    import re

    doc = (PACKAGE.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    table = doc.split("## Rooms", 1)[1].split("\n## ", 1)[0]
    documented: dict[str, float] = {}
    for line in table.splitlines():
        match = re.match(r"\| (\d+(?:\.\d+)?) \| ([^|]+) \|", line)
        if match:
            rank, rooms = float(match.group(1)), match.group(2).strip()
            names = re.findall(r"`([a-z_]+)`", rooms) or [rooms]
            documented.update(dict.fromkeys(names, rank))
    assert documented == RANKS


def test_one_module_resolves_the_cache() -> None:
    """Only the defaults module reads the cache's environment variable."""
    readers = sorted(
        str(path.relative_to(PACKAGE))
        for path in PACKAGE.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Constant) and node.value == "WIKIGYM_CACHE"
    )
    assert readers == ["defaults.py"]
