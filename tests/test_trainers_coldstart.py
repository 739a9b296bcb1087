"""The cold start's pieces that need no training: level subsets, cache keys, compact prompts."""

from __future__ import annotations

import json

import pytest

pytest.importorskip("transformers")

from wikigym.errors import WikigymError
from wikigym.tasks.defaults import default_resources
from wikigym.trainers.adapter import EnvSpec, dataset_rows
from wikigym.trainers.coldstart import (
    COMPACT_SYSTEM,
    QUESTION_K,
    SEARCH_KS,
    ColdStartRecipe,
    cold_start_key,
    compact_chats,
    compact_rows,
    first_turns,
    level_subset,
    turn_windows,
)
from wikigym.trainers.grpo import TrainConfig, env_spec_for, uses_cold_start
from wikigym.trainers.sft import oracle_chats


def test_level_subset_and_key() -> None:
    _, tasks = default_resources(progress=False)
    easy = level_subset(tasks, "easy")
    assert len(easy) == 50 and {t.level for t in easy} == {"easy"}
    assert [t.task_id for t in easy] == [t.task_id for t in tasks if t.level == "easy"]
    with pytest.raises(WikigymError, match="no 'expert' tasks"):
        level_subset(tasks, "expert")
    key = cold_start_key(ColdStartRecipe(), easy)
    assert key == cold_start_key(ColdStartRecipe(), level_subset(tasks, "easy"))
    assert key != cold_start_key(ColdStartRecipe(seed=1), easy)
    assert key != cold_start_key(ColdStartRecipe(), level_subset(tasks, "medium"))


def test_compact_chats_keep_the_env_outputs_and_parseable_calls() -> None:
    _, tasks = default_resources(progress=False)
    spec = EnvSpec(tasks=level_subset(tasks, "easy"), kwargs={"python": "off", "max_steps": 8})
    chats = compact_chats(spec)
    # A task whose oracle answer cites what no short route shows is left out (it would teach
    # guessing citations); most are kept.
    assert 40 <= len(chats) <= 50
    first = chats[0]["messages"]
    assert first[0] == {"role": "system", "content": COMPACT_SYSTEM}
    assert first[1]["content"].startswith("Question: ")
    assert first[2]["tool_calls"][0]["function"]["name"] == "search"
    assert first[3]["role"] == "tool" and "[p" in first[3]["content"]  # the env's real result
    env = spec.make()
    for i, chat in enumerate(chats):
        msgs = chat["messages"]
        calls = [m["tool_calls"][0]["function"] for m in msgs if m["role"] == "assistant"]
        assert calls[-1]["name"] == "answer" and msgs[-1]["role"] == "assistant"  # ends there
        # Replayed through the env, the chat's own calls solve its task.
        env.reset(seed=i, options={"task_id": chat["task_id"]})
        for call in calls:
            action = f'<tool_call>{{"name": "{call["name"]}", "arguments": {call["arguments"]}}}</tool_call>'
            _, reward, terminated, _, _ = env.step(action)
        assert terminated and reward == 1.0
    env.close()
    # Every chat opens by searching the question as written, with QUESTION_K results; a later
    # search (the entity's name) takes the fewest results that show what it reads.
    by_id = {t.task_id: t for t in tasks}
    for c in chats:
        first = c["messages"][2]["tool_calls"][0]["function"]
        assert first["name"] == "search"
        assert json.loads(first["arguments"]) == {
            "query": by_id[c["task_id"]].question,
            "k": QUESTION_K,
        }
        assert list(json.loads(first["arguments"])) == ["query", "k"]  # the copy comes first
    later = [
        json.loads(m["tool_calls"][0]["function"]["arguments"])
        for c in chats
        for m in c["messages"][3:]
        if m["role"] == "assistant" and m["tool_calls"][0]["function"]["name"] == "search"
    ]
    assert later and all(a["k"] in SEARCH_KS for a in later)
    answers = [
        json.loads(c["messages"][-1]["tool_calls"][0]["function"]["arguments"]) for c in chats
    ]
    assert all(list(a) == ["text", "citations"] for a in answers)  # the text, then its source
    for chat in chats:
        shown = ""
        for m in chat["messages"]:
            if m["role"] != "assistant":
                shown += m["content"]
                continue
            function = m["tool_calls"][0]["function"]
            args = json.loads(function["arguments"])
            # Every page, citation and answer the policy writes was shown to it before.
            assert "page" not in args or args["page"] in shown
            assert all(f"[{c}]" in shown for c in args.get("citations", []))
            assert function["name"] != "answer" or args["text"] in shown
    # The shortest route: most easy chats answer straight from the question's results.
    names = [
        tuple(m["tool_calls"][0]["function"]["name"] for m in c["messages"] if "tool_calls" in m)
        for c in chats
    ]
    assert names.count(("search", "answer")) > len(chats) // 2
    full = sum(len(json.dumps(c["messages"])) for c in oracle_chats(spec))
    assert sum(len(json.dumps(c["messages"])) for c in chats) < 0.8 * full
    rows = compact_rows(spec, dataset_rows(spec, num_rows=3))
    assert [r["prompt"][0]["content"] for r in rows] == [COMPACT_SYSTEM] * 3


