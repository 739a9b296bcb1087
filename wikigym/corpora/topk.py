"""Exact top-k over a Tantivy index: (score desc, passage_id asc), whatever its layout.

Tantivy's ``TopDocs`` keeps ties in ascending doc address within a segment, and one search
over an index whose docs, in (segment ordinal, doc) order, are in passage_id order (the
``doc_order: passage_id`` layout) would return our order directly. It does only up to two
segments: the segments' top-k lists are merged by a top-n buffer that assumes its input in
ascending address order, while each segment hands its list over unsorted; when the buffer
is cut in the middle of one segment's list, a doc that ties the cut's score and was pushed
after it is dropped even where it precedes a kept one (``tests/test_search_exact.py``: a
later passage in the top 10 in place of an earlier one of the same score). Two segments'
lists never fill the buffer (2k entries), so it is never cut there.

:class:`TopK` therefore searches one index in one of four ways, all with the same result:

- **direct**: an ordered index of at most two segments: one search of ``k``;
- **checked**: one search of ``k + 1``. Every doc scoring above the cut is kept, so when the
  k-th score is above the (k+1)-th the top k are exact. Otherwise a tie straddles k. When
  the top k's tied docs all come from the first two segments, they are exact as given:
  those two lists (at most ``k + 1`` each, each a segment's exact top) fill the buffer's
  ``2 (k + 1)`` entries without a cut, later cuts order by (score, address), so none of
  their tied docs is dropped, and none of a later segment precedes them. Else the
  docs above the tie score are still all there, and so are the tied docs of every segment
  before the last segment ``c`` that the result takes tied docs from: a tied doc can only be
  dropped for a later one of its own segment's list (a later segment's are rejected once
  the cut reaches the tie score). So one more search, restricted to segment ``c`` by its run
  marker (``RUN_FIELD``: the first passage_id of the segment's run, indexed on every doc; a
  single segment's list is never cut), gives ``c``'s tied docs of lowest address;
- **by run**: with ``threads > 1``, one search per run in parallel (Tantivy releases the GIL
  while it searches), merged by (score desc, address asc), which is passage_id order here:
  the "shards searched in parallel threads" of the issue-40 measurements;
- **widened**: indexes without markers or without passage_id order: fetch past k while the
  k-th score repeats at the cut, then sort by (score desc, passage_id asc) (``limit *= 8``).

Scores never depend on which way was taken: a restriction adds a constant 0.0 to the
query's own score (``x + 0.0 == x``).
"""

from __future__ import annotations

import heapq
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor

import tantivy

RUN_FIELD = "run"
# The merge's buffer holds 2 * limit entries and is first cut when one more arrives; each
# segment hands over at most ``limit``, so the first two segments' lists are all in it before
# any cut, and their tied docs are never dropped (a tie that reaches no later segment needs
# no second search: at 10.19M passages 402 of the 467 ties at the 10th score, ``scale.md``).
EXACT_SEGMENTS = 2
# A search result: (score, address). Addresses compare as (segment ordinal, doc).
Scored = tuple[float, tantivy.DocAddress]


def _key(hit: Scored) -> tuple[float, int, int]:
    score, address = hit
    return (-score, address.segment_ord, address.doc)


