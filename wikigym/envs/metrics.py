"""Answer metrics: exact match and token F1, exactly as HotpotQA scores them.

The functions reproduce ``normalize_answer``, ``f1_score`` and ``exact_match_score`` of the
official HotpotQA script (``hotpot_evaluate_v1.py``, itself SQuAD's v1.1 normalisation plus a
yes/no rule), so numbers reported on wikigym tasks are comparable with published HotpotQA and
Search-R1 style results. ``tests/test_metrics.py`` checks parity with a verbatim copy of the
official functions.

Normalisation: lower case, drop ASCII punctuation (``string.punctuation``), drop the articles
``a``/``an``/``the`` as whole words, collapse whitespace. The yes/no rule: when the normalised
prediction or gold is one of ``yes``, ``no``, ``noanswer`` and the two differ, F1, precision and
recall are all 0 (no partial credit for ``"no"`` against ``"yes no"``).
"""

from __future__ import annotations

import re
import string
from collections import Counter
from collections.abc import Sequence

__all__ = ["best_match", "exact_match", "f1_score", "normalize_answer"]

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
_SPECIAL = ("yes", "no", "noanswer")


def _require_str(value: object, name: str) -> str:
    if not isinstance(value, str):
        raise TypeError(
            f"{name} must be a str, got {type(value).__name__}: {value!r}; "
            "convert the answer to text before scoring it"
        )
    return value


def normalize_answer(s: str) -> str:
    """Normalise an answer the way SQuAD and HotpotQA do.

    Args:
        s: Any text.

    Returns:
        The text lower-cased, without ASCII punctuation, without the whole words a/an/the,
        with runs of whitespace collapsed to one space and no leading/trailing space.

    Raises:
        TypeError: If ``s`` is not a str.
    """
    text = _require_str(s, "s").lower()
    # Order matters and follows the official script: punctuation goes before articles, so
    # "the-end" -> "theend" keeps no article while "the end" loses "the".
    text = "".join(ch for ch in text if ch not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction: str, gold: str) -> bool:
    """Whether prediction and gold are equal after :func:`normalize_answer`.

    Args:
        prediction: The model's answer.
        gold: One reference answer.

    Returns:
        True when the normalised strings are identical.
    """
    return normalize_answer(_require_str(prediction, "prediction")) == normalize_answer(
        _require_str(gold, "gold")
    )


def f1_score(prediction: str, gold: str) -> tuple[float, float, float]:
    """Token-level F1, precision and recall with HotpotQA's yes/no/noanswer rule.

    Args:
        prediction: The model's answer.
        gold: One reference answer.

    Returns:
        ``(f1, precision, recall)``; ``(0.0, 0.0, 0.0)`` when no token is shared, when either
        side normalises to nothing, or when either normalised side is ``yes``/``no``/``noanswer``
        and the two differ.
    """
    norm_pred = normalize_answer(_require_str(prediction, "prediction"))
    norm_gold = normalize_answer(_require_str(gold, "gold"))
    zero = (0.0, 0.0, 0.0)
    if norm_pred != norm_gold and (norm_pred in _SPECIAL or norm_gold in _SPECIAL):
        return zero
    pred_tokens = norm_pred.split()
    gold_tokens = norm_gold.split()
    num_same = sum((Counter(pred_tokens) & Counter(gold_tokens)).values())
    if num_same == 0:
        return zero
    # Same arithmetic, in the same order, as the official script: results are bit-identical.
    precision = 1.0 * num_same / len(pred_tokens)
    recall = 1.0 * num_same / len(gold_tokens)
    f1 = (2 * precision * recall) / (precision + recall)
    return f1, precision, recall


def best_match(prediction: str, golds: Sequence[str]) -> tuple[bool, float]:
    """Exact match and F1 against the best of several references (answer plus aliases).

    Args:
        prediction: The model's answer.
        golds: The answer and its aliases; at least one.

    Returns:
        ``(em, f1)``: em is True when any reference matches exactly; f1 is the maximum F1 over
        the references (as SQuAD's ``metric_max_over_ground_truths``).

    Raises:
        TypeError: If ``golds`` is a bare str or holds a non-str.
        ValueError: If ``golds`` is empty.
    """
    _require_str(prediction, "prediction")
    if isinstance(golds, str):
        raise TypeError(
            f"golds must be a sequence of answers, got the str {golds!r}; wrap it: [answer]"
        )
    golds = tuple(golds)
    if not golds:
        raise ValueError(
            "golds is empty: a task needs at least one reference answer; check the TaskSet row"
        )
    em = False
    best_f1 = 0.0
    for gold in golds:
        em = em or exact_match(prediction, gold)
        best_f1 = max(best_f1, f1_score(prediction, gold)[0])
    return em, best_f1
