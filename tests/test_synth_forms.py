"""Question forms and node types: one class each, registered by name, asked for roles.

The modules that walk queries (evaluation, wording, minimisation, generation, near-misses,
stats) call a node's methods; none asks which class a node is. A new form is one module of
``wikigym/synth/forms/`` and its test: the package imports every module in it, the registries
know it by name, and the generator drafts it when a config asks for it.
"""

from __future__ import annotations

import ast
import math
import pkgutil
import sys
from pathlib import Path

import pytest

import wikigym
import wikigym.synth.forms as forms_pkg
from wikigym.errors import SynthError
from wikigym.synth.drafts import QuestionForm, form_names, question_form
from wikigym.synth.generate import FORM_MIX, SynthConfig, opt_in_forms
from wikigym.synth.node import Node, node_ops, node_type
from wikigym.synth.query import (
    Arith,
    Ask,
    Count,
    Entity,
    Extreme,
    Intersect,
    IsA,
    Not,
    Project,
    Range,
    Same,
    Union,
    Value,
    closed_world_relations,
    from_json,
    to_json,
)

PACKAGE = Path(wikigym.__file__).parent
MAX_TYPE_CHECKS = 10  # isinstance (and the like) on node types outside their own module


def _node_types() -> dict[str, str]:
    """Every registered node type's class name -> the module that defines it."""
    out = {}
    for op in node_ops():
        cls = node_type(op)
        assert cls is not None
        out[cls.__name__] = cls.__module__
    return out


def _names(node: ast.AST) -> set[str]:
    found = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    return found | {n.attr for n in ast.walk(node) if isinstance(n, ast.Attribute)}


def type_checks(package: Path, types: dict[str, str]) -> dict[str, list[str]]:
    """Per module: the places that check whether a value is of a node type defined in
    another module (``isinstance``/``issubclass``, ``type(x) is T``, ``case T(...)``)."""
    out: dict[str, list[str]] = {}
    for path in sorted(package.rglob("*.py")):
        module = ".".join(path.relative_to(package.parent).with_suffix("").parts)
        module = module.removesuffix(".__init__")
        foreign = {name for name, home in types.items() if home != module}
        hits: list[str] = []
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            checked: set[str] = set()
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in ("isinstance", "issubclass")
                and len(node.args) == 2
            ):
                checked = _names(node.args[1])
            elif isinstance(node, ast.Compare) and any(
                isinstance(op, ast.Is | ast.IsNot | ast.Eq | ast.NotEq) for op in node.ops
            ):
                calls = [node.left, *node.comparators]
                if any(isinstance(c, ast.Call) and _names(c.func) == {"type"} for c in calls):
                    checked = set().union(*(_names(c) for c in calls))
            elif isinstance(node, ast.MatchClass):
                checked = _names(node.cls)
            if checked & foreign:
                hits.append(f"{module}:{getattr(node, 'lineno', '?')}")
        if hits:
            out[module] = hits
    return out


def test_node_types_are_checked_by_class_in_few_places() -> None:
    types = _node_types()
    assert {"Project", "Intersect", "Union", "Not", "Extreme", "Arith"} <= set(types)
    found = type_checks(PACKAGE, types)
    total = sum(len(v) for v in found.values())
    assert total <= MAX_TYPE_CHECKS, f"{total} node type checks outside their module: {found}"


def test_the_type_check_counter_counts(tmp_path: Path) -> None:
    # The counter itself: the shapes of check it must see (it would pass vacuously otherwise).
    pkg = tmp_path / "wikigym"
    (pkg / "synth").mkdir(parents=True)
    (pkg / "synth" / "a.py").write_text(
        "def f(x):\n"
        "    if isinstance(x, Project) or isinstance(x, (Entity, Value)):\n"
        "        return 1\n"
        "    if isinstance(x, Range | Same) or type(x) is Not:\n"
        "        return 2\n"
        "    match x:\n"
        "        case Union(args=a):\n"
        "            return a\n"
        "    return isinstance(x, int)\n"
    )
    types = {"Project": "elsewhere", "Entity": "elsewhere", "Value": "elsewhere",
             "Range": "elsewhere", "Same": "elsewhere", "Not": "elsewhere",
             "Union": "elsewhere"}  # fmt: skip
    found = type_checks(pkg, types)
    assert sum(len(v) for v in found.values()) == 5
    assert type_checks(pkg, {k: "wikigym.synth.a" for k in types}) == {}  # its own module


