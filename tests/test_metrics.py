"""Parity of wikigym.envs.metrics with the official HotpotQA evaluation script."""

from __future__ import annotations

import json
import re
import string
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wikigym.envs.metrics import best_match, exact_match, f1_score, normalize_answer

# --- Reference: verbatim copy of the official functions --------------------------------------
# Source: hotpotqa/hotpot, hotpot_evaluate_v1.py (https://github.com/hotpotqa/hotpot),
# functions normalize_answer, f1_score and exact_match_score, unchanged except for the names
# (prefixed with ref_) and the layout ruff format gives it.


def ref_normalize_answer(s):
    def remove_articles(text):
        return re.sub(r"\b(a|an|the)\b", " ", text)

    def white_space_fix(text):
        return " ".join(text.split())

    def remove_punc(text):
        exclude = set(string.punctuation)
        return "".join(ch for ch in text if ch not in exclude)

    def lower(text):
        return text.lower()

    return white_space_fix(remove_articles(remove_punc(lower(s))))


def ref_f1_score(prediction, ground_truth):
    normalized_prediction = ref_normalize_answer(prediction)
    normalized_ground_truth = ref_normalize_answer(ground_truth)

    ZERO_METRIC = (0, 0, 0)

    if (
        normalized_prediction in ["yes", "no", "noanswer"]
        and normalized_prediction != normalized_ground_truth
    ):
        return ZERO_METRIC
    if (
        normalized_ground_truth in ["yes", "no", "noanswer"]
        and normalized_prediction != normalized_ground_truth
    ):
        return ZERO_METRIC

    prediction_tokens = normalized_prediction.split()
    ground_truth_tokens = normalized_ground_truth.split()
    common = Counter(prediction_tokens) & Counter(ground_truth_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return ZERO_METRIC
    precision = 1.0 * num_same / len(prediction_tokens)
    recall = 1.0 * num_same / len(ground_truth_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall


def ref_exact_match_score(prediction, ground_truth):
    return ref_normalize_answer(prediction) == ref_normalize_answer(ground_truth)


# --- Helpers ---------------------------------------------------------------------------------


def assert_parity(prediction: str, gold: str) -> None:
    """Ours equals the reference exactly (same floats, not approximately)."""
    assert normalize_answer(prediction) == ref_normalize_answer(prediction)
    assert exact_match(prediction, gold) == ref_exact_match_score(prediction, gold)
    ours = f1_score(prediction, gold)
    ref = ref_f1_score(prediction, gold)
    assert ours == ref, (prediction, gold, ours, ref)
    assert all(isinstance(x, float) for x in ours)


def ref_best(prediction: str, golds: list[str]) -> tuple[bool, float]:
    em = max(ref_exact_match_score(prediction, g) for g in golds)
    f1 = max(ref_f1_score(prediction, g)[0] for g in golds)
    return em, f1


def perturbations(gold: str) -> list[str]:
    """Deterministic variants of a gold answer that exercise each normalisation step."""
    tokens = gold.split()
    out = [
        gold.upper(),
        f"The {gold}.",
        f"  a {gold} ,and  the\tend ",
        gold.replace(" ", "-"),
        f"{gold} {gold}",
        " ".join(reversed(tokens)),
        f'"{gold}"!?',
    ]
    if len(tokens) > 1:
        out.append(" ".join(tokens[:-1]))
        out.append(" ".join([*tokens[1:], "extra", "words"]))
    return out


# --- Known values ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("  An  apple,\ta pear  ", "apple pear"),
        ("the-end", "theend"),
        ("Théâtre  the  Ünïcode", "théâtre ünïcode"),
        ("A", ""),
        ("", ""),
        ("theater", "theater"),
    ],
)
def test_normalize_answer_known_values(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_f1_known_values() -> None:
    f1, p, r = f1_score("the cat sat", "a cat sat down")
    assert (p, r) == (1.0, 2 / 3)
    assert f1 == pytest.approx(0.8)
    assert f1_score("cat cat", "cat") == (2 / 3, 0.5, 1.0)
    assert f1_score("dog", "cat") == (0.0, 0.0, 0.0)


def test_yes_no_rule() -> None:
    assert f1_score("no", "no way") == (0.0, 0.0, 0.0)
    assert f1_score("no way", "no") == (0.0, 0.0, 0.0)
    assert f1_score("yes", "Yes.") == (1.0, 1.0, 1.0)
    assert f1_score("noanswer", "no answer") == (0.0, 0.0, 0.0)
    # Without the rule the overlap on "no" would give partial credit.
    assert f1_score("not no", "no never") == (0.5, 0.5, 0.5)


def test_best_match_uses_aliases() -> None:
    assert best_match("NYC", ["New York City", "NYC"]) == (True, 1.0)
    em, f1 = best_match("New York", ["New York City", "Big Apple"])
    assert em is False
    assert f1 == pytest.approx(0.8)
    assert best_match("", ["the"]) == (True, 0.0)  # both normalise to "", as officially


def test_bad_inputs_raise_typed_errors() -> None:
    with pytest.raises(ValueError, match="golds is empty"):
        best_match("x", [])
    with pytest.raises(TypeError, match="wrap it"):
        best_match("x", "x")
    with pytest.raises(TypeError, match="prediction must be a str"):
        f1_score(None, "x")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="must be a str"):
        normalize_answer(3)  # type: ignore[arg-type]


