"""What one training episode leaves behind for the diagnostics: :class:`EpisodeRecord`.

The adapter writes one record per finished rollout into an :class:`EpisodeSink`; the
diagnostics callback drains the sink at every logging step. Records hold plain numbers and
strings only (JSON-able), never model outputs beyond a few counts.
"""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import dataclass, field


@dataclass
class EpisodeRecord:
    """One rollout as the env saw it.

    Attributes:
        task_id: The task.
        reward: The env's total reward; None when the episode was masked.
        masked: Left out of the loss (env truncation, or a completion cut by the length limit).
        mask_reason: ``env_truncated``, ``length_truncated`` or None.
        answered: The episode ended with an answer.
        finished_by: ``tool`` (answer tool call), ``text`` (answer read from the final
            assistant text), ``budget`` (env step budget spent) or ``no_answer``.
        steps: Env steps taken.
        tool_calls: Tool calls the model made through the adapter's tool methods.
        valid_tool_calls: Those that ran without an error code.
        tool_errors: Error counts by code, for the whole episode (env codes).
        components: The env's reward components (empty when unknown).
        completion_chars: Characters the model wrote (all assistant turns).
        repeat_ngram_share: Share of repeated word 4-grams in what the model wrote.
        parse_failures: Actions the env could not parse (``parse_error``, ``no_tool_call``,
            ``empty_action`` counts).
    """

    task_id: str
    reward: float | None = None
    masked: bool = False
    mask_reason: str | None = None
    answered: bool = False
    finished_by: str = "no_answer"
    steps: int = 0
    tool_calls: int = 0
    valid_tool_calls: int = 0
    tool_errors: dict[str, int] = field(default_factory=dict)
    components: dict[str, float] = field(default_factory=dict)
    completion_chars: int = 0
    repeat_ngram_share: float = 0.0
    parse_failures: int = 0


class EpisodeSink:
    """A thread-safe queue of :class:`EpisodeRecord` shared by the env instances of one run.

    Pickling gives a new empty sink (a lock does not travel): records made in another process
    stay in that process.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._records: list[EpisodeRecord] = []
        self.total = 0

    def __reduce__(self) -> tuple[type[EpisodeSink], tuple[()]]:
        return (EpisodeSink, ())

    def add(self, record: EpisodeRecord) -> None:
        with self._lock:
            self._records.append(record)
            self.total += 1

    def drain(self) -> list[EpisodeRecord]:
        """The records added since the last drain, in arrival order."""
        with self._lock:
            out, self._records = self._records, []
        return out


def repeat_ngram_share(text: str, n: int = 4) -> float:
    """Share of word n-grams in ``text`` that repeat an earlier one (0 for short texts).

    A healthy answer repeats little; a collapsing policy that loops on a phrase drives it
    towards 1.
    """
    words = text.split()
    if len(words) < n + 1:
        return 0.0
    grams = [tuple(words[i : i + n]) for i in range(len(words) - n + 1)]
    counts = Counter(grams)
    repeated = sum(c - 1 for c in counts.values())
    return repeated / len(grams)
