"""Set-valued evaluation of queries over a :class:`KnowledgeGraph`, and witness facts.

:func:`evaluate` computes a node's set from every fact of the graph, so "exactly one element"
is a proof of uniqueness over the whole snapshot. :func:`witness` picks, for one member of
that set, the facts that put it there (leaves first), which become the task's evidence.
"""

from __future__ import annotations

from wikigym.errors import SynthError
from wikigym.synth.graph import KnowledgeGraph
from wikigym.synth.query import (
    Ask,
    Count,
    Entity,
    Intersect,
    IsA,
    Node,
    Project,
    Range,
    Value,
    hops,
)

Item = int | str


def _order(x: Item) -> tuple[bool, int | str]:
    return (isinstance(x, str), x)


class Evaluator:
    """Evaluates nodes of one graph, memoising sub-results for one query at a time."""

    def __init__(self, graph: KnowledgeGraph) -> None:
        self.g = graph
        self._memo: dict[Node, frozenset[Item]] = {}

    def reset(self) -> None:
        self._memo.clear()

    def eval(self, node: Node) -> frozenset[Item]:
        """The set of ``node`` (entities or literal keys)."""
        hit = self._memo.get(node)
        if hit is not None:
            return hit
        out = self._eval(node)
        self._memo[node] = out
        return out

    def _eval(self, node: Node) -> frozenset[Item]:
        g = self.g
        if isinstance(node, Entity):
            return frozenset((node.doc_id,))
        if isinstance(node, Value):
            return frozenset((node.key,))
        if isinstance(node, IsA):
            return g.members(node.kind)  # type: ignore[return-value]
        if isinstance(node, Range):
            return g.in_range(node.relation, node.lo, node.hi)  # type: ignore[return-value]
        if isinstance(node, Project):
            arg = self.eval(node.arg)
            out: set[Item] = set()
            if node.inverse:
                index = g.inv.get(node.relation, {})
                for o in arg:
                    out.update(index.get(o, ()))
            else:
                for s in arg:
                    if isinstance(s, int):
                        out.update(g.objects(node.relation, s))
            return frozenset(out)
        if isinstance(node, Intersect):
            if not node.args:
                raise SynthError("an 'and' query node needs at least one argument")
            sets = sorted((self.eval(a) for a in node.args), key=len)
            acc = set(sets[0])
            for s in sets[1:]:
                acc.intersection_update(s)
                if not acc:
                    break
            return frozenset(acc)
        if isinstance(node, Count):
            return frozenset((str(len(self.eval(node.arg))),))
        if isinstance(node, Ask):
            target = self.eval(node.arg)
            cand = (
                node.candidate.doc_id if isinstance(node.candidate, Entity) else node.candidate.key
            )
            return frozenset(("yes" if cand in target else "no",))
        raise SynthError(f"cannot evaluate {type(node).__name__}")

    # ---- witnesses -------------------------------------------------------------------
    def witness(self, node: Node, target: Item) -> list[int]:
        """Fact rows showing that ``target`` is in ``node``'s set (leaves first, no repeats).

        Raises:
            SynthError: ``target`` is not in the set.
        """
        rows: list[int] = []
        self._witness(node, target, rows)
        return list(dict.fromkeys(rows))

    def _witness(self, node: Node, t: Item, rows: list[int]) -> None:
        g = self.g
        if isinstance(node, Entity | Value | IsA):
            if t not in self.eval(node):
                raise SynthError(f"{t!r} is not in {node}")
            return
        if isinstance(node, Range):
            for r in g.fwd.get(node.relation, {}).get(t, ()):  # type: ignore[call-overload]
                m = g.f_measure[r]
                if m is not None and node.lo <= m <= node.hi:
                    rows.append(r)
                    return
            raise SynthError(f"{t!r} has no {node.relation} in [{node.lo}, {node.hi}]")
        if isinstance(node, Project):
            arg = self.eval(node.arg)
            if node.inverse:
                for r in g.fwd.get(node.relation, {}).get(t, ()):  # type: ignore[call-overload]
                    if g.f_obj[r] in arg:
                        self._witness(node.arg, g.f_obj[r], rows)
                        rows.append(r)
                        return
            else:
                for s in sorted(arg, key=_order):
                    if isinstance(s, int) and (r := g.find_row(s, node.relation, t)) is not None:
                        self._witness(node.arg, s, rows)
                        rows.append(r)
                        return
            raise SynthError(f"{t!r} is not reached by {node.relation}")
        if isinstance(node, Intersect):
            # Deepest constraint first: that is the chain the oracle follows.
            for a in sorted(node.args, key=hops, reverse=True):
                self._witness(a, t, rows)
            return
        if isinstance(node, Count):
            for m in sorted(self.eval(node.arg), key=_order):
                self._witness(node.arg, m, rows)
            return
        if isinstance(node, Ask):
            for m in sorted(self.eval(node.arg), key=_order):
                self._witness(node.arg, m, rows)
            return
        raise SynthError(f"cannot witness {type(node).__name__}")
