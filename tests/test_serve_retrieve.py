"""Search-R1's retriever protocol (``POST /retrieve``) against the real clients' request and
parsing code: SkyRL's search env (``skyrl_gym``), verl's search tool (its
``search_r1_like_utils``, which verl shipped until 0.7.1) and Search-R1's own
``LLMGenerationManager`` methods. Their hits equal :meth:`Snapshot.search`'s.

verl 0.8 dropped the search tool and Search-R1 is not a package, so their code is loaded from
the files themselves, unchanged: ``WIKIGYM_VERL_SEARCH`` (default:
``.peers/verl-0.7.1/verl/tools/utils/search_r1_like_utils.py``, which ``.ci/run`` installs
with ``pip install --no-deps --target .peers/verl-0.7.1 verl==0.7.1``) and
``WIKIGYM_SEARCH_R1`` (a checkout's ``search_r1/llm_agent/generation.py``: its three
search methods are taken from the file's syntax tree, the module's heavy imports left out).
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from types import ModuleType, SimpleNamespace
from typing import Any

import pytest
from integration_support import REQUIRED, need

need("uvicorn")
need("starlette")
requests = need("requests")

from wikigym.integrations.serve import ServeConfig  # noqa: E402
from wikigym.integrations.serve.retrieve import contents  # noqa: E402
from wikigym.integrations.serve.server import serve_in_thread  # noqa: E402
from wikigym.tasks.defaults import default_resources, default_tasks_path  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.timeout(300)
VERL_SEARCH = Path(
    os.environ.get(
        "WIKIGYM_VERL_SEARCH",
        ROOT / ".peers/verl-0.7.1/verl/tools/utils/search_r1_like_utils.py",
    )
)
SEARCH_R1 = os.environ.get("WIKIGYM_SEARCH_R1")


@pytest.fixture(scope="module")
def snapshot():
    return default_resources(progress=False)[0]


@pytest.fixture(scope="module")
def queries() -> list[str]:
    tasks = list(default_resources(progress=False)[1])
    words = ["capital city", "river", "born in", "the the", "", "zzqx unknownword", "ünïcödé"]
    return [t.question for t in tasks[:30]] + words


@pytest.fixture(scope="module")
def server(snapshot):
    config = ServeConfig(
        corpus=str(snapshot.path),
        tasks=str(default_tasks_path()),
        env_kwargs={"WikiSearch-v1": {"python": "off"}},
        retrieve_threads=3,
    )
    with serve_in_thread(config) as (url, app):
        yield url, app


def retrieve(url: str, body: Any) -> tuple[int, Any]:
    request = urllib.request.Request(
        f"{url}/retrieve", json.dumps(body).encode(), {"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def expected(snapshot, query: str, k: int, scores: bool) -> list[dict[str, Any]]:
    rows = []
    for hit in snapshot.search(query, k):
        document = {"id": str(hit.passage_id), "contents": contents(hit.title, hit.text)}
        rows.append({"document": document, "score": hit.score} if scores else document)
    return rows


def test_hits_equal_snapshot_search_in_the_search_r1_shape(server, snapshot, queries) -> None:
    url, _ = server
    for k in (1, 3, 10):
        for scores in (True, False):
            status, body = retrieve(url, {"queries": queries, "topk": k, "return_scores": scores})
            assert status == 200
            assert body == {"result": [expected(snapshot, q, k, scores) for q in queries]}
    # the server's default topk (Search-R1's 3) when it is missing or 0; lax types as FastAPI
    for ask in ({}, {"topk": 0}, {"topk": None}, {"topk": "3"}):
        status, body = retrieve(url, {"queries": queries[:2], **ask})
        assert status == 200 and body["result"] == [
            expected(snapshot, q, 3, False) for q in queries[:2]
        ]
    # SkyRL's server takes one "query" (its reply: one hit list all the same)
    status, body = retrieve(url, {"query": queries[0], "topk": 2, "return_scores": True})
    assert status == 200 and body == {"result": [expected(snapshot, queries[0], 2, True)]}
    # the wiki-18 line: a title in quotes, a newline, the text
    hit = snapshot.search(queries[0], 1)[0]
    assert body["result"][0][0]["document"]["contents"] == f'"{hit.title}"\n{hit.text}'


def test_a_batch_is_spread_over_threads_and_never_changes(snapshot, queries) -> None:
    """One search thread or several, a batch of one or many: the same bytes."""
    replies = []
    for threads in (1, 4):
        config = ServeConfig(
            corpus=str(snapshot.path),
            tasks=str(default_tasks_path()),
            env_ids=("WikiSearch-v1",),
            env_kwargs={"WikiSearch-v1": {"python": "off"}},
            retrieve_threads=threads,
        )
        with serve_in_thread(config) as (url, app):
            batch = queries * 4
            replies.append(retrieve(url, {"queries": batch, "topk": 5, "return_scores": True}))
            one_by_one = [
                retrieve(url, {"queries": [q], "topk": 5, "return_scores": True}) for q in batch
            ]
            assert [r[1]["result"][0] for r in one_by_one] == replies[-1][1]["result"]
            assert app.state.retriever.threads == threads
    assert replies[0] == replies[1]


def test_bad_requests_get_fastapi_style_422(server) -> None:
    url, _ = server
    for body, loc in [
        ({"topk": 3}, "queries"),
        ({"queries": "one string"}, "queries"),
        ({"queries": [1, 2]}, "queries"),
        ({"queries": ["a"], "query": "b"}, "queries"),
        ({"queries": ["a"], "topk": -1}, "topk"),
        ({"queries": ["a"], "topk": 10_000}, "topk"),
        ([1, 2], "body"),
    ]:
        status, reply = retrieve(url, body)
        assert status == 422, body
        assert reply["detail"] and loc in reply["detail"][0]["loc"], reply
        assert "input" not in reply["detail"][0]  # the request is never echoed
    request = urllib.request.Request(f"{url}/retrieve", b"{not json", method="POST")
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(request, timeout=30)
    assert err.value.code == 422


def test_skyrl_search_env_runs_unchanged(server, snapshot) -> None:
    need("skyrl_gym")
    from skyrl_gym.envs.search.env import SearchEnv, SearchEnvConfig
    from skyrl_gym.tools.search import _passages2string

    url, _ = server
    config = SearchEnvConfig(search_url=f"{url}/retrieve", topk=3, log_requests=False)
    env = SearchEnv(
        config, extras={"reward_spec": {"ground_truth": {"target": ["x"]}}, "max_turns": 4}
    )
    env.init([{"role": "user", "content": "question"}])
    query = "capital city"
    out = env.step(f"<think>look it up</think><search>{query}</search>")
    assert not out["done"]
    text = out["observations"][0]["content"]
    want = _passages2string(expected(snapshot, query, 3, True))
    assert text == "\n<information>" + json.dumps({"result": want}) + "</information>\n"
    assert out["metadata"]["tool_input"] == [query]


def _peer(path: Path, what: str) -> ModuleType:
    if not path.is_file():
        if REQUIRED:
            raise AssertionError(f"{what} not found at {path}")
        pytest.skip(f"{what} not found at {path}")
    spec = importlib.util.spec_from_file_location(f"peer_{path.stem}", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_verl_search_tool_runs_unchanged(server, snapshot) -> None:
    verl = _peer(VERL_SEARCH, "verl's search_r1_like_utils.py (verl<=0.7.1)")
    url, _ = server
    batch = ["capital city", "river"]
    text, metadata = verl.perform_single_search_batch(f"{url}/retrieve", batch, topk=3)
    assert metadata["status"] == "success" and metadata["total_results"] == 6
    want = "\n---\n".join(verl._passages2string(expected(snapshot, q, 3, True)) for q in batch)
    assert json.loads(text) == {"result": want}
    assert '(Title: "' in want  # Search-R1's quoted title line, as from wiki-18


def _search_r1_methods(path: Path) -> type:
    """``LLMGenerationManager``'s ``batch_search``, ``_batch_search`` and
    ``_passages2string``, compiled from the file (its other imports need a GPU stack)."""
    tree = ast.parse(path.read_text())
    cls = next(
        n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LLMGenerationManager"
    )
    wanted = {"batch_search", "_batch_search", "_passages2string"}
    methods = [n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name in wanted]
    assert {m.name for m in methods} == wanted
    module = ast.Module(
        body=[ast.ClassDef(name="Manager", bases=[], keywords=[], body=methods, decorator_list=[])],
        type_ignores=[],
    )
    namespace: dict[str, Any] = {"requests": requests, "List": list}
    exec(compile(ast.fix_missing_locations(module), str(path), "exec"), namespace)
    return namespace["Manager"]


def test_search_r1_client_runs_unchanged(server, snapshot) -> None:
    if not SEARCH_R1:
        pytest.skip("WIKIGYM_SEARCH_R1 (Search-R1's search_r1/llm_agent/generation.py) not set")
    manager = _search_r1_methods(Path(SEARCH_R1))()
    url, _ = server
    manager.config = SimpleNamespace(search_url=f"{url}/retrieve", topk=3)
    batch = ["capital city", "river", "born in"]
    got = manager.batch_search(batch)
    assert got == [manager._passages2string(expected(snapshot, q, 3, True)) for q in batch]
    hit = snapshot.search("capital city", 1)[0]
    assert got[0].startswith(f'Doc 1(Title: "{hit.title}") {hit.text}\n')