def test_an_answer_read_in_the_search_results_cites_what_was_shown() -> None:
    """A task whose oracle cites the answer's own page (not shown by the search) gets a chat
    that answers from the results, citing the shown hit that holds the answer."""
    snapshot, tasks = default_resources(progress=False)
    spec = EnvSpec(tasks=level_subset(tasks, "easy"), kwargs={"python": "off", "max_steps": 8})
    by_id = {t.task_id: t for t in level_subset(tasks, "easy")}
    recited = 0
    for chat in compact_chats(spec):
        answer = json.loads(chat["messages"][-1]["tool_calls"][0]["function"]["arguments"])
        oracle = by_id[chat["task_id"]].oracle[-1].arguments
        if answer["citations"] == oracle["citations"]:
            continue
        recited += 1
        assert answer["text"] == oracle["text"] and len(answer["citations"]) == 1
        cited = snapshot.passage(int(answer["citations"][0].removeprefix("p")))
        assert cited is not None
        assert answer["text"] in cited.text or answer["text"] in cited.title
    assert recited >= 1


def test_first_turns_are_the_question_and_its_search() -> None:
    _, tasks = default_resources(progress=False)
    spec = EnvSpec(tasks=level_subset(tasks, "easy"), kwargs={"python": "off", "max_steps": 8})
    chats = compact_chats(spec)[:6]
    firsts = first_turns(chats)
    assert [w["messages"] for w in firsts] == [
        [c["messages"][1], c["messages"][2]] for c in chats
    ]  # the question, then the search that copies it
    assert all(w["task_id"] == c["task_id"] for w, c in zip(firsts, chats, strict=True))


def test_turn_windows_hold_each_turn_with_its_least_context() -> None:
    _, tasks = default_resources(progress=False)
    spec = EnvSpec(tasks=level_subset(tasks, "easy"), kwargs={"python": "off", "max_steps": 8})
    chats = compact_chats(spec)[:5]
    windows = turn_windows(chats)
    turns = [m for c in chats for m in c["messages"] if m["role"] == "assistant"]
    assert [w["messages"][-1] for w in windows] == turns  # every turn once, in order
    for w in windows:
        msgs = w["messages"]
        assert msgs[0]["role"] == "user" and msgs[0]["content"].startswith("Question: ")
        assert all(m["role"] != "system" for m in msgs)
        assert len(msgs) in (2, 4)  # the question, then the previous call and its result
        if len(msgs) == 4:
            assert [m["role"] for m in msgs] == ["user", "assistant", "tool", "assistant"]


def test_cpu_tiny_without_model_uses_the_cold_start_on_easy_tasks() -> None:
    cfg = TrainConfig(output_dir="unused", preset="cpu-tiny")
    assert uses_cold_start(cfg)
    spec = env_spec_for(cfg)
    assert {t.level for t in spec.taskset()} == {"easy"}
    assert not uses_cold_start(TrainConfig(output_dir="unused", preset="cpu-tiny", model="m"))
    assert not uses_cold_start(TrainConfig(output_dir="unused", preset="cpu-tiny", env="Calc-v0"))


def test_demonstration_line_says_what_the_run_showed() -> None:
    from wikigym.trainers.cli import demonstration_line

    shown = {"varying_group_share": 0.5, "grad_norm_mean": 0.2, "tool_calls": 30}
    line = demonstration_line({**shown, "tool_call_validity": 0.9})
    assert "shows a learning signal" in line and "30 tool calls (90% valid)" in line
    assert "50% of the groups" in line
    flat = {"varying_group_share": 0.0, "grad_norm_mean": 0.0, "tool_calls": 0}
    assert "NO learning signal" in demonstration_line(flat)
    assert "NO learning signal" in demonstration_line({"varying_group_share": None})


def test_tiny_tokenizer_writes_a_name_the_same_after_any_character() -> None:
    """Words, punctuation and spaces are pre-tokenized apart: a name copied from a question
    (after a space) into a call (after a quote) is the same tokens, so copying is a plain
    copy for the tiny model."""
    from wikigym.trainers.tiny import build_tokenizer

    tok = build_tokenizer(1024)
    name = tok("Lendis Greimbrund", add_special_tokens=False)["input_ids"]
    for before, after in ((" ", "?"), ('"', '"'), ("(", ")"), ("\n", "."), ("[", "]")):
        ids = tok(f"x{before}Lendis Greimbrund{after}", add_special_tokens=False)["input_ids"]
        assert any(ids[i : i + len(name)] == name for i in range(len(ids))), (before, after)
    text = 'search("Lendis Greimbrund") — 3 results\n1. [p12] 4 June 1827'
    assert tok.decode(tok(text, add_special_tokens=False)["input_ids"]) == text


