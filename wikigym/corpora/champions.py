"""Champion lists: every frequent term's exact top passages, written with the index.

tantivy-py scores every passage that matches a query (``corpora.prune``), so a one-word
query costs its term's document frequency: ~1.6M postings for "born" at 10M passages. For
each term held by at least ``MIN_DOC_FREQ`` passages, the index keeps its top ``CHAMPIONS``
passages by (score desc, passage_id asc) with Tantivy's own f32 scores, found once by the
exact search when the index is written (the index, and so every score, never changes
after). A one-word query with ``k <= CHAMPIONS`` is answered from the list, and the first
score is the term's largest contribution to any passage, which tightens the pruner's
bound for queries of several words. Same hits, same scores (``tests/test_search_exact.py``).

Which terms: the analyzed words of a fixed-size, evenly spaced sample of passages
(``SAMPLE`` of them, every ``n / SAMPLE``-th passage_id), kept where the index's document
frequency reaches ``MIN_DOC_FREQ``: a term that frequent is in the sample with near
certainty, and memory holds the sample's vocabulary, not the corpus's. A term missed only
costs its queries the full search.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

CHAMPIONS = 64
MIN_DOC_FREQ = 1 << 12
SAMPLE = 1 << 17
FILE = "champions.parquet"
SCHEMA = pa.schema(
    [
        ("term", pa.string()),
        ("passage_ids", pa.list_(pa.uint64())),
        ("scores", pa.list_(pa.float32())),
    ]
)


def sampled_texts(passages: Path, total: int) -> Iterator[str]:
    """The text of every ``ceil(total / SAMPLE)``-th passage (by passage_id), streamed one
    row group at a time."""
    step = max(1, -(-total // SAMPLE))
    with pq.ParquetFile(passages) as file:
        for batch in file.iter_batches(columns=["passage_id", "text"], batch_size=65_536):
            ids = batch.column(0).to_pylist()
            texts = batch.column(1).to_pylist()
            for pid, text in zip(ids, texts, strict=True):
                if pid % step == 0 and isinstance(text, str):
                    yield text


def write(path: Path, lists: Iterable[tuple[str, list[int], list[float]]]) -> int:
    """Write (term, passage ids, scores) rows sorted by term; returns the rows written."""
    rows = sorted(lists)
    table = pa.table(
        {
            "term": [r[0] for r in rows],
            "passage_ids": [r[1] for r in rows],
            "scores": [r[2] for r in rows],
        },
        schema=SCHEMA,
    )
    pq.write_table(table, path)
    return len(rows)


class ChampionLists:
    """The champion lists of an index, read once (a few MB, held as flat arrays).

    Raises:
        ValueError: The file is not a champion table.
    """

    def __init__(self, path: Path) -> None:
        table = pq.read_table(path)
        if not table.schema.equals(SCHEMA):
            raise ValueError(f"{path}: not a champion table (schema {table.schema})")
        terms = table.column("term").to_pylist()
        if terms != sorted(set(terms)):
            raise ValueError(f"{path}: terms not sorted and distinct")
        ids = table.column("passage_ids").combine_chunks()
        scores = table.column("scores").combine_chunks()
        # Offsets into the child arrays (.values), not value_lengths() or flatten(): those
        # load pyarrow.compute on first use, which a process that dropped its privileges
        # after its imports (tests/test_snapshot_trust.py) can no longer import.
        offsets = ids.offsets.to_numpy()
        paired = np.array_equal(offsets, scores.offsets.to_numpy())
        nulls = (
            ids.null_count + scores.null_count + ids.values.null_count + scores.values.null_count
        )
        if nulls or not paired:
            raise ValueError(f"{path}: passage ids and scores do not pair up")
        self._row = {term: row for row, term in enumerate(terms)}
        self._offsets = offsets
        self._ids = ids.values.to_numpy()
        self._scores = scores.values.to_numpy()

    def __len__(self) -> int:
        return len(self._row)

    def top(self, term: str, k: int) -> list[tuple[float, int]] | None:
        """(score, passage_id) of the term's top ``k``; None when the term has no list or a
        shorter one (the list is the top of all the term's passages)."""
        row = self._row.get(term)
        if row is None:
            return None
        start, end = int(self._offsets[row]), int(self._offsets[row + 1])
        if k > end - start:
            return None
        scores = self._scores[start : start + k].tolist()
        ids = self._ids[start : start + k].tolist()
        return list(zip(scores, ids, strict=True))

    def max_score(self, term: str) -> float | None:
        """The term's largest contribution to any passage's score, if it has a list."""
        row = self._row.get(term)
        if row is None or self._offsets[row] == self._offsets[row + 1]:
            return None
        return float(self._scores[int(self._offsets[row])])
