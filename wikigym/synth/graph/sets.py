"""Entity sets as sorted id arrays (:mod:`wikigym.synth.idsets`): what the evaluator and the
sampler intersect. Each is a slice of a sorted index or one numpy pass; large ones are kept
within a bound (:mod:`~wikigym.synth.graph.limits`)."""

from __future__ import annotations

import bisect
from collections.abc import Callable

import numpy as np

from wikigym.synth.graph import limits
from wikigym.synth.graph.data import RelationSubjects
from wikigym.synth.graph.reading import GraphReading
from wikigym.synth.graph.views import span_positions
from wikigym.synth.idsets import EMPTY, as_ids, ids_of, intersect, unique_ids


class GraphSets(GraphReading):
    """The graph's sets of entities, as sorted ids."""

    def _kept(
        self, key: tuple[str, int, int], size: int, build: Callable[[], np.ndarray]
    ) -> np.ndarray:
        """``build()``, kept when ``size`` is large (spans and objects repeat), within the
        same bound as the subject sets (then the kept arrays start afresh)."""
        if size < limits.CACHE_MIN:
            return build()
        got = self._id_sets.get(key)
        if got is None:
            got = build()
            got.flags.writeable = False
            self._id_sets_held += size
            if self._id_sets_held > limits.CACHE_CAP:
                self._id_sets.clear()
                self._id_sets_held = size
            self._id_sets[key] = got
        return got

    def subject_ids(self, relation: str, obj: int | str) -> np.ndarray:
        """:meth:`subjects` as sorted ids."""
        rs = self._inverse.get(relation)
        c = self.encode(obj)
        if rs is None or c is None:
            return EMPTY
        return self._subjects_of_code(rs, c)

    def subject_count(self, relation: str, code: int) -> int:
        """How many subjects have the encoded object ``code`` under ``relation`` (two
        bisections: no set is built)."""
        rs = self._inverse.get(relation)
        if rs is None:
            return 0
        a = bisect.bisect_left(self._inv_o, code, rs._lo, rs._hi)
        return bisect.bisect_right(self._inv_o, code, a, rs._hi) - a

    def most_subjects_of_codes(self, relation: str, codes: np.ndarray) -> int:
        """The most subjects any one encoded object of ``codes`` (sorted) has under
        ``relation``: a lower bound on the size of :meth:`subject_ids_of_codes` that bisects
        and builds no set."""
        rs = self._inverse.get(relation)
        if rs is None or not len(codes):
            return 0
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return int((b - a).max())

    def _subjects_of_code(self, rs: RelationSubjects, c: int) -> np.ndarray:
        a = bisect.bisect_left(self._inv_o, c, rs._lo, rs._hi)
        if a == rs._hi or self._inv_o[a] != c:
            return EMPTY
        b = bisect.bisect_right(self._inv_o, c, a, rs._hi)
        # A segment of the (relation, object, subject)-sorted pairs: sorted unique already.
        return self._kept(("s", a, b), b - a, lambda: as_ids(self.inv_subj[a:b]))

    def subject_ids_of_codes(self, relation: str, codes: np.ndarray) -> np.ndarray:
        """The subjects (sorted ids) that have some encoded object of ``codes`` under
        ``relation``."""
        rs = self._inverse.get(relation)
        if rs is None or not len(codes):
            return EMPTY
        if len(codes) == 1:
            return self._subjects_of_code(rs, int(codes[0]))
        seg = self.inv_obj[rs._lo : rs._hi]
        a, b = np.searchsorted(seg, codes, "left"), np.searchsorted(seg, codes, "right")
        return unique_ids(self.inv_subj[rs._lo + span_positions(a, b)])

    def object_codes_of_ids(self, relation: str, ids: np.ndarray) -> np.ndarray:
        """The encoded objects (sorted unique: literal keys first) of the entities ``ids``
        (valid node ids) under ``relation``."""
        code = self._rel_index.get(relation)
        if code is None or not len(ids):
            return EMPTY
        if len(ids) == 1:
            obj, rel = self._obj_mv, self.f_rel_codes
            got = [obj[r] for r in self.out_rows.rows_of(int(ids[0])) if rel[r] == code]
            return ids_of(got)
        rows = self.out_rows.rows_of_all(ids)
        return unique_ids(self.obj[rows[self.rel[rows] == code]])

    def object_ids(self, relation: str, subject: int) -> np.ndarray:
        """The entity objects of ``subject`` under ``relation``, as sorted ids."""
        return ids_of(o for o in self.objects(relation, subject) if isinstance(o, int))

    def range_ids(self, relation: str, lo: float, hi: float) -> np.ndarray:
        """:meth:`in_range` as sorted ids."""
        a, b = self._range_span(relation, lo, hi)
        if a == b:
            return EMPTY
        return self._kept(("r", a, b), b - a, lambda: unique_ids(self.range_subj[a:b]))

    def range_rows(self, relation: str, lo: float, hi: float) -> int:
        """How many measured facts of ``relation`` fall in ``[lo, hi]`` (two bisections: an
        upper bound on the size of :meth:`range_ids`, which is not built)."""
        a, b = self._range_span(relation, lo, hi)
        return b - a

    def probe_pays(self, n_ids: int, relation: str, lo: float, hi: float) -> bool:
        """Whether :meth:`ids_in_range` on ``n_ids`` entities reads their facts rather than
        bisecting into the range's set: the range covers PROBE_RATIO times more facts than
        that, and its set is not kept from before."""
        a, b = self._range_span(relation, lo, hi)
        return limits.PROBE_RATIO * n_ids <= b - a and ("r", a, b) not in self._id_sets

    def ids_in_range(self, ids: np.ndarray, relation: str, lo: float, hi: float) -> np.ndarray:
        """The members of ``ids`` (sorted valid node ids) with a ``relation`` measure in
        ``[lo, hi]``: ``intersect(ids, range_ids(relation, lo, hi))``. When
        :meth:`probe_pays`, read from the facts of ``ids`` (O(their facts)) rather than
        built from the range (O(its size), which for "born before 1900" is a good part of
        the graph); else the range's set, built (and kept) or kept, is bisected into."""
        code = self._rel_index.get(relation)
        if code is None or not len(ids):
            return EMPTY
        if not self.probe_pays(len(ids), relation, lo, hi):
            return intersect(ids, self.range_ids(relation, lo, hi))
        rows, owners = self.out_rows.rows_and_owners(ids)
        mine = self.rel[rows] == code
        m = self.val_measure[self.val[rows[mine]]]
        inside = (m >= lo) & (m <= hi)  # NaN (no measure) compares false
        return unique_ids(owners[mine][inside])

    def member_ids(self, kind: str) -> np.ndarray:
        """:meth:`members` as sorted ids (kept: there are few kinds)."""
        got = self._member_ids.get(kind)
        if got is None:
            code = self._kind_index.get(kind)
            got = EMPTY if code is None else as_ids(np.flatnonzero(self._kind_codes == code))
            got.flags.writeable = False
            self._member_ids[kind] = got
        return got

    def ids_of_kind(self, ids: np.ndarray, kind: str | None) -> np.ndarray:
        """The members of ``ids`` (valid node ids) whose kind is ``kind`` (None: those
        without a kind)."""
        codes = self._kind_codes[ids]
        if kind is None:
            return ids[codes < 0]
        # One gather and compare: O(len(ids)), where intersecting with member_ids(kind)
        # bisects a set of up to every entity once per id.
        code = self._kind_index.get(kind)
        return ids[codes == code] if code is not None else ids[:0]

    def measured_ids(self, relation: str) -> np.ndarray:
        """:meth:`measured_subjects` as sorted ids (kept: one per relation)."""
        got = self._measured_ids.get(relation)
        if got is None:
            i = self._rel_index.get(relation)
            if i is None:
                return EMPTY
            b = self._range_bounds
            got = unique_ids(self.range_subj[b[i] : b[i + 1]])
            got.flags.writeable = False
            self._measured_ids[relation] = got
        return got

    def entity_object_ids(self, relation: str) -> np.ndarray:
        """The distinct entity objects of ``relation``, as sorted ids (kept)."""
        got = self._object_ids.get(relation)
        if got is None:
            rs = self._inverse.get(relation)
            if rs is None:
                return EMPTY
            seg = self.inv_obj[rs._lo : rs._hi]
            seg = seg[seg >= 0]
            keep = np.ones(len(seg), dtype=bool)
            keep[1:] = seg[1:] != seg[:-1]
            got = as_ids(seg[keep])
            got.flags.writeable = False
            self._object_ids[relation] = got
        return got