def test_tiny_tokenizer_options_for_a_copying_model() -> None:
    """``TokenizerText``: trained on the given texts, a word carries its space (fewer tokens,
    a name is the same tokens after any space), and the prefix-preserving template renders a
    chat as a prefix of its longer renderings (SFT, evaluation and GRPO's multi-turn rollouts
    see the same tokens)."""
    from wikigym.trainers.tiny import TokenizerText, build_tokenizer

    texts = tuple(
        f"Question: What is the employer of Lindik Tirvrarnorn {i}? <search> Lindik "
        f"Tirvrarnorn {i} </search> <answer> Brondusk Textiles </answer>"
        for i in range(200)
    )
    spaced = build_tokenizer(600, TokenizerText(texts=texts, space_words=True))
    apart = build_tokenizer(600, TokenizerText(texts=texts))
    line = texts[7]
    assert spaced.decode(spaced(line, add_special_tokens=False)["input_ids"]) == line
    assert len(spaced(line)["input_ids"]) < len(apart(line)["input_ids"])
    name = spaced(" Lindik Tirvrarnorn", add_special_tokens=False)["input_ids"]
    for before in ("Question: x", "<search>", "of"):
        ids = spaced(f"{before} Lindik Tirvrarnorn ?", add_special_tokens=False)["input_ids"]
        assert any(ids[i : i + len(name)] == name for i in range(len(ids))), before
    chat = [
        {"role": "user", "content": "Question: q"},
        {"role": "assistant", "content": "<search> q </search>"},
        {"role": "tool", "content": "search('q'): 1 results"},
        {"role": "assistant", "content": "<answer> a </answer>"},
    ]
    plain = build_tokenizer(600, TokenizerText(texts=texts))
    kept = build_tokenizer(600, TokenizerText(texts=texts, prefix_preserving=True))
    for tok, preserves in ((kept, True), (plain, False)):
        # Qwen3's own template drops the think block of an assistant turn once a later turn
        # follows: the first turn, rendered alone, is then not a prefix of the whole chat.
        short = tok.apply_chat_template(chat[:2], tokenize=False)
        full = tok.apply_chat_template(chat, tokenize=False)
        assert full.startswith(short) is preserves


def test_a_checkpoint_trained_without_the_system_text_is_prompted_without_it(tmp_path) -> None:
    """``system_text=False``: chats, windows and GRPO rows hold the question alone, and the
    checkpoint's build record tells GRPO so (a policy prompted with a text it never saw in
    SFT did not copy the question at all)."""
    from wikigym.trainers.coldstart import (
        COLD_START_MARKER,
        cold_start_system_text,
        compact_prompt,
    )

    _, tasks = default_resources(progress=False)
    spec = EnvSpec(tasks=level_subset(tasks, "easy"), kwargs={"python": "off", "max_steps": 8})
    question = next(iter(spec.taskset())).question
    assert compact_prompt(question, system=False) == [
        {"role": "user", "content": f"Question: {question}"}
    ]
    plain = compact_chats(spec, system=False)[:4]
    full = compact_chats(spec)[:4]
    # The same calls and observations; only the system message is gone.
    assert [c["messages"] for c in plain] == [c["messages"][1:] for c in full]
    assert turn_windows(plain) == turn_windows(full)  # windows never held it
    rows = compact_rows(spec, dataset_rows(spec, num_rows=2), system=False)
    assert [[m["role"] for m in r["prompt"]] for r in rows] == [["user"], ["user"]]
    # The prompt style travels with the checkpoint; any other model gets the system text.
    recipe = ColdStartRecipe(system_text=False)
    (tmp_path / COLD_START_MARKER).write_text(json.dumps({"recipe": {"system_text": False}}))
    assert cold_start_system_text(tmp_path) is False
    assert cold_start_system_text(tmp_path / "elsewhere") is True
    easy = level_subset(tasks, "easy")
    assert cold_start_key(recipe, easy) != cold_start_key(ColdStartRecipe(), easy)


def test_a_stage_tokenizes_no_more_rows_than_it_reads() -> None:
    from wikigym.trainers.coldstart import at_most

    rows = [{"i": i} for i in range(100)]
    assert at_most(rows, 100, 0) is rows
    kept = at_most(rows, 30, 0)
    assert len(kept) == 30 and kept == sorted(kept, key=lambda r: r["i"])  # order kept
    assert kept == at_most(rows, 30, 0) and kept != at_most(rows, 30, 1)  # seeded
    assert len({r["i"] for r in kept}) == 30  # without replacement
