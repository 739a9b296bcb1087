"""Whole-relation facts about the graph, each one numpy pass kept once computed: whether a
relation is functional, the kind of its objects or subjects, the entities with a shared
object, least measures, and row masks for the sampler's pools."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np

from wikigym.synth.graph.data import GraphData
from wikigym.synth.idsets import EMPTY, unique_ids


class RelationStats(GraphData):
    """Per-relation statistics of the graph."""

    def rows_with(self, relations: Iterable[str]) -> np.ndarray:
        """A row mask: the rows whose relation is in ``relations``."""
        codes = [self._rel_index[r] for r in relations if r in self._rel_index]
        return np.isin(self.rel, np.array(sorted(codes), dtype=self.rel.dtype))

    def entity_rows(self) -> np.ndarray:
        """A row mask: the rows whose object is an entity."""
        return self.obj >= 0

    def relation_counts(self, usable: np.ndarray) -> np.ndarray:
        """Per node: in how many relations it has facts, counted once per relation on each
        side (as the subject, and as an entity object), for the relations whose codes are
        ``True`` in ``usable``. One pass over the (relation, subject)-sorted rows and the
        (relation, object)-sorted pairs: no sort."""
        counts = np.zeros(self.n_nodes, dtype=np.int64)
        fb = self._fwd_bounds
        for i, name in enumerate(self.relation_names):
            if not usable[i]:
                continue
            s = self.subj[self.fwd_rows[fb[i] : fb[i + 1]]]
            if len(s):
                first = np.ones(len(s), dtype=bool)
                np.not_equal(s[1:], s[:-1], out=first[1:])
                counts[s[first]] += 1
            rs = self._inverse[name]
            o = self.inv_obj[rs._lo : rs._hi]
            o = o[o >= 0]
            if len(o):
                first = np.ones(len(o), dtype=bool)
                np.not_equal(o[1:], o[:-1], out=first[1:])
                counts[o[first]] += 1
        return counts

    def single_literal_rows(self) -> np.ndarray:
        """A row mask: literal rows (or rows of an entity without a page: a name, asked
        as a literal is) whose subject has no other row under their relation."""
        order = self.fwd_rows
        r, s = self.rel[order], self.subj[order]
        start = np.ones(len(order), dtype=bool)
        start[1:] = (r[1:] != r[:-1]) | (s[1:] != s[:-1])
        group = np.cumsum(start) - 1
        sizes = np.bincount(group)
        single = np.zeros(len(order), dtype=bool)
        single[order] = sizes[group] == 1
        return single & ((self.obj < 0) | (self.obj >= self.n_pages))

    def shared_object_subjects(self, rel_a: str, rel_b: str) -> frozenset[int]:
        """Subjects with some object under both ``rel_a`` and ``rel_b``."""
        return frozenset(self.shared_object_ids(rel_a, rel_b).tolist())

    def shared_object_ids(self, rel_a: str, rel_b: str) -> np.ndarray:
        """:meth:`shared_object_subjects` as sorted ids."""
        a, b = self._rel_index.get(rel_a), self._rel_index.get(rel_b)
        if a is None or b is None:
            return EMPTY
        fb = self._fwd_bounds
        rows_a, rows_b = self.fwd_rows[fb[a] : fb[a + 1]], self.fwd_rows[fb[b] : fb[b + 1]]
        sa, sb = self.subj[rows_a], self.subj[rows_b]
        if not len(sa) or not len(sb):
            return EMPTY
        # Only subjects under both relations can qualify (both segments are sorted).
        both_a = sb[np.minimum(np.searchsorted(sb, sa), len(sb) - 1)] == sa
        both_b = sa[np.minimum(np.searchsorted(sa, sb), len(sa) - 1)] == sb

        def pairs(rows: np.ndarray) -> np.ndarray:
            return np.sort(
                (self.subj[rows].astype(np.int64) << 32) | (self.obj[rows].astype(np.int64) + 2**31)
            )

        ka, kb = pairs(rows_a[both_a]), pairs(rows_b[both_b])
        hit = ka[kb[np.minimum(np.searchsorted(kb, ka), len(kb) - 1)] == ka] if len(kb) else ka[:0]
        return unique_ids(hit >> 32)

    def functional(self, relation: str) -> bool:
        """Whether every subject of ``relation`` has at most one fact under it (one numpy
        pass over its (relation, subject)-sorted rows; kept once computed)."""
        key = ("functional", relation)
        got = self._relation_stats.get(key)
        if got is None:
            i = self._rel_index.get(relation)
            got = True
            if i is not None:
                fb = self._fwd_bounds
                s = self.subj[self.fwd_rows[fb[i] : fb[i + 1]]]
                got = not bool(np.any(s[1:] == s[:-1]))
            self._relation_stats[key] = got
        return bool(got)

    def object_kind(self, relation: str) -> str | None:
        """The commonest kind among the entity objects of ``relation``'s facts (ties: the
        kind name first in order; kept once computed)."""
        key = ("object_kind", relation)
        if key not in self._relation_stats:
            i = self._rel_index.get(relation)
            best: str | None = None
            if i is not None:
                fb = self._fwd_bounds
                o = self.obj[self.fwd_rows[fb[i] : fb[i + 1]]]
                k = self._kind_codes[o[o >= 0]]
                names = self.kinds.names
                counts = np.bincount(k[k >= 0], minlength=len(names))
                counts[[c for c, name in enumerate(names) if not name]] = 0
                if len(counts) and counts.max() > 0:
                    best = min(names[c] for c in np.flatnonzero(counts == counts.max()).tolist())
            self._relation_stats[key] = best
        got = self._relation_stats[key]
        return got if isinstance(got, str) else None

    def relation_kind(self, relation: str, side: str) -> str | None:
        """The one kind that every subject (``side="subject"``) or every entity object
        (``side="object"``) of ``relation`` has, or None (several kinds, or some entity
        without one). A set of such entities needs no filtering by that kind."""
        key = (side, relation)
        if key not in self._relation_kind:
            i = self._rel_index.get(relation)
            one: str | None = None
            if i is not None:
                fb = self._fwd_bounds
                rows = self.fwd_rows[fb[i] : fb[i + 1]]
                ents = self.subj[rows] if side == "subject" else self.obj[rows]
                codes = np.unique(self._kind_codes[ents[ents >= 0]])
                if len(codes) == 1 and codes[0] >= 0:
                    one = self.kinds.names[int(codes[0])]
            self._relation_kind[key] = one
        return self._relation_kind[key]

    def least_measures(self, relation: str, entities: np.ndarray) -> np.ndarray:
        """The least ``relation`` measure of each of ``entities`` (NaN: none), looked up in
        the relation's measured subjects (their least measures kept once computed)."""
        got = self._least.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                got = (np.zeros(0, dtype=self.subj.dtype), np.zeros(0))
            else:
                b = self._range_bounds
                subj, vals = self.range_subj[b[i] : b[i + 1]], self.range_vals[b[i] : b[i + 1]]
                # Sorted by measure: a subject's first position holds its least measure.
                uniq, first = np.unique(subj, return_index=True)
                got = (uniq, vals[first])
            self._least[relation] = got
        subj, vals = got
        out = np.full(len(entities), np.nan)
        if len(subj):
            j = np.minimum(np.searchsorted(subj, entities), len(subj) - 1)
            hit = subj[j] == entities
            out[hit] = vals[j[hit]]
        return out
