"""Long training commands say what they are doing: each stage its name, its count and the
time left (tqdm's estimate); ``--quiet`` silences all of it."""

from __future__ import annotations

import io
from types import SimpleNamespace

import pytest

pytest.importorskip("transformers")

from wikigym.trainers.progress import GRPO_LOG_KEYS, Progress


def state(step: int, max_steps: int = 4) -> SimpleNamespace:
    return SimpleNamespace(is_world_process_zero=True, global_step=step, max_steps=max_steps)


def test_stages_say_their_name_and_what_they_took() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    progress.stage("tokenizer", "training a 1024-token byte-level BPE")
    progress.done("tokenizer")
    lines = out.getvalue().splitlines()
    assert lines[0] == "[wikigym] tokenizer: training a 1024-token byte-level BPE"
    assert lines[1].startswith("[wikigym] tokenizer: done in ") and lines[1].endswith(" s")


def test_a_bar_names_its_stage_and_counts_with_the_time_left() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    assert list(progress.iterate(range(3), "cold start: oracle chats", 3, "task")) == [0, 1, 2]
    text = out.getvalue()
    assert "[wikigym] cold start: oracle chats" in text and "3/3" in text and " task" in text


def test_trainer_steps_are_a_labelled_bar_with_log_lines() -> None:
    out = io.StringIO()
    cb = Progress(stream=out).steps("GRPO", GRPO_LOG_KEYS)
    cb.on_train_begin(None, state(0), None)
    for step in (1, 2):
        cb.on_step_end(None, state(step), None)
        logs = {"reward": 0.25, "loss": 0.0123456, "diag/masked_share": 0.5, "other": 1}
        cb.on_log(None, state(step), None, logs=logs)
    cb.on_train_end(None, state(2), None)
    text = out.getvalue()
    assert "[wikigym] GRPO" in text and "2/4" in text
    assert "[wikigym] GRPO step 2/4: reward 0.25, loss 0.01235, masked_share 0.5" in text
    assert "other" not in text


def test_quiet_shows_nothing() -> None:
    out = io.StringIO()
    progress = Progress(enabled=False, stream=out)
    progress.stage("tokenizer", "training")
    progress.done("tokenizer")
    assert list(progress.iterate(range(2), "chats", 2, "task")) == [0, 1]
    cb = progress.steps("GRPO", GRPO_LOG_KEYS)
    cb.on_train_begin(None, state(0), None)
    cb.on_step_end(None, state(1), None)
    cb.on_log(None, state(1), None, logs={"reward": 1.0})
    cb.on_train_end(None, state(1), None)
    assert out.getvalue() == ""


def test_close_ends_an_interrupted_bar_so_nothing_follows_the_last_line() -> None:
    out = io.StringIO()
    progress = Progress(stream=out)
    cb = progress.steps("GRPO")
    cb.on_train_begin(None, state(0), None)
    progress.close()
    drawn = out.getvalue()
    del cb
    import gc

    gc.collect()
    assert out.getvalue() == drawn  # the bar does not redraw itself later


def test_the_cold_start_plan_lists_its_real_stages() -> None:
    from wikigym.trainers.coldstart import ColdStartRecipe, cold_start_steps, stage_plan

    recipe = ColdStartRecipe()
    assert cold_start_steps(recipe) == "3 stages: windows 150, chats 150, own 200 steps"
    chat = {
        "messages": [
            {"role": "user", "content": "q"},
            {"role": "assistant", "content": "a"},
        ]
    }
    plan = stage_plan([chat] * 4, recipe, own=[chat])
    assert [(s.name, s.steps) for s in plan] == [("windows", 150), ("chats", 150), ("own", 200)]
    assert [s.name for s in stage_plan([chat], recipe)] == ["windows", "chats"]  # no own chats