class TopK:
    """Exact top-k searches over one searcher (thread-safe; see the module doc).

    Args:
        searcher: The index's searcher.
        schema: Its schema (to build the run restrictions).
        ordered: The layout's docs are in passage_id order in (segment, doc) order.
        runs: Each segment's run marker, in segment ordinal order (a run is one segment, or
            two), or None when the index has no usable markers (written before them, by
            several threads, or a run Tantivy split more).
        threads: Threads that search the runs of one query in parallel (1: one search, see
            the module doc; more: one search per run, on a pool of this size).
    """

    def __init__(
        self,
        searcher: tantivy.Searcher,
        schema: tantivy.Schema,
        ordered: bool,
        runs: Sequence[int] | None,
        threads: int = 1,
    ) -> None:
        self.searcher = searcher
        self.ordered = ordered
        self.segments = searcher.num_segments
        # One restriction per run (a run is one segment, or two when Tantivy flushed it
        # early; a restricted search spans at most two segments, so its merge is exact).
        self._only: list[tantivy.Query] | None = None
        self._run_of: list[int] = []  # each segment's run
        self._run_start: list[int] = []  # each run's first segment
        if ordered and runs is not None and len(runs) == self.segments:
            markers = list(dict.fromkeys(runs))
            self._run_of = [markers.index(run) for run in runs]
            self._run_start = [self._run_of.index(r) for r in range(len(markers))]
            self._only = [
                tantivy.Query.const_score_query(
                    tantivy.Query.term_query(schema, RUN_FIELD, run, index_option="basic"), 0.0
                )
                for run in markers
            ]
        self.threads = max(1, threads)
        self._pool = (
            ThreadPoolExecutor(min(self.threads, len(self._only)), thread_name_prefix="wg-search")
            if self.threads > 1 and self._only is not None and len(self._only) > 1
            else None
        )

    @property
    def by_segment(self) -> bool:
        """A search can be confined to one run (ordered layout with run markers)."""
        return self._only is not None

    def top(self, query: tantivy.Query, k: int) -> list[Scored]:
        """The top ``k`` of ``query`` by (score desc, passage_id asc)."""
        if k <= 0:
            return []
        if not self.ordered:
            return self._widened(query, k)
        if self._pool is not None:
            return self._segmentwise(query, k)
        if self.segments <= 2:
            return self._search(query, k)
        hits = self._search(query, k + 1)
        if len(hits) <= k or hits[k][0] < hits[k - 1][0]:
            return hits[:k]
        tie = hits[k - 1][0]
        if max(address.segment_ord for score, address in hits[:k] if score == tie) < EXACT_SEGMENTS:
            return hits[:k]
        if self._only is not None:
            return self._resolve_tie(query, hits, k)
        return self._widened(query, k)

    def _search(self, query: tantivy.Query, limit: int) -> list[Scored]:
        return list(self.searcher.search(query, limit, count=False).hits)

    def _in_run(self, run: int, query: tantivy.Query, k: int) -> list[Scored]:
        assert self._only is not None
        only = tantivy.Query.boolean_query(
            [(tantivy.Occur.Must, self._only[run]), (tantivy.Occur.Must, query)]
        )
        return self._search(only, k)

    def _resolve_tie(self, query: tantivy.Query, hits: list[Scored], k: int) -> list[Scored]:
        """The top k when the k-th score ties the (k+1)-th in ``hits`` (a search of k + 1):
        the docs above the tie score and the tied docs before the run of the last segment
        the tie reaches, as Tantivy gave them; that run's tied docs from a search of it
        alone."""
        tie = hits[k - 1][0]
        above = [hit for hit in hits if hit[0] > tie]
        last = max(address.segment_ord for score, address in hits if score == tie)
        run = self._run_of[last]
        start = self._run_start[run]
        before = [hit for hit in hits if hit[0] == tie and hit[1].segment_ord < start]
        within = [hit for hit in self._in_run(run, query, k) if hit[0] == tie]
        return (above + before + within)[:k]

    def _segmentwise(self, query: tantivy.Query, k: int) -> list[Scored]:
        """One search per run on the thread pool (each exact), merged by (score desc,
        address asc)."""
        assert self._pool is not None and self._only is not None
        runs = range(len(self._only))
        parts = list(self._pool.map(lambda r: self._in_run(r, query, k), runs))
        return heapq.nsmallest(k, (hit for part in parts for hit in part), key=_key)

    def _widened(self, query: tantivy.Query, k: int) -> list[Scored]:
        """Any layout: fetch past k while the k-th score repeats at the cut, then order by
        (score desc, passage_id asc) from the passage_id fast field."""
        limit = k + 1
        while True:
            hits = self._search(query, limit)
            if len(hits) < limit or hits[-1][0] < hits[k - 1][0]:
                break
            limit *= 8  # the k-th score is still repeating at the cut: look further
        if not hits:
            return []
        ids = self.searcher.fast_field_values("passage_id", [a for _, a in hits])
        ranked = sorted(zip(hits, ids, strict=True), key=lambda h: (-h[0][0], h[1]))
        return [hit for hit, _pid in ranked[:k]]

    def close(self) -> None:
        """Stop the search threads (if any)."""
        if self._pool is not None:
            self._pool.shutdown(wait=False)
