"""Drafting formal queries: the sampler every question form drafts with.

A draft of a form (:mod:`wikigym.synth.drafts`, the forms in :mod:`wikigym.synth.forms`) is
asked of that form by name; most forms describe an answer entity
(:class:`~wikigym.synth.describe.Describer`), a special form adds its constraint to the
answer's own description (:meth:`Sampler.special_cut`). Literal facts become exact values or
ranges (obfuscation). The draft is then minimised, so its hop count is the effective one, and
the generator re-proves it by evaluating the whole query from scratch.
"""

from __future__ import annotations

import numpy as np

import wikigym.synth.forms  # noqa: F401  (registers every question form)
from wikigym.synth.describe import Describer
from wikigym.synth.drafts import Draft, form_names, question_form, shape_for
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.levels import structure_can_meet
from wikigym.synth.minimal import minimize
from wikigym.synth.node import forms_of, measures
from wikigym.synth.templates import comparable, relation_text


def special_forms() -> tuple[str, ...]:
    """The registered forms that live inside the answer's own description."""
    return tuple(f for f in form_names() if question_form(f).special)


class Sampler(Describer):
    """Drafts queries over one graph.

    Args:
        graph: The knowledge graph.
        rng: The seeded generator every choice comes from.
        relations: Relations the queries may use (None: all usable ones).
    """

    def __init__(
        self,
        graph: KnowledgeGraph,
        rng: np.random.Generator,
        relations: frozenset[str] | None = None,
    ) -> None:
        self.g = graph
        self.rng = rng
        self.ev = Evaluator(graph)
        usable = set(graph.fwd) - {"instance_of"}
        if relations is not None:
            usable &= relations
        self.relations = frozenset(usable)
        self._leaves = {}
        self._leaves_held = 0
        self.rel_ok = np.array([r in self.relations for r in graph.relation_names], dtype=bool)
        self._rel_ok_list = self.rel_ok.tolist()
        # The pools depend on the graph and the relations only: kept on the graph, so a
        # process that draws several TaskSets from one snapshot builds them once.
        self.key: tuple[object, ...] = ("sampler", tuple(sorted(self.relations)))
        self.entities, self.literal_rows, self.role_rows = graph.kept(
            (*self.key, "pools"), self._pools
        )

    def _pools(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(entities with a usable fact, ascending; rows of single literal facts; rows of
        role facts with entity objects)."""
        g = self.g
        ok = g.rows_with(self.relations)
        seen = np.zeros(g.n_nodes, dtype=bool)
        seen[g.subj[ok]] = True
        entities = np.flatnonzero(seen).astype(np.int64)  # ascending, as np.unique
        entities.flags.writeable = False
        single = ok & g.single_literal_rows()
        literal_rows = np.flatnonzero(single).astype(np.int64)
        roles = g.rows_with(r for r in self.relations if relation_text(r).role)
        role_rows = np.flatnonzero(roles & g.entity_rows()).astype(np.int64)
        return entities, literal_rows, role_rows

    # ---- entry --------------------------------------------------------------------
    def draft(self, level: str, form: str, want_yes: bool = True) -> Draft | None:
        """One minimal draft for ``level`` of the registered question form ``form``, or
        None.

        ``want_yes`` picks the answer of a yes/no draft (the generator balances them). The
        drafted query is minimised (:func:`wikigym.synth.minimal.minimize`): a constraint
        that the others make redundant is dropped, so its hop count is the effective one.

        Raises:
            SynthError: ``form`` is not a registered form.
        """
        kind = question_form(form)
        self.ev.reset()
        d = kind.draft(self, kind.shape(shape_for(level, self.rng)), level, want_yes)
        if d is None or not structure_can_meet(level, measures(d.root)):
            return None
        wanted = (lambda n: form in forms_of(n)) if kind.special else None
        root = minimize(d.root, self.ev, prefer=wanted)
        # A special form must survive full minimisation: a minimal query that lost it is
        # another form's draft, and a non-minimal one that kept it would fail the proof.
        if kind.special and form not in forms_of(root):
            return None
        # Minimising can take hops with it (a wide set's weak constraints can make part of
        # its chain redundant): such a draft could never meet the level (free to check).
        if root != d.root and not structure_can_meet(level, measures(root)):
            return None
        return d if root == d.root else Draft(root, d.answer, d.form)

    # ---- what forms draft with ------------------------------------------------------
    def pick_entity(self) -> int:
        """An entity with a usable fact, drawn."""
        return int(self.entities[int(self.rng.integers(len(self.entities)))])

    def measure_of(self, relation: str, e: int) -> float | None:
        """The least ``relation`` measure of ``e`` (None: it has none)."""
        ms = [self.g.f_measure[r] for r in self.g.fwd.get(relation, {}).get(e, ())]
        vals = [m for m in ms if m is not None]
        return min(vals) if vals else None

    def measured_rels(self, e: int) -> list[str]:
        """The usable, comparable relations in which ``e`` has a measure (sorted)."""
        g = self.g
        rels = [
            g.f_rel[r]
            for r in g.out_rows.get(e, ())
            if g.f_measure[r] is not None
            and g.f_rel[r] in self.relations
            and comparable(g.f_rel[r])
        ]
        return sorted(dict.fromkeys(rels))

    def same_kind_measured(self, kind: str, rel: str, e: int) -> np.ndarray:
        """The entities of ``kind`` with a ``rel`` measure, but ``e``, ascending (an array:
        a pool can hold most of the graph, and one or two members are drawn from it)."""
        pool = self.g.ids_of_kind(self.g.measured_ids(rel), kind)
        return pool[pool != e]


__all__ = ["Draft", "Sampler", "special_forms"]
