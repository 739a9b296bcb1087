"""Question forms: how each kind of question is drafted, registered by name.

A question form (entity, literal, count, superlative, union, ...) is a :class:`QuestionForm`
subclass in the module of :mod:`wikigym.synth.forms` that holds its node type, registered
with :func:`register_form`. The sampler (:class:`wikigym.synth.sampler.Sampler`) looks a
form up by its name and asks it for a draft (:meth:`QuestionForm.draft`) or, for a form that
lives inside the answer's own description (union, negation, same, fuzz), for the one
constraint that finishes a layer (:meth:`QuestionForm.cut`). What a form may use of the
sampler is :class:`SamplerAPI`. The generator reads a form's policy from the same class
(whether its answers repeat, whether its question names its candidates, whether it can be
made a near-miss), so nothing switches on a form's name.

Which forms a level drafts, and in what proportions, is the generator's mix
(:data:`wikigym.synth.generate.FORM_MIX`); a form outside it is drafted only when a config
asks for it (:attr:`QuestionForm.opt_in_weight`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import ClassVar, Protocol, TypeVar

import numpy as np

from wikigym.errors import SynthError
from wikigym.synth.evaluate import Evaluator, Item
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.node import Node

Goal = Callable[[np.ndarray], bool]  # takes a set of entities as sorted ids (idsets)


@dataclass(frozen=True, slots=True)
class Shape:
    """How one draft is built.

    Attributes:
        depth: Hops of the answer's description (chain length).
        intersect: Whether intersections may be used to make a layer unique.
        top_intersection: The answer's own description must be an intersection.
        ambiguous: Every constraint of an intersection must match >= 2 entities alone.
        range_p: Chance that a literal constraint becomes a range instead of a value.
        max_constraints: Constraints per intersection at most.
        special: A constraint form the answer's own intersection must use (union, negation,
            same, fuzz, wide) or None.
    """

    depth: int
    intersect: bool = False
    top_intersection: bool = False
    ambiguous: bool = False
    range_p: float = 0.0
    max_constraints: int = 3
    special: str | None = None


def shape_for(level: str, rng: np.random.Generator) -> Shape:
    """A random shape that can meet ``level`` (see :mod:`wikigym.synth.levels`)."""
    if level == "easy":
        return Shape(1, range_p=0.0)
    if level == "medium":
        return Shape(2, range_p=0.2)
    if level == "hard":
        if rng.random() < 0.5:
            return Shape(3, intersect=True, range_p=0.8)
        return Shape(2, intersect=True, top_intersection=True, range_p=0.9)
    if rng.random() < 0.7:
        return Shape(3, True, True, True, range_p=0.95)
    return Shape(4, True, False, True, range_p=0.95)


@dataclass(frozen=True, slots=True)
class Draft:
    """A drafted query and the answer it was built for."""

    root: Node
    answer: int | str
    form: str  # the name of its QuestionForm


@dataclass(frozen=True, slots=True)
class Cut:
    """A special constraint for one layer of a description.

    Attributes:
        node: The constraint.
        rels: Its relations.
        kept: The layer's candidates it keeps.
        holds: Whether the described entity meets it.
        size: How many entities of the described entity's kind meet it alone (at least
            this many, exact below 2: all that its use needs).
    """

    node: Node
    rels: frozenset[str]
    kept: np.ndarray
    holds: bool
    size: int


@dataclass(frozen=True, slots=True)
class Layer:
    """One layer of a description that a special constraint is to finish.

    Attributes:
        e: The described entity.
        cand: The entities the layer's other constraints leave (sorted ids, ``e`` among
            them).
        rows: ``e``'s usable facts outside ``banned``, shuffled.
        banned: The relations the layer uses already.
        kind: ``e``'s kind when the layer filters by it (None: any entity).
    """

    e: int
    cand: np.ndarray
    rows: tuple[int, ...]
    banned: frozenset[str | None]
    kind: str | None


class SamplerAPI(Protocol):
    """What a question form may use of the sampler that drafts it."""

    g: KnowledgeGraph
    rng: np.random.Generator
    ev: Evaluator
    relations: frozenset[str]
    entities: np.ndarray  # entities with a usable fact, ascending
    literal_rows: np.ndarray  # rows of single literal facts
    role_rows: np.ndarray  # rows of role facts with entity objects
    rel_ok: np.ndarray  # per relation code: usable
    key: tuple[object, ...]  # the sampler's pools' key (graph and relations)

    def pick_entity(self) -> int: ...

    def describe(
        self,
        e: int,
        depth: int,
        shape: Shape,
        visited: frozenset[int],
        *,
        top: bool = False,
        skip_rel: str | None = None,
        goal: Goal | None = None,
    ) -> tuple[Node, np.ndarray] | None: ...

    def described(self, e: int, depth: int, shape: Shape) -> Node | None: ...

    def measure_of(self, relation: str, e: int) -> float | None: ...

    def measured_rels(self, e: int) -> list[str]: ...

    def same_kind_measured(self, kind: str, rel: str, e: int) -> np.ndarray: ...

    def edges(
        self, e: int, visited: frozenset[int], entity_only: bool, literal_first: bool = False
    ) -> list[tuple[int, bool]]: ...

    def leaf_node(self, row: int, e_is_subject: bool, shape: Shape) -> Node: ...

    def within(self, cand: np.ndarray, node: Node, row: int, e_is_subject: bool) -> np.ndarray: ...

    def of_kind(
        self,
        found: np.ndarray,
        relation: str,
        subjects: bool,
        kind: str | None,
        kind_set: np.ndarray | None,
    ) -> np.ndarray: ...

    def make_cut(
        self,
        layer: Layer,
        node: Node,
        rels: set[str],
        parts: tuple[np.ndarray, ...],
        complement: bool = False,
    ) -> Cut: ...


class QuestionForm:
    """A kind of question and how it is drafted (subclass, set ``name``, register).

    Attributes:
        name: The form's name (what mixes, ``Draft.form`` and ``forms_of`` say).
        special: A constraint inside the answer's own description (union, negation, same,
            fuzz, wide): the draft is minimised preferring to keep it, and dropped when it
            does not survive.
        opt_in_weight: The form's weight at each level when a config asks for it outside
            the generator's mix (empty: not at that level).
        repeats_answers: Answers recur by design (yes/no): not kept unique per level.
        names_entities: The question names entities it may not hide (yes/no names its
            candidate): no leak check of the answer or the hidden entities.
        perturbable: A near-miss can be made of its drafts (one constant replaced).
        masks_answer: The rubric and evidence call the answer ``[ANSWER]``.
    """

    name: ClassVar[str]
    special: ClassVar[bool] = False
    opt_in_weight: ClassVar[dict[str, float]] = {}
    repeats_answers: ClassVar[bool] = False
    names_entities: ClassVar[bool] = False
    perturbable: ClassVar[bool] = True
    masks_answer: ClassVar[bool] = False

    def shape(self, shape: Shape) -> Shape:
        """The shape a draft of this form is built with, from the level's."""
        return shape

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        """One draft of this form (not yet minimised), or None."""
        raise NotImplementedError

    def cut(self, s: SamplerAPI, layer: Layer) -> Cut | None:
        """A special form's constraint that finishes ``layer``, or None."""
        return None

    def answer_nodes(self, answer: Item) -> tuple[Item, ...]:
        """The graph nodes some evidence passage must state for the answer to be read in
        text: the answer itself (an entity or a value); none where it is computed (a count,
        yes/no, a sum or difference); each member of a list."""
        return (answer,)


