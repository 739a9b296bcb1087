"""What a long training command shows while it works: each stage's name, count and time left.

A first ``wikigym train grpo --preset cpu-tiny`` runs for many minutes through stages of very
different kinds (the default world and TaskSet, the cold start's oracle chats, a tokenizer, a
tiny model, four SFT stages, the GRPO steps). :class:`Progress` gives each one line or one
labelled bar (``[wikigym] cold start SFT 2/4 (windows): 75/150 steps [01:02<01:02]``), and
:class:`StepProgress` replaces the unlabelled bar of ``transformers``' Trainer with a labelled
one whose estimate of the time left is tqdm's. ``Progress(enabled=False)`` (``--quiet``) shows
nothing; alarms and errors are not progress and still print.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO, TypeVar

from tqdm.auto import tqdm

T = TypeVar("T")

#: The keys of a GRPO log line worth a glance while it runs (TRL's names and wikigym's).
GRPO_LOG_KEYS: tuple[str, ...] = (
    "reward",
    "loss",
    "grad_norm",
    "completions/mean_length",
    "completions/clipped_ratio",
    "diag/masked_share",
    "diag/tool_call_validity",
)


@dataclass
class Progress:
    """Stage lines and bars on ``stream`` (stderr), or nothing when not ``enabled``."""

    enabled: bool = True
    stream: TextIO | None = None
    _started: dict[str, float] = field(default_factory=dict, repr=False)
    _bars: list[Any] = field(default_factory=list, repr=False)

    @property
    def out(self) -> TextIO:
        return self.stream or sys.stderr

    def stage(self, name: str, what: str) -> None:
        """Announce the start of a stage: ``[wikigym] NAME: WHAT``."""
        self._started[name] = time.monotonic()
        if self.enabled:
            print(f"[wikigym] {name}: {what}", file=self.out, flush=True)

    def done(self, name: str, what: str = "done") -> None:
        """Close a stage announced by :meth:`stage`, with the time it took."""
        began = self._started.pop(name, None)
        took = "" if began is None else f" in {_duration(time.monotonic() - began)}"
        if self.enabled:
            print(f"[wikigym] {name}: {what}{took}", file=self.out, flush=True)

    def iterate(self, items: Iterable[T], name: str, total: int | None, unit: str) -> Iterator[T]:
        """``items``, with a labelled bar (count and time left) while they are consumed."""
        if not self.enabled:
            yield from items
            return
        with self.bar(name, total, unit) as bar:
            for item in items:
                yield item
                bar.update(1)

    def bar(self, name: str, total: int | None, unit: str) -> Any:
        """A labelled tqdm bar (disabled when not ``enabled``); use as a context manager, or
        let :meth:`close` end it."""
        bar = tqdm(
            total=total,
            desc=f"[wikigym] {name}",
            unit=f" {unit}",
            file=self.out,
            disable=not self.enabled,
            dynamic_ncols=True,
            mininterval=1.0,
        )
        self._bars.append(bar)
        return bar

    def close(self) -> None:
        """End every bar still open (an interrupted stage's), so that nothing is drawn after
        the line that says why the command stopped."""
        while self._bars:
            self._bars.pop().close()

    def steps(self, name: str, log_keys: Sequence[str] = ()) -> Any:
        """A ``transformers`` callback showing the trainer's steps as a bar named ``name``
        (see :class:`StepProgress`)."""
        return StepProgress(self, name, log_keys)


def _duration(took: float) -> str:
    seconds = round(took)
    if seconds < 60:
        return f"{seconds} s"
    minutes, seconds = divmod(seconds, 60)
    if minutes < 60:
        return f"{minutes} min {seconds:02d} s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h {minutes:02d} min"


try:  # the train extra; the module stays importable without it (the bars need only tqdm)
    from transformers import TrainerCallback as _Callback
except ImportError:  # pragma: no cover - without the train extra there is no trainer to show
    _Callback = object  # type: ignore[assignment,misc]


class StepProgress(_Callback):
    """A trainer's optimizer steps as one labelled bar with the time left; with ``log_keys``,
    each log line's values of those keys are written above the bar.

    Use :func:`use_step_progress` to put it in place of the trainer's own (unlabelled) bar.
    """

    def __init__(self, progress: Progress, name: str, log_keys: Sequence[str] = ()) -> None:
        self.progress = progress
        self.name = name
        self.log_keys = tuple(log_keys)
        self._bar: Any = None

    def on_train_begin(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if state.is_world_process_zero:
            self._bar = self.progress.bar(self.name, int(state.max_steps), "step")

    def on_step_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if self._bar is not None:
            self._bar.update(int(state.global_step) - self._bar.n)

    def on_log(
        self, args: Any, state: Any, control: Any, logs: dict[str, Any] | None = None, **kw: Any
    ) -> None:
        if self._bar is None or not logs or not self.log_keys or not self.progress.enabled:
            return
        shown = [
            f"{key.rsplit('/', 1)[-1] if key.startswith('diag/') else key} {_short(logs[key])}"
            for key in self.log_keys
            if key in logs
        ]
        if shown:
            self._bar.write(
                f"[wikigym] {self.name} step {state.global_step}/{state.max_steps}: "
                + ", ".join(shown),
                file=self.progress.out,
            )

    def on_train_end(self, args: Any, state: Any, control: Any, **kw: Any) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _short(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def use_step_progress(trainer: Any, callback: StepProgress) -> None:
    """Put ``callback`` in place of the trainer's own progress bar and log printer
    (``transformers``' ``ProgressCallback`` / ``PrinterCallback``)."""
    from transformers.trainer_callback import PrinterCallback, ProgressCallback

    trainer.remove_callback(ProgressCallback)
    trainer.remove_callback(PrinterCallback)
    trainer.add_callback(callback)


def quiet_library_bars() -> None:
    """Silence the sub-step bars of ``datasets`` and ``transformers`` (tokenizing a dataset,
    loading and writing weights): the command's own stages say what is going on."""
    try:
        import datasets
        import transformers
    except ImportError:  # pragma: no cover - the train extra is missing: nothing to silence
        return
    datasets.disable_progress_bars()
    transformers.utils.logging.disable_progress_bar()
