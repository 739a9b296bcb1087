"""Context wrappers of WikiSearch-v1 on a real (enwiki excerpt) snapshot."""

from __future__ import annotations

import pytest
from gymnasium.utils.env_checker import check_env

from wikigym.corpora import Snapshot
from wikigym.corpora.index import Hit
from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.envs.wrappers import (
    ManagedContext,
    TranscriptObservation,
    best_sentence,
    clip_action,
    compact_action,
    search_extract,
    segment_of,
)
from wikigym.tools import format_tool_call
from wikigym.tools.search import SearchOutput

WORDS = ("history", "theory", "population", "climate", "war", "science", "music", "language")


def call(name: str, **arguments: object) -> str:
    return format_tool_call(name, arguments)


@pytest.fixture(scope="module")
def snap(enwiki_snapshot: Snapshot) -> Snapshot:
    return enwiki_snapshot


def make_env(snap: Snapshot, max_steps: int = 60) -> WikiSearchEnv:
    return WikiSearchEnv(corpus=snap, max_steps=max_steps, python="off")


def scripted_actions(snap: Snapshot, n: int, cite: bool = True) -> list[str]:
    """Search, open, find in turn over the pages; with ``cite``, every find names the search's
    top passage."""
    titles = [
        r["title"] for r in snap.sql("SELECT title FROM articles ORDER BY doc_id").to_pylist()
    ]
    actions = []
    for t in range(n):
        block = t // 3
        title = titles[(block * 7) % len(titles)]
        word = WORDS[block % len(WORDS)]
        query = f"{title} {word}" if block % 4 != 3 else f"{word} {WORDS[(block + 3) % len(WORDS)]}"
        if t % 3 == 0:
            actions.append(call("search", query=query, k=5))
        elif t % 3 == 1:
            actions.append(call("open", page=title))
        else:
            top = snap.search(query, 1)
            note = f"Noting p{top[0].passage_id}. " if top and cite else ""
            actions.append(note + call("find", page=title, text=word))
    return actions


def run(env: ManagedContext | TranscriptObservation, actions: list[str]) -> list[str]:
    obs, _ = env.reset(seed=0)
    out = [obs]
    for action in actions:
        obs, *_ = env.step(action)
        out.append(obs)
    return out


def test_check_env(snap: Snapshot) -> None:
    check_env(TranscriptObservation(make_env(snap, 12)), skip_render_check=True)
    check_env(ManagedContext(make_env(snap, 12), 4000), skip_render_check=True)
    check_env(
        ManagedContext(
            make_env(snap, 12), None, budget_tokens=600, count_tokens=lambda s: len(s.split())
        ),
        skip_render_check=True,
    )


@pytest.mark.parametrize("kind", ["transcript", "managed"])
def test_reward_info_and_flags_pass_through(snap: Snapshot, kind: str) -> None:
    bare = make_env(snap, 6)
    wrapped = TranscriptObservation(make_env(snap, 6)) if kind == "transcript" else None
    wrapped = wrapped or ManagedContext(make_env(snap, 6), 3000)
    actions = [*scripted_actions(snap, 4), "<answer>Albedo</answer>"]
    assert bare.reset(seed=3)[1] == wrapped.reset(seed=3)[1]
    for action in actions:
        _, *rest = bare.step(action)
        _, *wrest = wrapped.step(action)
        assert rest == wrest
    assert rest[1] is True  # terminated by the answer


def test_transcript_holds_everything_verbatim(snap: Snapshot) -> None:
    env = TranscriptObservation(make_env(snap))
    bare = make_env(snap)
    first, _ = bare.reset(seed=0)
    actions = scripted_actions(snap, 9)
    observations = run(env, actions)
    assert observations[0] == first
    last = observations[-1]
    for n, action in enumerate(actions, 1):
        result, *_ = bare.step(action)
        assert f"[Turn {n}] action:\n{action}\n[Turn {n}] result:\n{result}" in last
    assert len(observations[-1]) > len(observations[5]) > len(observations[1])


def test_transcript_is_capped_and_says_so(snap: Snapshot) -> None:
    """2 MB actions used to grow the transcript to millions of characters."""
    env = TranscriptObservation(make_env(snap), max_chars=50_000)
    env.reset(seed=0)
    huge = "x" * 2_000_000
    for _ in range(3):
        obs, *_ = env.step(huge)
        assert len(obs) <= 50_000 and env.observation_space.contains(obs)
    assert obs.startswith("Answer the question") and "[transcript cut at 50000 characters]" in obs
    assert "[Transcript: 2 older turns left out to stay within 50000 characters]" in obs
    small = TranscriptObservation(make_env(snap), max_chars=50_000)
    small.reset(seed=0)
    for action in scripted_actions(snap, 30):
        obs, *_ = small.step(action)
    assert len(obs) <= 50_000 and "older turns left out" in obs and "[Turn 30] result:" in obs
    assert TranscriptObservation(make_env(snap)).max_chars == 262_144
    with pytest.raises(ValueError, match="max_chars"):
        TranscriptObservation(make_env(snap), max_chars=10)


