"""The benchmark's Search-R1 peer on Pyserini's Lucene BM25 serves wikigym's own passages.

Needs a Python with pyserini, fastapi and uvicorn (Java 17): set ``WIKIGYM_LUCENE_PYTHON``
to it (``benchmarks/README.md`` shows the venv); skipped otherwise, and CI does not set it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from wikigym.tasks.defaults import default_resources

ROOT = Path(__file__).resolve().parents[1]
LUCENE_PYTHON = os.environ.get("WIKIGYM_LUCENE_PYTHON")

pytestmark = [
    pytest.mark.slow,
    pytest.mark.timeout(300),
    pytest.mark.skipif(not LUCENE_PYTHON, reason="WIKIGYM_LUCENE_PYTHON (pyserini) not set"),
]


def test_lucene_peer_retrieves_the_passage_a_query_names(tmp_path: Path) -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import bench_serve

    snapshot, _ = default_resources(progress=False)
    table = pq.read_table(snapshot.path / "passages.parquet", columns=["passage_id", "text"])
    texts = dict(zip(table["passage_id"].to_pylist(), table["text"].to_pylist(), strict=True))
    index = bench_serve.build_lucene_index(str(LUCENE_PYTHON), str(snapshot.path), tmp_path)
    port = bench_serve.common_free_port()
    peer = subprocess.Popen(
        [str(LUCENE_PYTHON), "-c", bench_serve.LUCENE_RETRIEVER, str(index), str(port)],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert peer.stdout is not None and peer.stdout.readline().strip() == "ready"
        bench_serve.wait_http(f"http://127.0.0.1:{port}/docs")
        # a passage's own first sentence finds it, with its text, in the Search-R1 shape
        pid, text = next((p, t) for p, t in sorted(texts.items()) if len(t.split()) > 8)
        query = " ".join(text.split()[:8])
        body = json.dumps({"queries": [query, "capital"], "topk": 5}).encode()
        request = urllib.request.Request(
            f"http://127.0.0.1:{port}/retrieve", body, {"Content-Type": "application/json"}
        )
        result = json.loads(urllib.request.urlopen(request, timeout=60).read())["result"]
        assert len(result) == 2 and all(len(hits) == 5 for hits in result)
        assert str(pid) in [h["id"] for h in result[0]]
        assert all(h["contents"] == texts[int(h["id"])] for hits in result for h in hits)
    finally:
        peer.terminate()
        peer.wait(timeout=30)
