"""Arrow schemas of the snapshot tables and a writer with fixed row groups.

Row groups of a fixed size make the Parquet bytes a function of the rows alone, so a
table's sha256 does not depend on how batches happened to arrive (threads, DuckDB
vector sizes). That is what lets ``snapshot_id`` hash files instead of rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 65_536
_STR_LIST = pa.list_(pa.string())

ARTICLES = pa.schema(
    [
        ("doc_id", pa.int64()),
        ("title", pa.string()),
        ("url", pa.string()),
        ("text", pa.string()),
        ("redirects_from", _STR_LIST),
        ("categories", _STR_LIST),
        ("is_disambiguation", pa.bool_()),
        ("infobox_type", pa.string()),
        ("source_id", pa.string()),
    ]
)
PASSAGES = pa.schema(
    [
        ("passage_id", pa.int64()),
        ("doc_id", pa.int64()),
        ("section", _STR_LIST),
        ("ordinal", pa.int32()),
        ("text", pa.string()),
        ("char_start", pa.int64()),
        ("char_end", pa.int64()),
        # The source's own passage id (DPR id, KILT ``wikipedia_id:paragraph``), else null.
        ("source_passage_id", pa.string()),
    ]
)
LINKS = pa.schema(
    [
        ("link_id", pa.int64()),
        ("src_doc_id", pa.int64()),
        ("src_passage_id", pa.int64()),
        ("anchor", pa.string()),
        ("target_title", pa.string()),
        ("target_doc_id", pa.int64()),
    ]
)
FACTS = pa.schema(
    [
        ("fact_id", pa.int64()),
        ("subject_doc_id", pa.int64()),
        ("relation", pa.string()),
        ("object", pa.string()),
        ("object_title", pa.string()),
        ("object_doc_id", pa.int64()),
        ("value_type", pa.string()),
        ("source", pa.string()),
        ("passage_id", pa.int64()),
        # Infobox facts: the raw key, the value as shown, and whether the relation
        # vocabulary typed it (untyped facts keep the raw key as relation).
        ("key", pa.string()),
        ("value_text", pa.string()),
        ("typed", pa.bool_()),
        # Where the fact is stated besides its passage: the category line
        # ("Category:1809 births"), the lead sentence, or the Wikidata statement
        # ("Q262 P36 Q3561"); null for infobox facts (key and value_text state them) and
        # world facts (their passage does). passage_id null: stated in no passage.
        ("statement", pa.string()),
        # The fact_id of a fact of the same subject this one restates (same relation and
        # value, or a date the other gives more precisely), else null.
        ("restates", pa.int64()),
    ]
)
# A generated world's facts: every fact is stated by its own sentence's passage and restates
# none, so the two columns of real facts are left out (its files, and ids, as they were).
WORLD_FACTS = pa.schema([f for f in FACTS if f.name not in ("statement", "restates")])
OPTIONAL_FACT_COLUMNS = (("statement", pa.string()), ("restates", pa.int64()))

TABLES: dict[str, pa.Schema] = {
    "articles": ARTICLES,
    "passages": PASSAGES,
    "links": LINKS,
    "facts": FACTS,
}

# Staging tables written while streaming, resolved by DuckDB at the end of the build.
ARTICLES_STAGE = pa.schema([f for f in ARTICLES if f.name != "redirects_from"])
REDIRECTS_STAGE = pa.schema([("title", pa.string()), ("target", pa.string())])
LINKS_STAGE = pa.schema([f for f in LINKS if f.name != "target_doc_id"])
FACTS_STAGE = pa.schema([f for f in FACTS if f.name != "object_doc_id"])
WORLD_FACTS_STAGE = pa.schema([f for f in WORLD_FACTS if f.name != "object_doc_id"])


class TableWriter:
    """Append rows (as columns or Arrow batches) to one Parquet file in fixed row groups.

    Args:
        path: Output file.
        schema: Arrow schema every batch is cast to.
        row_group_rows: Rows per row group; only the last group may be shorter.
    """

    def __init__(self, path: Path, schema: pa.Schema, row_group_rows: int = ROW_GROUP_ROWS) -> None:
        self.path = path
        self.schema = schema
        self.row_group_rows = row_group_rows
        self.rows = 0
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._columns: dict[str, list[object]] = {name: [] for name in schema.names}
        self._column_rows = 0
        self._writer = pq.ParquetWriter(
            path,
            schema,
            compression="zstd",
            compression_level=3,
            write_statistics=True,
            store_schema=True,
        )

    def append_row(self, *values: object) -> None:
        """Append one row, values in schema order."""
        for name, value in zip(self.schema.names, values, strict=True):
            self._columns[name].append(value)
        self._column_rows += 1
        if self._column_rows >= 8192:
            self._move_columns()

    def extend(self, *columns: Sequence[object]) -> None:
        """Append several rows given column-wise (one list per column, in schema order)."""
        n = len(columns[0])
        for name, values in zip(self.schema.names, columns, strict=True):
            if len(values) != n:
                raise ValueError(f"column {name} has {len(values)} values, expected {n}")
            self._columns[name].extend(values)
        self._column_rows += n
        if self._column_rows >= 8192:
            self._move_columns()

    def append_batch(self, batch: pa.RecordBatch | pa.Table) -> None:
        """Append an Arrow batch (cast to the schema)."""
        self._move_columns()
        table = pa.Table.from_batches([batch]) if isinstance(batch, pa.RecordBatch) else batch
        self._pending.append(table.select(self.schema.names).cast(self.schema))
        self._pending_rows += table.num_rows
        self._flush(final=False)

    def _move_columns(self) -> None:
        if not self._column_rows:
            return
        table = pa.table(self._columns, schema=self.schema)
        self._columns = {name: [] for name in self.schema.names}
        self._column_rows = 0
        self._pending.append(table)
        self._pending_rows += table.num_rows
        self._flush(final=False)

    def _flush(self, final: bool) -> None:
        if self._pending_rows < self.row_group_rows and not final:
            return
        table = pa.concat_tables(self._pending)
        self._pending, self._pending_rows = [], 0
        n = self.row_group_rows
        full = (table.num_rows // n) * n
        if final:
            full = table.num_rows
        for start in range(0, full, n):
            chunk = table.slice(start, min(n, full - start))
            self._writer.write_table(chunk, row_group_size=n)
            self.rows += chunk.num_rows
        if full < table.num_rows:
            rest = table.slice(full)
            self._pending, self._pending_rows = [rest], rest.num_rows

    def close(self) -> None:
        """Write the last (short) row group and close the file."""
        self._move_columns()
        if self._pending_rows:
            self._flush(final=True)
        self._writer.close()
