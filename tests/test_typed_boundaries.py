"""Values that cross a typed boundary (manifest fields, stored index fields) are checked there."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest

from wikigym.corpora.index import IndexConfig, PassageIndexWriter, PassageSearcher
from wikigym.errors import SnapshotError


def test_index_config_numbers_must_be_numbers() -> None:
    base = IndexConfig().to_dict()
    for key, bad in (("title_boost", None), ("max_query_terms", [64])):
        with pytest.raises(ValueError, match=key):
            IndexConfig.from_dict({**base, key: bad})
    # Numbers (and their text, as before) still read back.
    config = IndexConfig.from_dict({**base, "title_boost": "0.25", "max_query_terms": 8})
    assert (config.title_boost, config.max_query_terms) == (0.25, 8)
    with pytest.raises(ValueError, match="stemmer"):
        IndexConfig.from_dict({**base, "stemmer": 7})


def test_hit_of_a_document_without_the_expected_field_is_a_snapshot_error(
    tmp_path: Path,
) -> None:
    built = IndexConfig(title_in_body=True)
    writer = PassageIndexWriter(tmp_path / "index", built)
    writer.add(0, 0, "Paris", "Paris is the capital of France.")
    layout = writer.close()
    good = PassageSearcher(tmp_path / "index", built, layout.doc_order)
    [hit] = good.search("capital of France", 5)
    assert (hit.passage_id, hit.doc_id, hit.title) == (0, 0, "Paris")
    assert hit.text == "Paris is the capital of France."
    # A manifest that claims the passage text is stored in "body", where this index keeps
    # none: an error naming the field, not a hit whose text is None.
    lying = PassageSearcher(tmp_path / "index", replace(built, title_in_body=False))
    with pytest.raises(SnapshotError, match="'body'"):
        lying.search("capital of France", 5)