def describe_answer(
    s: SamplerAPI, shape: Shape, pick: Callable[[], int] | None = None
) -> tuple[int, Node, np.ndarray] | None:
    """An answer entity (drawn by ``pick``, default any entity; -1: none) and its
    description of ``shape``'s depth, with the description's set."""
    if not len(s.entities):
        return None
    e = s.pick_entity() if pick is None else pick()
    if e < 0:
        return None
    got = s.describe(e, shape.depth, shape, frozenset(), top=True)
    if got is None:
        return None
    return e, got[0], got[1]


class SpecialForm(QuestionForm):
    """A form that is one constraint of the answer's own description (drafted by
    :meth:`cut` when the layer's other constraints leave few candidates)."""

    special = True

    def shape(self, shape: Shape) -> Shape:
        # One more constraint: the special one takes a slot.
        return replace(
            shape,
            intersect=True,
            special=self.name,
            top_intersection=True,
            max_constraints=shape.max_constraints + 1,
        )

    def draft(self, s: SamplerAPI, shape: Shape, level: str, want_yes: bool) -> Draft | None:
        got = describe_answer(s, shape)
        return None if got is None else Draft(got[1], got[0], self.name)


_FORMS: dict[str, QuestionForm] = {}
F = TypeVar("F", bound=type[QuestionForm])


def register_form(cls: F) -> F:
    """Class decorator: register the question form ``cls`` under its ``name``.

    Raises:
        SynthError: Another form has that name.
    """
    other = _FORMS.get(cls.name)
    if other is not None and type(other) is not cls:
        raise SynthError(f"question form {cls.name!r} is already {type(other).__name__}")
    _FORMS[cls.name] = cls()
    return cls


def question_form(name: str) -> QuestionForm:
    """The registered form ``name``.

    Raises:
        SynthError: No such form (the known ones are named).
    """
    got = _FORMS.get(name)
    if got is None:
        raise SynthError(f"unknown question form {name!r}; known: {', '.join(form_names())}")
    return got


def form_names() -> list[str]:
    """Every registered form, sorted."""
    return sorted(_FORMS)