def test_every_form_module_is_imported_and_registered() -> None:
    modules = {m.name for m in pkgutil.iter_modules(forms_pkg.__path__)}
    assert modules, "no form modules found"
    assert {f"wikigym.synth.forms.{m}" for m in modules} <= set(sys.modules)
    homes = {node_type(op).__module__ for op in node_ops()}  # type: ignore[union-attr]
    homes |= {type(question_form(f)).__module__ for f in form_names()}
    assert homes <= {f"wikigym.synth.forms.{m}" for m in modules}


def test_the_mix_and_the_registry_agree() -> None:
    mixed = {f for mix in FORM_MIX.values() for f in mix}
    assert mixed <= set(form_names())
    for name in form_names():
        form = question_form(name)
        assert isinstance(form, QuestionForm) and form.name == name
        # A form is drafted by the mix, or on request (at its own weight), or both.
        assert name in mixed or form.opt_in_weight, name
    assert question_form("yes_no").opt_in_weight  # what --yes-no adds
    assert opt_in_forms(SynthConfig(yes_no=True, forms=("yes_no",))) == ("yes_no",)


def test_asking_for_an_unknown_or_mixed_form_is_a_one_line_error() -> None:
    with pytest.raises(SynthError, match=r"unknown question form 'nope'; known: .*entity"):
        opt_in_forms(SynthConfig(forms=("nope",)))
    with pytest.raises(SynthError, match=r"drafted by the level mix.*yes_no"):
        opt_in_forms(SynthConfig(forms=("union",)))


def _samples() -> list[Node]:
    x, y = Entity(7, "X"), Entity(9, "Y")
    born = Project("born_in", x, inverse=True)
    people = Intersect((IsA("person"), born, Not(Project("born_in", y, inverse=True))))
    return [
        x,
        Value("1929-02-02", "date"),
        IsA("city"),
        Project("birth_date", people),
        Range("birth_date", -math.inf, 1899, "year"),
        Range("population", 1000, 2000),
        people,
        Union((born, Project("born_in", y, inverse=True))),
        Same("born_in", "died_in"),
        Extreme("birth_date", people, most=False),
        Count(Intersect((IsA("person"), born))),
        Ask(people, x),
        Arith("sub", Project("death_date", x), Project("birth_date", x)),
    ]


def test_every_core_node_round_trips_and_has_its_own_type() -> None:
    samples = _samples()
    assert {type(n).OP for n in samples} | {Not.OP} == {
        "entity", "value", "isa", "project", "range", "and", "or", "not", "same",
        "extreme", "count", "ask", "arith",
    }  # fmt: skip
    for n in [*samples, Not(Project("born_in", Entity(9, "Y"), inverse=True))]:
        assert from_json(to_json(n)) == n
        assert node_type(to_json(n)["op"]) is type(n)


def test_forms_declare_the_relations_whose_completeness_they_rely_on() -> None:
    # Positive facts hold for what is shown; a negation, a count, a superlative or a
    # "no" is right only when the relation is complete (issue 36: open worlds).
    x = Entity(7, "X")
    born = Project("born_in", x, inverse=True)
    assert closed_world_relations(Intersect((IsA("person"), born))) == []
    assert closed_world_relations(Range("birth_date", 1900, 1909, "year")) == []
    assert closed_world_relations(
        Intersect((IsA("person"), born, Not(Project("died_in", x, inverse=True))))
    ) == ["died_in"]
    assert closed_world_relations(Count(Intersect((IsA("person"), born)))) == ["born_in"]
    assert closed_world_relations(Extreme("birth_date", born)) == ["birth_date", "born_in"]


def test_a_duplicate_op_or_form_name_is_refused() -> None:
    from dataclasses import dataclass

    from wikigym.synth.drafts import register_form
    from wikigym.synth.node import register

    @dataclass(frozen=True)
    class Other(Node):
        OP = "project"

    with pytest.raises(SynthError, match="query op 'project' is already Project"):
        register(Other)

    class Again(QuestionForm):
        name = "union"

    with pytest.raises(SynthError, match="question form 'union' is already UnionForm"):
        register_form(Again)
    assert node_type("project") is Project and type(question_form("union")).__name__ == "UnionForm"
