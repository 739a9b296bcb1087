"""synth on a generated world: proofs, levels, leaks, determinism, oracle, verify, stats, CLI."""

from __future__ import annotations

import http.server
import json
import re
import threading
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from wikigym.corpora import Snapshot
from wikigym.corpora.default import build_world_snapshot
from wikigym.envs.metrics import normalize_answer
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.synth import SynthConfig, SynthError, generate_tasks, verify_taskset
from wikigym.synth.cli import main
from wikigym.synth.evaluate import Evaluator
from wikigym.synth.generate import TaskBuilder, names_candidate
from wikigym.synth.graph import graph_of
from wikigym.synth.levels import LEVELS, level_problems
from wikigym.synth.query import Entity, Intersect, IsA, Project, from_json, to_json, unwrap, wrap
from wikigym.synth.sampler import Draft
from wikigym.tasks.taskset import TaskSet
from wikigym.tools import format_tool_call


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("synth") / "world"
    build_world_snapshot(1500, 3, out, progress=False)
    return out


@pytest.fixture(scope="module")
def snap(world: Path) -> Snapshot:
    return Snapshot.open(world)


@pytest.fixture(scope="module")
def mixed(snap: Snapshot) -> TaskSet:
    return generate_tasks(snap, SynthConfig(difficulty="mixed", n=40, seed=1))


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


def test_every_task_verifies_and_levels_hold(mixed: TaskSet, snap: Snapshot) -> None:
    assert [t.level for t in mixed] == [LEVELS[i % 4] for i in range(40)]
    assert verify_taskset(mixed, snap) == []
    for t in mixed:
        assert level_problems(t.level or "", t.difficulty) == []
    phd = [t for t in mixed if t.level == "phd"]
    assert all(int(t.difficulty["distractor_min"]) >= 2 for t in phd)
    assert all(len(t.oracle) >= 6 for t in phd)
    assert all(int(t.difficulty["hops"]) == 1 for t in mixed if t.level == "easy")


def test_answers_are_unique_by_evaluation(mixed: TaskSet, snap: Snapshot) -> None:
    ev = Evaluator(graph_of(snap))
    for t in mixed:
        ev.reset()
        assert len(ev.eval(unwrap(t.query))) == 1


def test_no_answer_leak(mixed: TaskSet, snap: Snapshot) -> None:
    g = graph_of(snap)
    for t in mixed:
        if t.answer_type == "yes/no":
            continue
        # "Which has the latest date: A or B?" names its answer among the candidates.
        item = next(iter(Evaluator(g).eval(unwrap(t.query))))
        if names_candidate(unwrap(t.query), item):
            continue
        q = f" {normalize_answer(t.question)} "
        for gold in t.golds:
            assert f" {normalize_answer(gold)} " not in q, (t.question, gold)


def test_planted_ambiguous_query_is_rejected(snap: Snapshot, mixed: TaskSet) -> None:
    g = graph_of(snap)
    country = next(d for d, k in enumerate(g.kinds) if k == "country")
    root = Intersect((IsA("person"), Project("nationality", Entity(country), inverse=True)))
    matches = sorted(Evaluator(g).eval(root))
    assert len(matches) >= 2
    builder = TaskBuilder(snap, g, np.random.default_rng(0), 0)
    assert builder.build(Draft(root, matches[0], "entity"), "easy", 0) is None
    # The same query planted into a verified task makes verify fail.
    planted = mixed[0].model_copy(update={"query": wrap(root)})
    failures = verify_taskset(TaskSet([planted]), snap)
    assert any("not exactly one" in f.reason for f in failures)


def test_oracle_solves_tasks_in_the_env(mixed: TaskSet, snap: Snapshot) -> None:
    env = WikiSearchEnv(corpus=snap, tasks=mixed, python="off", max_steps=30, reward="shaped")
    for t in mixed:
        env.reset(options={"task_id": t.task_id})
        reward, done, info = 0.0, False, {}
        for c in t.oracle:
            assert not done
            _, reward, done, _, info = env.step(call(c.name, **c.arguments))
            assert info["tool_error"] is None, (t.task_id, c)
        assert done
        assert info["reward_components"]["outcome"] == 1.0, t.task_id
        assert info["reward_components"]["penalty"] == 0.0
        assert reward >= 1.0


def test_deterministic_and_seeded(world: Path, tmp_path: Path) -> None:
    args = ["generate", "--difficulty", "mixed", "--n", "12", "--corpus", str(world)]
    a, b, c = tmp_path / "a.jsonl", tmp_path / "b.jsonl", tmp_path / "c.jsonl"
    assert main([*args, "--seed", "5", "--out", str(a)]) == 0
    assert main([*args, "--seed", "5", "--out", str(b)]) == 0
    assert main([*args, "--seed", "6", "--out", str(c)]) == 0
    assert a.read_bytes() == b.read_bytes()
    assert a.read_bytes() != c.read_bytes()


