"""``Calc-v0``: single-turn, seeded arithmetic word problems with the same reward plumbing.

Use it to validate a training pipeline before multi-turn work: the reward should rise
within a few hundred steps on a small model; if it does not, the pipeline is broken, not
the agent. The action is the model's text; the answer is read from an ``answer`` tool call
or ``<answer>...</answer>`` (the same parser as ``WikiSearch-v1``).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Mapping
from typing import Any, ClassVar

import gymnasium as gym

from wikigym.envs.actions import parse_action
from wikigym.envs.rewards import EpisodeOutcome, RewardConfig, compute_reward
from wikigym.envs.spaces import UnicodeText
from wikigym.tools.answer import AnswerArgs

_NAMES = ("Ada", "Bram", "Cleo", "Dov", "Esra", "Fen", "Gus", "Hana", "Ivo", "Juna")
_ITEMS = ("apples", "stamps", "marbles", "books", "shells", "coins", "pencils", "tickets")
LEVELS = (1, 2, 3)


class CalcEnv(gym.Env[str, str]):
    """Arithmetic word problems; one action per episode.

    Args:
        level: 1 (one operation), 2 (two), 3 (three, with multiplication).
        reward: Preset name or :class:`RewardConfig` (binary exact match by default).
        render_mode: None or ``ansi``.
    """

    metadata: dict[str, Any] = {"render_modes": ["ansi"], "render_fps": 4}  # noqa: RUF012
    takes_corpus: ClassVar[bool] = False  # no snapshot, no TaskSet (see envs.recipe)

    @staticmethod
    def steps_can_wait(kwargs: Mapping[str, Any]) -> bool:
        """Never: an answer is checked in-process (see :func:`wikigym.envs.recipe.steps_can_wait`)."""
        return False

    def __init__(
        self, level: int = 2, reward: str | RewardConfig = "binary", render_mode: str | None = None
    ) -> None:
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        self.level = level
        self.reward_config = (
            reward if isinstance(reward, RewardConfig) else RewardConfig.from_name(reward)
        )
        self.render_mode = render_mode
        self.observation_space = UnicodeText(2000)
        self.action_space = UnicodeText(200_000)
        self._question = ""
        self._answer = 0
        self._task_id = ""
        self._done = True
        self._last = ""

    def _make_problem(self) -> tuple[str, int]:
        r = self.np_random
        name = _NAMES[int(r.integers(len(_NAMES)))]
        item = _ITEMS[int(r.integers(len(_ITEMS)))]
        total = int(r.integers(5, 60))
        text = f"{name} has {total} {item}."
        ops = self.level
        for i in range(ops):
            kind = int(r.integers(3 if self.level == 3 and i == ops - 1 else 2))
            n = int(r.integers(2, 25))
            if kind == 0:
                text += f" Then {name} gets {n} more."
                total += n
            elif kind == 1 and total - n >= 0:
                text += f" Then {name} gives away {n}."
                total -= n
            elif kind == 1:
                text += f" Then {name} gets {n} more."
                total += n
            else:
                m = int(r.integers(2, 5))
                text += f" Then the number of {item} is multiplied by {m}."
                total *= m
        return f"{text} How many {item} does {name} have now?", total

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[str, dict[str, Any]]:
        super().reset(seed=seed)
        self._question, self._answer = self._make_problem()
        self._task_id = f"calc-L{self.level}-" + _digest(self._question)
        self._done = False
        obs = (
            "Solve the problem. Give only the final number as "
            '<answer>NUMBER</answer> or <tool_call>{"name": "answer", "arguments": {"text": "NUMBER"}}</tool_call>.\n\n'
            f"Problem: {self._question}"
        )
        self._last = obs
        return obs, {"task_id": self._task_id, "step": 0, "mask": False}

    def step(self, action: str) -> tuple[str, float, bool, bool, dict[str, Any]]:
        if self._done:
            raise RuntimeError("step() called on a finished episode; call reset() first")
        if isinstance(action, bytes):
            action = action.decode("utf-8", errors="replace")
        if not isinstance(action, str):
            raise TypeError(f"action must be str, got {type(action).__name__}")
        self._done = True
        parsed = parse_action(action, tools=("answer",))
        errors: Counter[str] = Counter(e.code for e in parsed.errors)
        answer = next((c.args for c in parsed.calls if isinstance(c.args, AnswerArgs)), None)
        outcome = EpisodeOutcome(
            answer=None if answer is None else answer.text,
            golds=(str(self._answer),),
            steps_used=1,
            max_steps=1,
            tool_errors=dict(errors),
        )
        breakdown = compute_reward(outcome, self.reward_config)
        info: dict[str, Any] = {
            "task_id": self._task_id,
            "step": 1,
            "tool_error": parsed.errors[0].code if parsed.errors else None,
            "tool_error_counts": dict(sorted(errors.items())),
            **breakdown.to_info(),
            "answer": outcome.answer,
            "gold": str(self._answer),
        }
        obs = f"answer: {outcome.answer}" if answer is not None else parsed.errors[0].message
        self._last = obs
        return obs, float(breakdown.total), True, False, info

    def render(self) -> str | None:
        return self._last if self.render_mode == "ansi" else None

    @property
    def gold(self) -> str:
        """The current problem's answer (for dataset exports; never shown to the agent)."""
        return str(self._answer)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:12]
