"""Reading the graph by item: one fact, the objects of a subject, the subjects of an object,
a node's surface form and measure (Python values: tuples, frozensets)."""

from __future__ import annotations

import math
from collections.abc import Collection, Iterable

import numpy as np

from wikigym.corpora.world.schema import FACTS_COMPLETE, FACTS_SOURCE
from wikigym.synth.graph import limits
from wikigym.synth.graph.data import GraphData
from wikigym.synth.graph.kinds import REAL_SOURCES, UNSTATED
from wikigym.synth.graph.views import FactRow, as_int, span_positions


class GraphReading(GraphData):
    """The graph's item-by-item reads."""

    def fact(self, row: int) -> FactRow:
        return FactRow(
            row,
            self.f_id[row],
            self.f_subj[row],
            self.f_rel[row],
            self.f_obj[row],
            self.f_surface[row],
            self.f_pid[row],
            self.f_vtype[row],
        )

    def objects(self, relation: str, subject: int) -> tuple[int | str, ...]:
        """Objects of ``subject`` under ``relation`` (in fact order)."""
        rows = self.fwd[relation].get(subject) if relation in self._rel_index else ()
        obj = self.f_obj
        return tuple(obj[r] for r in rows)

    def subjects(self, relation: str, obj: int | str) -> frozenset[int]:
        """Subjects that have ``obj`` under ``relation``."""
        rs = self._inverse.get(relation)
        got = rs.get(obj) if rs is not None else None
        return got if got is not None else frozenset()

    def objects_of_all(self, relation: str, subjects: Iterable[object]) -> set[int | str]:
        """The objects of every entity in ``subjects`` under ``relation`` (one numpy pass
        over their out rows; other items are ignored)."""
        code = self._rel_index.get(relation)
        ids = self._entity_codes(subjects)
        if ids is None:
            ids = np.fromiter(
                (e for x in subjects if (e := as_int(x)) is not None and 0 <= e < self.n_nodes),
                dtype=np.int64,
            )
        if code is None or not len(ids):
            return set()
        rows = self.out_rows.rows_of_all(ids)
        return self._decode(np.unique(self.obj[rows[self.rel[rows] == code]]))

    def subjects_of_all(self, relation: str, objects: Iterable[object]) -> set[int]:
        """The subjects that have some item of ``objects`` under ``relation`` (one numpy
        pass; items not in the graph are ignored)."""
        i = self._rel_index.get(relation)
        codes = self._entity_codes(objects)
        if codes is None:  # some literal keys among them: encode one by one
            codes = np.fromiter(
                (c for x in objects if (c := self.encode(x)) is not None), dtype=np.int64
            )
        if i is None or not len(codes):
            return set()
        rs = self._inverse[relation]
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return set(self.inv_subj[rs._lo + span_positions(a, b)].tolist())

    def _entity_codes(self, items: Iterable[object]) -> np.ndarray | None:
        """The entities among ``items`` as codes when every item is an ``int`` (those outside
        the graph dropped), else None."""
        items = items if isinstance(items, Collection) else list(items)
        # fromiter would also take "12", 1.5 or True: only plain ints take this path.
        if not all(type(x) is int for x in items):
            return None
        try:
            ids = np.fromiter(items, dtype=np.int64, count=len(items))
        except OverflowError:  # an int past 64 bits: not a node, left to the slow path
            return None
        return ids[(ids >= 0) & (ids < self.n_nodes)]

    def _decode(self, codes: np.ndarray) -> set[int | str]:
        keys = self.lit_keys
        return {c if c >= 0 else keys[-1 - c] for c in codes.tolist()}

    def find_row(self, subject: int, relation: str, obj: int | str) -> int | None:
        """The first fact row ``(subject, relation, obj)``, or None."""
        c = self.encode(obj)
        if c is None or relation not in self._rel_index:
            return None
        mv = self._obj_mv
        for r in self.fwd[relation].get(subject):
            if mv[r] == c:
                return r
        return None

    def in_range(self, relation: str, lo: float, hi: float) -> frozenset[int]:
        """Subjects with a ``relation`` measure in ``[lo, hi]``."""
        a, b = self._range_span(relation, lo, hi)
        # Spans repeat (decades, centuries, round numbers): large sets are kept, keyed by
        # the rows they cover, within the same bound as the subject sets.
        key = (a, b)
        got = self._ranges.get(key)
        if got is None:
            got = frozenset(self.range_subj[a:b].tolist())
            if b - a >= limits.CACHE_MIN:
                self._ranges_held += b - a
                if self._ranges_held > limits.CACHE_CAP:  # bounded: start afresh rather than grow
                    self._ranges.clear()
                    self._ranges_held = b - a
                self._ranges[key] = got
        return got

    def measured_subjects(self, relation: str) -> frozenset[int]:
        """Subjects with a measured ``relation`` fact (kept once built: one per relation)."""
        got = self._measured.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                return frozenset()
            b = self._range_bounds
            got = frozenset(self.range_subj[b[i] : b[i + 1]].tolist())
            self._measured[relation] = got
        return got

    def surface(self, node: int | str) -> str:
        """The name of an entity or the surface form of a literal key."""
        if isinstance(node, int):
            return self.titles[node]
        k = self.lit_keys.find(node)
        return self.val_surfaces[int(self.key_surf_val[k])] if k >= 0 else node

    def literal_measure(self, key: str) -> float | None:
        """The measure of a literal key (that of its first fact with one), or None."""
        k = self.lit_keys.find(key)
        m = float(self.key_measure[k]) if k >= 0 else math.nan
        return None if math.isnan(m) else m

    def relations(self) -> list[str]:
        return list(self.relation_names)

    def complete(self, relations: Iterable[str] = ()) -> bool:
        """Whether the snapshot's facts are complete for ``relations`` (every relation when
        none are named): only a generated world declares so
        (:data:`wikigym.corpora.world.schema.FACTS_COMPLETE`); a real wiki's facts are what
        its pages happen to state."""
        del relations  # a world is complete for all of them; a wiki for none
        return self.source == FACTS_SOURCE and FACTS_COMPLETE

    def stated(self, row: int) -> bool:
        """Whether fact ``row`` is stated in a passage (else only by its category line,
        Wikidata statement or infobox field: never a task's only evidence)."""
        return self.f_pid[row] != UNSTATED

    def source_of(self, row: int) -> str:
        """The source that states fact ``row`` (``world``, ``infobox``, ``lead``,
        ``category``, ``wikidata``)."""
        return self.source if self.src is None else REAL_SOURCES[int(self.src[row])]
