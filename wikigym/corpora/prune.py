"""Exact top-k that scores fewer postings: MaxScore over a query's terms.

tantivy-py searches through a ``MultiCollector``, which scores every document that matches
any query term (Tantivy's block-max WAND runs only under a bare ``TopDocs``), so a query
costs the sum of its terms' document frequencies and grows linearly with the corpus
(``benchmarks/results/scale.md``). Most queries mix a rare term with common ones, and a
document that has none of the rare terms often cannot reach the top k. This module finds
the top k while scoring only the documents that hold at least one *essential* term:

- A term's BM25 contribution is ``idf * (K1 + 1) * tf / (tf + norm)`` with ``tf / (tf +
  norm) < 1``, so it never exceeds ``ub = idf * (K1 + 1)`` (idf from the term's document
  frequency and the document count: the statistics Tantivy scores with).
- Candidates: the documents holding an essential term (the rarest ones); their exact
  scores come from one query, ``(essential terms, score 0)`` AND-ed with every term scored
  as the full query scores it (below). ``theta`` is the k-th best.
- A document outside the candidates scores at most the sum of ``ub`` over the other terms.
  If that is below ``theta`` (strictly, with a margin for float rounding), no such document
  reaches or ties the k-th score: the candidates' top k is the exact top k. Otherwise the
  essential set grows until the bound holds for that ``theta`` (still a lower bound of the
  final k-th score), or the full query runs when that would score most postings anyway.

The scores are the full query's, bit for bit: Tantivy's flat union of term scorers adds a
document's term scores in the query's clause order, starting from 0.0; the candidate query
is a chain ``((0.0 + s1) + s2) + ...`` in the same order (each link a required part and one
optional term), and the restriction adds 0.0. ``tests/test_search_exact.py`` checks hits and
scores against the full query on random queries.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence

import tantivy

from wikigym.corpora.champions import ChampionLists
from wikigym.corpora.topk import Scored, TopK

K1 = 1.2  # Tantivy's BM25 constants
# Relative margin on the bound: Tantivy scores in f32 (idf, weight, each addition round at
# most half an ulp, ~6e-8 relative; at most 64 terms).
SLACK = 1e-5
# Cost of scoring one candidate through one link of the chain, in postings of the full
# union (which adds each posting once): measured ~20 ns against ~7.5 ns on the 1M-passage
# world (``benchmarks/results/scale.md``). Candidates are scored only where that is cheaper.
CHAIN_COST = 3.0


def idf(doc_freq: int, num_docs: int) -> float:
    """Tantivy's BM25 idf (``log(1 + (N - n + 0.5) / (n + 0.5))``)."""
    return math.log(1.0 + (num_docs - doc_freq + 0.5) / (doc_freq + 0.5))


class Pruner:
    """MaxScore top-k for flat unions of single-term clauses on one field (see module doc).

    Args:
        searcher: The index's searcher.
        schema: Its schema.
        topk: The exact top-k search of that index.
        field: The scored field.
        champions: The index's champion lists: a listed term's largest contribution is its
            first champion's score, a tighter bound than ``idf * (K1 + 1)``.
    """

    def __init__(
        self,
        searcher: tantivy.Searcher,
        schema: tantivy.Schema,
        topk: TopK,
        field: str,
        champions: ChampionLists | None = None,
    ) -> None:
        self.searcher = searcher
        self.schema = schema
        self.topk = topk
        self.field = field
        self.num_docs = searcher.num_docs
        self.champions = champions
        # Queries by the way they were answered (for benchmarks; not used to answer):
        # "full" (the union), "candidates" (the rarest term's), "grown" (a larger set).
        self.paths: Counter[str] = Counter()

    def top(self, full: tantivy.Query, clauses: Sequence[str], k: int) -> list[Scored]:
        """The top ``k`` of ``full``, the flat union of one term query per entry of
        ``clauses`` (its analyzed terms, in the query's clause order) on the field."""
        doc_freq = {t: self.searcher.doc_freq(self.field, t) for t in dict.fromkeys(clauses)}
        terms = sorted((t for t, df in doc_freq.items() if df > 0), key=lambda t: (doc_freq[t], t))
        if len(terms) < 2:
            self.paths["full"] += 1
            return self.topk.top(full, k)
        bound = {t: 0.0 for t in terms}
        for t in clauses:  # a term given twice (two words, one stem) is scored twice
            if t in bound:
                bound[t] += self._largest(t, doc_freq[t]) * (1.0 + SLACK)
        full_cost = sum(doc_freq.get(t, 0) for t in clauses)

        def cheaper(essential: int) -> bool:
            """Scoring the candidates of the first ``essential`` terms beats the union."""
            held = sum(doc_freq[t] for t in terms[:essential])
            return held * len(clauses) * CHAIN_COST < full_cost

        if not cheaper(1):
            self.paths["full"] += 1
            return self.topk.top(full, k)
        essential = 1
        hits = self.topk.top(self._candidates(terms[:essential], clauses), k)
        theta = hits[k - 1][0] if len(hits) >= k else -math.inf
        rest = sum(bound[t] for t in terms[essential:])
        if rest < theta:
            self.paths["candidates"] += 1
            return hits
        while essential < len(terms) and rest >= theta:
            essential += 1
            rest = sum(bound[t] for t in terms[essential:])
        if essential == len(terms) or not cheaper(essential):
            self.paths["full"] += 1
            return self.topk.top(full, k)
        self.paths["grown"] += 1
        return self.topk.top(self._candidates(terms[:essential], clauses), k)

    def _largest(self, term: str, doc_freq: int) -> float:
        """An upper bound of the term's contribution to any document's score."""
        listed = self.champions.max_score(term) if self.champions is not None else None
        return listed if listed is not None else idf(doc_freq, self.num_docs) * (1.0 + K1)

    def _term(self, term: str, option: str) -> tantivy.Query:
        return tantivy.Query.term_query(self.schema, self.field, term, index_option=option)

    def _candidates(self, essential: Sequence[str], clauses: Sequence[str]) -> tantivy.Query:
        """Documents holding an essential term, scored as the full query scores them."""
        if len(essential) == 1:
            holds = self._term(essential[0], "basic")
        else:
            holds = tantivy.Query.boolean_query(
                [(tantivy.Occur.Should, self._term(t, "basic")) for t in essential]
            )
        query = tantivy.Query.const_score_query(holds, 0.0)
        for term in clauses:
            query = tantivy.Query.boolean_query(
                [(tantivy.Occur.Must, query), (tantivy.Occur.Should, self._term(term, "freq"))]
            )
        return query