def test_verify_cli_catches_tampered_answer(
    world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "t.jsonl"
    assert main(["generate", "--difficulty", "medium", "--n", "4", "--corpus", str(world),
                 "--out", str(path)]) == 0  # fmt: skip
    assert main(["verify", str(path), "--corpus", str(world)]) == 0
    tasks = list(TaskSet.load(path))
    tasks[1] = tasks[1].model_copy(update={"answer": "Nowhere In Particular"})
    TaskSet(tasks).save(path)
    capsys.readouterr()
    assert main(["verify", str(path), "--corpus", str(world)]) == 1
    err = capsys.readouterr().err
    assert tasks[1].task_id in err and "Nowhere In Particular" in err


def test_stats_cli(world: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "s.jsonl"
    assert main(["generate", "--difficulty", "hard", "--n", "5", "--corpus", str(world),
                 "--out", str(path)]) == 0  # fmt: skip
    capsys.readouterr()
    assert main(["stats", str(path)]) == 0
    out = capsys.readouterr().out
    assert "hard" in out and "relation" in out and "constraint type" in out
    assert main(["stats", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["level"] == {"hard": 5} and data["tasks"] == 5


def test_errors_are_one_line(world: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["generate", "--n", "2", "--corpus", str(world), "--relations", "no_such_rel"])
    assert rc == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("synth:") and "no_such_rel" in err and "\n" not in err
    assert main(["verify", "/nonexistent.jsonl", "--corpus", str(world)]) == 1


def test_relations_option_restricts_queries(snap: Snapshot) -> None:
    rels = ("born_in", "birth_date", "located_in", "population", "founded", "nationality")
    ts = generate_tasks(snap, SynthConfig(difficulty="medium", n=5, seed=2, relations=rels))
    for t in ts:
        used = {f.relation for f in t.evidence.facts}
        assert used <= set(rels)


def test_yes_no_only_when_asked(snap: Snapshot) -> None:
    plain = generate_tasks(snap, SynthConfig(difficulty="easy", n=20, seed=4))
    assert all(t.answer not in ("yes", "no") for t in plain if t.answer_type == "yes/no")
    assert not any(t.answer_type == "yes/no" for t in plain)
    asked = generate_tasks(snap, SynthConfig(difficulty="medium", n=30, seed=4, yes_no=True))
    yn = [t for t in asked if t.answer_type == "yes/no"]
    assert yn and all(t.answer in ("yes", "no") for t in yn)
    assert verify_taskset(TaskSet(yn), snap) == []


def test_query_json_round_trip(mixed: TaskSet) -> None:
    for t in mixed:
        root = unwrap(t.query)
        assert from_json(to_json(root)) == root
    with pytest.raises(SynthError, match="unknown query op"):
        from_json({"op": "union"})


class _Paraphraser(http.server.BaseHTTPRequestHandler):
    """A tiny OpenAI-style endpoint: prefixes the question, or drops it when told to."""

    mode = "good"

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        q = body["messages"][0]["content"].split("Question: ", 1)[1]
        if _Paraphraser.mode == "good":
            text = f"Could you tell me: {q}"
        elif _Paraphraser.mode == "moves the last number":  # e.g. a range's upper bound
            nums = list(re.finditer(r"\d+", q))
            last = nums[-1]
            text = q[: last.start()] + str(int(last.group()) + 1) + q[last.end() :]
        else:
            text = "What is it?"
        data = json.dumps({"choices": [{"message": {"content": text}}]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture()
def llm() -> Iterator[str]:
    server = http.server.HTTPServer(("127.0.0.1", 0), _Paraphraser)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/v1"
    server.shutdown()


def test_llm_paraphrase_kept_only_when_faithful(snap: Snapshot, llm: str) -> None:
    _Paraphraser.mode = "good"
    ts = generate_tasks(snap, SynthConfig(difficulty="medium", n=3, seed=7, llm=llm))
    for t in ts:
        assert t.question.startswith("Could you tell me: ")
        assert t.question.endswith(str(t.difficulty["template_question"]))
    _Paraphraser.mode = "drops constants"
    ts = generate_tasks(snap, SynthConfig(difficulty="medium", n=3, seed=7, llm=llm))
    assert all(t.difficulty["paraphrase"] == "rejected" for t in ts)
    assert all(not t.question.startswith("What is it") for t in ts)
    # Every constant as rendered is kept, a range's upper bound included.
    _Paraphraser.mode = "moves the last number"
    ts = generate_tasks(snap, SynthConfig(difficulty="hard", n=3, seed=7, llm=llm))
    assert all(t.difficulty["paraphrase"] == "rejected" for t in ts)
    assert all(re.search(r"\d", t.question) for t in ts)
    with pytest.raises(SynthError, match="cannot reach"):
        generate_tasks(snap, SynthConfig(n=1, llm="http://127.0.0.1:9/v1"))


def test_default_taskset(snap: Snapshot) -> None:
    from collections import Counter

    from wikigym.synth import default_taskset

    ts = default_taskset(snap)
    assert Counter(t.level for t in ts) == {"easy": 50, "medium": 50, "hard": 50, "phd": 50}
    assert ts.taskset_id == default_taskset(snap).taskset_id


def test_each_level_has_its_own_random_stream(snap: Snapshot) -> None:
    """A level's tasks depend on the seed and the level alone: the easy slots of a mixed
    TaskSet are the tasks of `--difficulty easy`, so how another level is searched cannot
    change them (the cpu-tiny demonstration plays the default TaskSet's easy tasks)."""
    mixed = generate_tasks(snap, SynthConfig(difficulty="mixed", n=16, seed=2))
    for level in ("easy", "hard"):
        alone = generate_tasks(snap, SynthConfig(difficulty=level, n=4, seed=2))
        assert [t.task_id for t in mixed if t.level == level] == [t.task_id for t in alone]