@pytest.mark.parametrize(
    ("budget", "cite"), [(4000, True), (8000, True), (8000, False), (16000, True)]
)
def test_sixty_turns_within_budget(snap: Snapshot, budget: int, cite: bool) -> None:
    actions = scripted_actions(snap, 60, cite)
    all_actions = budget >= 16000 or (budget >= 8000 and not cite)
    env = ManagedContext(make_env(snap), budget)
    obs, _ = env.reset(seed=0)
    question = obs[obs.rindex("Question:") :]
    assert len(obs) <= budget
    for n, action in enumerate(actions, 1):
        obs, _, terminated, truncated, _ = env.step(action)
        assert len(obs) <= budget, n
        assert question in obs and obs.startswith(env._first)
        # Every action so far is there, verbatim or as its parsed calls, where the budget
        # holds them all next to the 20 cited passages; else old turns go, the latest stays.
        for m, past in enumerate(actions[:n], 1):
            if not all_actions and m < n:
                continue
            shown = (clip_action(past, 300), compact_action(past, 80))
            assert any(f"[Turn {m}] action:\n{s}\n" in obs + "\n" for s in shown), (n, m)
        assert f"[Turn {n}] result:\n" in obs  # the latest result is kept (maybe cut)
        assert not terminated and truncated == (n == 60)
    assert "step budget (60) is spent" in obs
    if all_actions:
        assert obs.endswith(env.turns[-1][1])  # the last result whole


def test_token_budget(snap: Snapshot) -> None:
    words = lambda text: len(text.split())  # noqa: E731
    env = ManagedContext(make_env(snap), None, budget_tokens=900, count_tokens=words)
    for obs in run(env, scripted_actions(snap, 24)):
        assert words(obs) <= 900 and "Question:" in obs


def test_budget_below_first_observation_keeps_the_question(snap: Snapshot) -> None:
    env = ManagedContext(make_env(snap), 400)
    for obs in run(env, scripted_actions(snap, 6)):
        assert len(obs) <= 400 and "Question:" in obs


def test_dead_end_becomes_stub(snap: Snapshot) -> None:
    used_q, dead_q = "albedo snow reflection", "Aristotle logic syllogism"
    dead_docs = {h.doc_id for h in snap.search(dead_q, 5)}
    albedo = snap.page("Albedo")
    assert albedo is not None and albedo.doc_id not in dead_docs
    # 15,490 characters verbatim: over 12,000 the two oldest results become extracts.
    env = ManagedContext(make_env(snap), 12000)
    env.reset(seed=0)
    env.step(call("search", query=used_q, k=5))
    env.step(call("search", query=dead_q, k=5))
    env.step(call("open", page="Albedo"))
    obs, *_ = env.step(call("find", page="Albedo", text="snow"))
    assert f"[Turn 2] result (extract):\nsearch({dead_q!r}): 5 results (not used)\n" in obs
    assert f"[Turn 1] result (extract):\nsearch({used_q!r}): 5 results\n[p" in obs
    assert f"(d{albedo.doc_id})" in obs.split("[Turn 2]")[0]


def test_under_budget_everything_stays_verbatim(snap: Snapshot) -> None:
    """A conversation that fits is shown as it was given: no extract, no "(not used)"."""
    actions = [
        call("search", query="albedo snow reflection", k=5),
        call("search", query="Aristotle logic syllogism", k=5),
        call("open", page="Albedo"),
        call("find", page="Albedo", text="snow"),
    ]
    managed = ManagedContext(make_env(snap), 16000)
    plain = TranscriptObservation(make_env(snap))
    managed.reset(seed=0)
    plain.reset(seed=0)
    for action in actions:
        obs, *_ = managed.step(action)
        verbatim, *_ = plain.step(action)
    assert len(verbatim) < 16000
    assert obs == verbatim
    assert "(extract)" not in obs and "(not used)" not in obs