# --- Property parity -------------------------------------------------------------------------

_WORDS = st.sampled_from(
    [
        "a", "an", "the", "The", "A", "AN", "yes", "no", "noanswer", "Yes", "NO", "no answer",
        "cat", "Paris", "1922", "3.14", "O'Neil", "théâtre", "İstanbul", "straße", "東京", "ＡＢＣ",
        "x-ray", "the_end", "a.b", "anthem", "thea",
    ]
)  # fmt: skip
_SEPARATORS = st.sampled_from([" ", "  ", "\t", "\n", "\u00a0", "\u3000", ",", ".", "-", "", "'"])
_TOKEN = st.one_of(_WORDS, st.text(max_size=6), st.sampled_from(list(string.punctuation)))
_ANSWER = st.lists(st.tuples(_TOKEN, _SEPARATORS), max_size=8).map(
    lambda parts: "".join(t + s for t, s in parts)
)


@settings(max_examples=300, deadline=None, database=None)
@given(prediction=_ANSWER, gold=_ANSWER)
def test_parity_with_official_script_random(prediction: str, gold: str) -> None:
    assert_parity(prediction, gold)


@settings(max_examples=150, deadline=None, database=None)
@given(prediction=_ANSWER, golds=st.lists(_ANSWER, min_size=1, max_size=4))
def test_best_match_parity_random(prediction: str, golds: list[str]) -> None:
    em, f1 = best_match(prediction, golds)
    assert (em, f1) == ref_best(prediction, golds)
    assert 0.0 <= f1 <= 1.0
    assert not em or f1 in (0.0, 1.0)  # an exact match scores 1, or 0 when both are empty


# --- Parity on real HotpotQA questions -------------------------------------------------------


def _load_hotpot(shared_data: Path) -> list[dict]:
    path = shared_data / "qa" / "hotpotqa-distractor-300.jsonl"
    with path.open(encoding="utf-8") as f:
        return [json.loads(line) for line in f if line.strip()]


def test_parity_on_hotpotqa_300(shared_data: Path) -> None:
    rows = _load_hotpot(shared_data)
    assert len(rows) == 300
    checked = 0
    em_gold = 0
    for i, row in enumerate(rows):
        gold = row["answer"]
        titles = row["supporting_facts"]["title"]
        sentences = [s for para in row["context"]["sentences"] for s in para]
        predictions = [gold, "yes", "no", "noanswer", titles[0], sentences[i % len(sentences)]]
        predictions += perturbations(gold)
        # A context sentence that contains the gold: high recall, low precision.
        predictions += [s for s in sentences if gold.lower() in s.lower()][:2]
        for prediction in predictions:
            assert_parity(prediction, gold)
            assert best_match(prediction, [gold, titles[0]]) == ref_best(
                prediction, [gold, titles[0]]
            )
            checked += 1
        em_gold += exact_match(gold, gold)
    assert em_gold == 300
    assert checked > 300 * 12
