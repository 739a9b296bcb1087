"""WikiSearch-v1 and Calc-v0 on a real (enwiki excerpt) snapshot: tools, errors, rewards."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import gymnasium as gym
import pytest
from gymnasium.utils.env_checker import check_env

import wikigym
from wikigym.corpora import Snapshot
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import TaskSetError
from wikigym.tasks.one_hop import one_hop_tasks
from wikigym.tasks.taskset import OracleCall, RubricEntry, Task, TaskSet
from wikigym.tools import format_tool_call


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


@pytest.fixture(scope="module")
def snap(enwiki_snapshot: Snapshot) -> Snapshot:
    return enwiki_snapshot


@pytest.fixture(scope="module")
def tasks(snap: Snapshot) -> TaskSet:
    base = one_hop_tasks(snap, n=50, seed=0)
    assert len(base) > 10
    # A task whose answer and rubric we control: the lead passage of Anarchism.
    page = snap.page("Anarchism")
    assert page is not None
    lead = page.sections[0].passage_ids[0]
    custom = Task(
        task_id="anarchism-lead",
        question="Which political philosophy advocates self-governed societies?",
        answer="Anarchism",
        aliases=["anarchy"],
        rubric=[RubricEntry(text="[ANSWER] advocates self-governed societies", passage_ids=[lead])],
        oracle=[
            OracleCall(name="search", arguments={"query": "self-governed societies"}),
            OracleCall(name="answer", arguments={"text": "Anarchism", "citations": [f"p{lead}"]}),
        ],
        snapshot_id=snap.snapshot_id,
    )
    return TaskSet([custom, *base], name="test")


@pytest.fixture()
def env(snap: Snapshot, tasks: TaskSet) -> WikiSearchEnv:
    return WikiSearchEnv(corpus=snap, tasks=tasks, max_steps=5, python="off")


def test_registered_ids() -> None:
    for env_id in wikigym.ENV_IDS:
        assert env_id in gym.envs.registration.registry


def test_check_env_wikisearch(snap: Snapshot, tasks: TaskSet) -> None:
    check_env(WikiSearchEnv(corpus=snap, tasks=tasks, python="off"), skip_render_check=False)


def test_check_env_calc() -> None:
    check_env(gym.make("Calc-v0").unwrapped)


def test_a_failed_reset_leaves_the_env_usable(snap: Snapshot, tasks: TaskSet) -> None:
    """Issue 33: a reset that raises (an unknown task id), first or mid-episode, changes
    nothing: the env made by ``gym.make`` resets and steps on as one that never failed."""
    actions = ["<search>anarchism</search>", "<search>city</search>", "<search>river</search>"]

    def make() -> gym.Env:
        return gym.make("WikiSearch-v1", corpus=snap, tasks=tasks, max_steps=5, python="off")

    def episode(env: gym.Env) -> list[object]:
        out: list[object] = [env.reset(seed=3)[0]]
        out += [env.step(a)[:4] for a in actions]
        return out

    reference = episode(make())
    env = make()
    for _ in range(2):  # the first reset, then again
        with pytest.raises(TaskSetError, match="no task"):
            env.reset(seed=3, options={"task_id": "no-such-task"})
    with pytest.raises(RuntimeError, match="call reset"):
        env.step(actions[0])  # no episode yet: the env's own error, not a checker's TypeError
    assert episode(env) == reference
    assert episode(env) == reference  # and every episode after
    # Mid-episode: the episode in progress goes on, its RNG untouched.
    obs, _ = env.reset(seed=3)
    first = env.step(actions[0])[:4]
    with pytest.raises(TaskSetError):
        env.reset(seed=99, options={"task_id": "no-such-task"})
    assert [obs, first, *(env.step(a)[:4] for a in actions[1:])] == reference


def test_first_observation_and_info(env: WikiSearchEnv, snap: Snapshot, tasks: TaskSet) -> None:
    obs, info = env.reset(seed=0, options={"task_id": "anarchism-lead"})
    assert "Question: Which political philosophy" in obs
    assert "search(" in obs and "answer(" in obs
    assert info == {
        "snapshot_id": snap.snapshot_id,
        "taskset_id": tasks.taskset_id,
        "task_id": "anarchism-lead",
        "step": 0,
        "tools": [],
        "tool_error": None,
        "tool_error_counts": {},
        "mask": False,
    }


def test_reset_is_seeded(env: WikiSearchEnv) -> None:
    ids = [env.reset(seed=s)[1]["task_id"] for s in range(10)]
    assert ids == [env.reset(seed=s)[1]["task_id"] for s in range(10)]
    assert len(set(ids)) > 1


def test_solve_with_citation(env: WikiSearchEnv, snap: Snapshot) -> None:
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    obs, r, term, trunc, info = env.step(
        "I will search. " + call("search", query="self-governed societies", k=3)
    )
    assert not term and r == 0.0 and info["tools"] == ["search"]
    lead = snap.page("Anarchism").sections[0].passage_ids[0]  # type: ignore[union-attr]
    assert f"[p{lead}] Anarchism" in obs
    obs, r, term, trunc, info = env.step(call("answer", text="anarchism", citations=[f"p{lead}"]))
    assert term and not trunc and r == 1.0
    assert info["reward_components"]["outcome"] == 1.0
    assert info["reward_components"]["citation"] == 1.0
    assert info["mask"] is False and info["step"] == 2
    with pytest.raises(RuntimeError):
        env.step(call("search", query="x"))


def test_alias_and_search_r1_tags(env: WikiSearchEnv) -> None:
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    obs, *_ = env.step("<search>anarchism</search>")
    assert "[p" in obs
    _, r, term, _, info = env.step("<answer>Anarchy</answer>")
    assert term and r == 1.0 and info["answer"] == "Anarchy"


def test_search_k_sets_the_result_count_of_a_search_that_names_none(
    snap: Snapshot, tasks: TaskSet
) -> None:
    """A Search-R1 tag has no place for k: ``search_k`` gives its count (Search-R1's retriever
    returns 3); a call that names k keeps its own; the count is recorded for replay."""
    env = WikiSearchEnv(corpus=snap, tasks=tasks, max_steps=8, python="off", search_k=2)
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    obs, *_ = env.step("<search>anarchism</search>")
    assert obs.startswith("search('anarchism'): 2 results")
    obs, *_ = env.step(call("search", query="anarchism", k=4))
    assert obs.startswith("search('anarchism'): 4 results")
    assert env.spec_kwargs["search_k"] == 2
    default = WikiSearchEnv(corpus=snap, tasks=tasks, max_steps=8, python="off")
    default.reset(seed=0, options={"task_id": "anarchism-lead"})
    obs, *_ = default.step("<search>anarchism</search>")
    assert obs.startswith("search('anarchism'): 5 results")
    with pytest.raises(ValueError, match="search_k must be 1 to 20, got 0"):
        WikiSearchEnv(corpus=snap, python="off", search_k=0)


def test_truncation_masks(env: WikiSearchEnv) -> None:
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    for i in range(5):
        obs, r, term, trunc, info = env.step(call("search", query=f"anarchism {i}"))
    assert trunc and not term and r == 0.0
    assert info["mask"] is True
    assert "step budget" in obs


@pytest.mark.parametrize(
    "action,code",
    [
        ("", "empty_action"),
        ("just some thoughts", "no_tool_call"),
        (call("teleport", to="x"), "unknown_tool"),
        (call("search", query="x", k="five"), "invalid_arguments"),
        (call("open", page="No such page zzz"), "not_found"),
        (call("find", page="Anarchism", text="zzzqqq"), "not_found"),
        (call("open", page="Anarchism", part=999), "invalid_part"),
        (call("python", code="print(1)"), "unknown_tool"),  # python="off"
        ("<tool_call>{not json</tool_call>", "parse_error"),
        ("[" * 1000 + "]" * 1000, "no_tool_call"),
        (
            '<tool_call>{"name": "search", "arguments": '
            + "[" * 1000
            + "]" * 1000
            + "}</tool_call>",
            "parse_error",
        ),
    ],
)
def test_bad_actions_become_observations(env: WikiSearchEnv, action: str, code: str) -> None:
    env.reset(seed=0)
    obs, r, term, trunc, info = env.step(action)
    assert info["tool_error"] == code, obs
    assert info["tool_error_counts"][code] == 1
    assert obs and not term and r == 0.0 and info["step"] == 1


def test_hostile_bytes_and_huge_actions(env: WikiSearchEnv) -> None:
    import numpy as np

    env.reset(seed=0)
    rng = np.random.default_rng(0)
    for _ in range(4):
        junk = bytes(rng.integers(0, 256, 5000, dtype=np.uint8)).decode("latin-1")
        obs, *_ = env.step(junk)
        assert isinstance(obs, str)
    obs, _, _, trunc, info = env.step("x" * 1_000_000)
    assert info["tool_error"] is not None and len(obs) <= env.max_obs_chars + 100
    assert trunc  # the fifth action spent the budget


def test_open_paginates_deterministically(env: WikiSearchEnv) -> None:
    env.reset(seed=0)
    obs1, *_ = env.step(call("open", page="anarchism"))
    assert obs1.startswith("# Anarchism (d") and "part 1/" in obs1
    env.reset(seed=0)
    again, *_ = env.step(call("open", page="Anarchism"))
    assert again.replace(" [from 'anarchism']", "") == obs1.replace(" [from 'anarchism']", "")
    obs2, *_ = env.step(call("open", page="Anarchism", part=2))
    assert "part 2/" in obs2 and obs2 != obs1


def test_find_and_redirect(env: WikiSearchEnv, snap: Snapshot) -> None:
    env.reset(seed=0)
    obs, *_ = env.step(call("find", page="Anarchism", text="Proudhon"))
    assert "find('Proudhon')" in obs and "[p" in obs
    row = snap.sql("SELECT redirects_from FROM articles WHERE len(redirects_from) > 0 LIMIT 1")
    alias = row.column(0)[0].as_py()[0]
    obs, _, _, _, info = env.step(call("open", page=alias))
    assert info["tool_error"] is None and f"[from {alias!r}]" in obs


def test_hallucinated_citations_counted(env: WikiSearchEnv) -> None:
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    _, r, term, _, info = env.step(
        call("answer", text="Anarchism", citations=["p999999", "p3", "zz"])
    )
    assert term and r == 1.0  # binary preset: outcome only
    m = info["reward_metrics"]
    assert m["citation_nonexistent"] == 2  # p999999 and a malformed id
    assert m["citation_unseen"] == 1  # p3 exists but was never shown
    assert info["reward_components"]["citation"] == 0.0


def test_shaped_reward_penalises(snap: Snapshot, tasks: TaskSet) -> None:
    env = WikiSearchEnv(corpus=snap, tasks=tasks, reward="shaped", python="off")
    env.reset(seed=0, options={"task_id": "anarchism-lead"})
    env.step(call("teleport"))
    _, r, *_ = env.step(call("answer", text="Anarchism", citations=["p999999"]))
    assert r < 1.0


def test_determinism_of_episodes(snap: Snapshot, tasks: TaskSet) -> None:
    actions = [
        "<search>anarchism history</search>",
        call("open", page="Anarchism", section="History"),
        call("find", page="Anarchism", text="Kropotkin"),
        "<answer>anarchism</answer>",
    ]

    def run() -> list[object]:
        env = WikiSearchEnv(corpus=snap, tasks=tasks, python="off")
        out: list[object] = [env.reset(seed=7)]
        for a in actions:
            out.append(env.step(a))
        return out

    assert run() == run()


def test_oracle_solves_default_tasks(snap: Snapshot, tasks: TaskSet) -> None:
    env = WikiSearchEnv(corpus=snap, tasks=tasks, python="off", max_steps=8)
    solved = 0
    for task in list(tasks)[:20]:
        env.reset(options={"task_id": task.task_id})
        for oc in task.oracle:
            obs, r, term, trunc, info = env.step(call(oc.name, **oc.arguments))
            assert info["tool_error"] is None, obs
        assert term
        solved += r == 1.0
    assert solved == 20


def test_taskset_roundtrip_and_mismatch(tasks: TaskSet, tmp_path: Path, snap: Snapshot) -> None:
    for suffix in (".jsonl", ".parquet"):
        path = tasks.save(tmp_path / f"t{suffix}")
        again = TaskSet.load(path)
        assert again.taskset_id == tasks.taskset_id and len(again) == len(tasks)
    other = TaskSet([tasks[0].model_copy(update={"snapshot_id": "0" * 64})])
    with pytest.raises(TaskSetError, match="was made for snapshot"):
        WikiSearchEnv(corpus=snap, tasks=other, python="off")
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"task_id": "x"}\n')
    with pytest.raises(TaskSetError, match=r"bad\.jsonl:1"):
        TaskSet.load(bad)


def test_calc_rewards() -> None:
    env = gym.make("Calc-v0")
    obs, info = env.reset(seed=1)
    gold = None
    _, r, term, trunc, info = env.step("<answer>nope</answer>")
    gold = info["gold"]
    assert term and not trunc and r == 0.0
    env.reset(seed=1)
    _, r, *_ = env.step(f"thinking... <answer>{gold}</answer>")
    assert r == 1.0
    env.reset(seed=1)
    _, r, _, _, info = env.step("the answer is " + gold)
    assert r == 0.0 and info["tool_error"] == "no_tool_call"


@pytest.mark.skipif(os.environ.get("WIKIGYM_SKIP_DEFAULT") == "1", reason="default world disabled")
def test_default_env_check(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WIKIGYM_CACHE", str(tmp_path_factory.mktemp("cache")))
    env = gym.make("WikiSearch-v1", python="off")
    check_env(env.unwrapped)
    obs, info = env.reset(seed=0)
    assert "Question:" in obs and info["task_id"]


def test_record_and_replay(snap: Snapshot, tasks: TaskSet, tmp_path: Path, capsys) -> None:
    from wikigym.cli import main as cli
    from wikigym.envs.replay import RecordTrajectory, replay

    task_file = tasks.save(tmp_path / "tasks.jsonl")
    env = RecordTrajectory(
        gym.make("WikiSearch-v1", corpus=str(snap.path), tasks=str(task_file), python="off"),
        tmp_path / "traj",
    )
    env.reset(seed=3, options={"task_id": "anarchism-lead"})
    env.step("<search>anarchism</search>")
    env.step(call("open", page="Anarchism", part=2))
    env.step(call("answer", text="Anarchism", citations=["p1"]))
    path = env.last_path
    assert path is not None and path.is_file()
    steps, divergence = replay(path)
    assert steps == 3 and divergence is None
    assert cli(["replay", str(path)]) == 0
    # Tamper with one recorded observation: replay names the step and the field.
    lines = path.read_text().splitlines()
    rec = json.loads(lines[2])
    rec["observation"] = rec["observation"].replace("Anarchism", "Anarchy", 1)
    lines[2] = json.dumps(rec)
    path.write_text("\n".join(lines) + "\n")
    steps, divergence = replay(path)
    assert divergence is not None and divergence.step == 2 and divergence.field == "observation"
    capsys.readouterr()
    assert cli(["replay", str(path)]) == 1
    assert "step 2" in capsys.readouterr().err


def test_vector_envs_share_one_snapshot(snap: Snapshot, tasks: TaskSet, tmp_path: Path) -> None:
    task_file = tasks.save(tmp_path / "tasks.jsonl")
    envs = gym.make_vec(
        "WikiSearch-v1",
        num_envs=4,
        vectorization_mode="sync",
        corpus=str(snap.path),
        tasks=str(task_file),
        python="off",
    )
    obs, info = envs.reset(seed=11)
    assert len(obs) == 4 and all("Question:" in o for o in obs)
    obs, reward, term, trunc, info = envs.step(["<search>anarchism</search>"] * 4)
    assert all("[p" in o for o in obs) and not any(term)
    bases = [e.unwrapped for e in envs.envs]
    assert all(b.snapshot is bases[0].snapshot for b in bases)
    assert all(b.tasks is bases[0].tasks for b in bases)
    envs.close()


def test_python_tool_runs_in_sandbox(snap: Snapshot, tasks: TaskSet) -> None:
    from wikigym.sandbox.sandbox import PythonSandbox

    ok, reason = PythonSandbox.available()
    if not ok:
        pytest.skip(f"namespaces unavailable here: {reason}")
    env = WikiSearchEnv(corpus=snap, tasks=tasks, python="auto")
    env.reset(seed=0)
    obs, _, _, _, info = env.step(call("python", code="print(2024 - 1889)"))
    assert "135" in obs and info["tool_error"] is None
    obs, _, _, _, info = env.step(call("python", code="print(open('/etc/passwd').read())"))
    assert info["tool_error"] == "sandbox_error" and "root:" not in obs
    obs, _, _, _, info = env.step(call("python", code="while True: pass"))
    assert info["tool_error"] == "sandbox_error"


def test_step_outputs_are_the_structure_of_the_observation(
    env: WikiSearchEnv, snap: Snapshot
) -> None:
    """Wrappers and agents read ``env.last_outputs``; the observation is its rendering."""
    from wikigym.envs.results import ActionErrorOutput, NoticeOutput
    from wikigym.tools.find import FindOutput
    from wikigym.tools.open import PageOutput
    from wikigym.tools.search import SearchOutput

    def render(out: Any) -> str:
        return out.render()

    env.reset(seed=0)
    assert env.last_outputs == ()
    obs, *_ = env.step(call("search", query="anarchism history", k=5))
    (search,) = env.last_outputs
    assert isinstance(search, SearchOutput) and render(search) == obs
    expected = snap.search("anarchism history", 5)
    assert [h.passage_id for h in search.hits] == [h.passage_id for h in expected]
    assert [(h.title, h.doc_id) for h in search.hits] == [(h.title, h.doc_id) for h in expected]
    obs, *_ = env.step(call("open", page="Anarchism"))
    (page_out,) = env.last_outputs
    page = snap.page("Anarchism")
    assert isinstance(page_out, PageOutput) and page is not None and render(page_out) == obs
    assert (page_out.title, page_out.doc) == ("Anarchism", f"d{page.doc_id}")
    shown = [b.passage_id for b in page_out.blocks]
    assert shown == [p.passage_id for p in snap.passages_of(page.doc_id)][: len(shown)]
    assert page_out.next_part == 2 and "open with part=2 to read on" in obs
    obs, *_ = env.step(call("find", page="Anarchism", text="Proudhon") + call("search", query="x"))
    # One call per step: the second is an error, listed first (as in the text).
    assert [type(o) for o in env.last_outputs] == [ActionErrorOutput, FindOutput]
    assert "\n\n".join(render(o) for o in env.last_outputs) == obs
    assert env.last_outputs[1].matches  # type: ignore[union-attr]
    env.step(call("answer", text="x"))
    assert env.last_outputs == (NoticeOutput("(episode finished)"),)


def test_missing_tasks_file_is_a_typed_error(snap: Snapshot, tmp_path: Path) -> None:
    missing = tmp_path / "nothere.jsonl"
    # Without a corpus too: the path is checked before the default world would be built.
    for corpus in (None, snap.path):
        with pytest.raises(
            TaskSetError, match=r"nothere\.jsonl.*is not a TaskSet file.*tasks=FILE"
        ):
            gym.make("WikiSearch-v1", corpus=corpus, tasks=missing)


def test_corpus_that_is_not_a_snapshot_is_a_typed_error(tasks: TaskSet, tmp_path: Path) -> None:
    from wikigym.errors import SnapshotError

    with pytest.raises(SnapshotError, match=r"nosnap.*not a snapshot directory.*corpus build"):
        gym.make("WikiSearch-v1", corpus=tmp_path / "nosnap", tasks=tasks)
    (tmp_path / "empty").mkdir()
    with pytest.raises(SnapshotError, match=r"empty is not a wikigym snapshot.*corpus build"):
        gym.make("WikiSearch-v1", corpus=tmp_path / "empty", tasks=tasks)


def test_page_layout_is_what_open_shows(snap: Snapshot) -> None:
    """Task sources place oracle citations by tasks.layout; open must show exactly that."""
    from wikigym.tasks.layout import page_blocks, paginate
    from wikigym.tools import ToolBox, ToolConfig, run_tool
    from wikigym.tools.open import OpenArgs

    box = ToolBox(snap, config=ToolConfig(page_chars=1500))
    titles = snap.sql("SELECT title FROM articles ORDER BY doc_id LIMIT 40").column(0).to_pylist()
    multi = 0
    for title in titles:
        page = snap.page(title)
        assert page is not None
        parts = paginate(page_blocks(page, page.sections), 1500)
        multi += len(parts) > 1
        for n, part in enumerate(parts, 1):
            shown = run_tool(box, "open", OpenArgs(page=title, part=n))
            assert shown.error is None
            assert shown.seen[1:] == tuple(b.ref for b in part)
            assert "\n".join(b.render() for b in part) in shown.text
        assert (
            run_tool(box, "open", OpenArgs(page=title, part=len(parts) + 1)).error == "invalid_part"
        )
    assert multi > 5