def test_cited_passages_keep_their_text(snap: Snapshot) -> None:
    page = snap.page("Albedo")
    assert page is not None
    pids = [p for s in page.sections for p in s.passage_ids]
    cited = pids[3]
    text = snap.passage(cited).text  # type: ignore[union-attr]
    assert len(text) > 300  # long enough that a first-sentence extract would differ
    env = ManagedContext(make_env(snap), 10000, max_fact_chars=2000)  # 11,651 verbatim
    env.reset(seed=0)
    env.step(call("open", page="Albedo"))
    env.step(f"p{cited} says albedo varies. " + call("search", query="moon albedo", k=3))
    obs, *_ = env.step(call("search", query="anarchism", k=3))
    extract = obs.split("[Turn 1] result (extract):\n")[1].split("[Turn 2]")[0]
    assert f"[p{cited}] {text}" in extract  # cited: whole
    uncited = snap.passage(pids[4]).text  # type: ignore[union-attr]
    assert uncited not in extract and f"[p{pids[4]}] " in extract  # not cited: first sentence
    assert f"[Cited passages]\n[p{cited}] Albedo: {text}" in obs
    # Under a tight budget the old results go, the cited passage stays.
    tight = ManagedContext(make_env(snap), 5000, max_fact_chars=2000)
    tight.reset(seed=0)
    for action in [
        call("open", page="Albedo"),
        f"p{cited} says albedo varies. " + call("search", query="moon albedo", k=3),
        *scripted_actions(snap, 6, cite=False),
    ]:
        obs, *_ = tight.step(action)
    assert "[Turn 1] result" not in obs and f"[p{cited}] Albedo: {text}" in obs


def test_same_actions_same_observations(snap: Snapshot) -> None:
    actions = scripted_actions(snap, 30)
    first = run(ManagedContext(make_env(snap), 6000), actions)
    second = run(ManagedContext(make_env(snap), 6000), actions)
    assert first == second
    assert len(set(first)) == len(first)


SEARCH_OUTPUT = SearchOutput(
    "albedo of snow",
    (
        Hit(
            216,
            2,
            "Albedo",
            3.0,
            "Albedos range widely. Fresh snow has an albedo of up to 0.9! Charcoal is dark.",
        ),
        Hit(
            7,
            41,
            "Snow (Disambiguation)",
            2.0,
            "Snow falls. Dirty snow and albedo of snow: both matter.\n\nA second paragraph of snow.",
        ),
    ),
)


def test_search_extract_of_a_known_output() -> None:
    seg = segment_of(SEARCH_OUTPUT)
    assert seg.kind == "search" and seg.query == "albedo of snow"
    assert [(f"p{h.passage_id}", h.title, f"d{h.doc_id}") for h in seg.hits] == [
        ("p216", "Albedo", "d2"),
        ("p7", "Snow (Disambiguation)", "d41"),
    ]
    assert seg.hits[1].text.endswith("matter.\n\nA second paragraph of snow.")
    assert search_extract(seg, 240) == (
        "search('albedo of snow'): 2 results\n"
        "[p216] Albedo (d2)\n"
        "   Fresh snow has an albedo of up to 0.9!\n"
        "[p7] Snow (Disambiguation) (d41)\n"
        "   Dirty snow and albedo of snow: both matter."
    )
    # Ties go to the earliest sentence; stop words ("of") do not count.
    assert best_sentence("One of two. Two of one.", ("of",)) == "One of two."
    assert best_sentence("Albedo is high. Snow is white.", ("snow", "albedo")) == "Albedo is high."


def test_open_and_find_outputs_parse(snap: Snapshot) -> None:
    env = make_env(snap)
    env.reset(seed=0)
    env.step(call("open", page="Albedo"))
    (opened,) = env.last_outputs
    env.step(call("find", page="Albedo", text="snow"))
    (found,) = env.last_outputs
    page = snap.page("Albedo")
    assert page is not None
    seg = segment_of(opened)
    assert seg.kind == "open" and seg.doc == f"d{page.doc_id}" and seg.title == "Albedo"
    refs = [ref for ref, _ in seg.blocks if ref]
    assert refs[0] == f"p{page.sections[0].passage_ids[0]}"
    for ref, text in seg.blocks:
        if ref:
            assert text == snap.passage(int(ref[1:])).text  # type: ignore[union-attr]
    fseg = segment_of(found)
    assert fseg.kind == "find" and fseg.doc == seg.doc and len(fseg.blocks) == 6


def test_bad_arguments() -> None:
    with pytest.raises(ValueError, match="budget_tokens needs count_tokens"):
        ManagedContext(WikiSearchEnv.__new__(WikiSearchEnv), None, budget_tokens=100)
    with pytest.raises(ValueError, match="got neither"):
        ManagedContext(WikiSearchEnv.__new__(WikiSearchEnv), None)
    with pytest.raises(ValueError, match="keep_last"):
        ManagedContext(WikiSearchEnv.__new__(WikiSearchEnv), 1000, keep_last=-1)
