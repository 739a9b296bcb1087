"""What every wikigym command line shares: a parser whose mistakes are one line, and one runner.

Every user mistake ends the same way: a non-zero exit and ONE line on stderr
(``PROG: error: WHAT (...)``), no traceback. Argument mistakes come from :class:`CliParser`
(exit 2), the typed errors of :mod:`wikigym.errors` from :func:`run_command` (exit 1), Ctrl-C
exits 130 and SIGTERM 143, each after the same clean-up. Anything else is a bug and keeps its
traceback.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from types import FrameType
from typing import Any, NoReturn, TypeAlias

from wikigym.errors import ConfigError, Terminated, WikigymError

#: What ``add_subparsers`` returns; each room's ``add_parser(sub)`` takes it (any parser class).
SubParsers: TypeAlias = "argparse._SubParsersAction[Any]"

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: Exit status after SIGTERM (128 + 15, as shells report a process it ended).
EXIT_TERMINATED = 143
#: Exit status when the reader of our output closed the pipe (128 + SIGPIPE, as shells report).
EXIT_BROKEN_PIPE = 141


def one_line(text: str) -> str:
    """``text`` on one line: its non-empty lines joined by ``"; "``."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


class HelpFormatter(argparse.HelpFormatter):
    """``--help`` that shows every option's default (unless its help already says it, or it
    is a flag or has none) and keeps the examples' lines as written (descriptions wrap)."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith("examples:"):
            return "".join(indent + line for line in text.splitlines(keepends=True))
        return super()._fill_text(text, width, indent)

    def _get_help_string(self, action: argparse.Action) -> str | None:
        text = action.help or ""
        default = action.default
        if (
            not action.option_strings  # positional: required, no default
            or "default" in text.lower()
            or isinstance(action, argparse._StoreConstAction | argparse._StoreTrueAction)
            or action.nargs == 0
            or default is None
            or default is argparse.SUPPRESS
            or default in ((), [], {})
        ):
            return text
        return f"{text} (default: %(default)s)"


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that reports a usage mistake in one line and points to ``--help``.

    Subparsers made from it (``add_subparsers``) are of this class too, with its help
    formatter (defaults shown; examples kept as written).
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", HelpFormatter)
        super().__init__(*args, **kwargs)

    def add_examples(self, examples: Mapping[str, Sequence[str]], path: str = "") -> list[str]:
        """Append each command's examples (``{"corpus build": [...], ...}``) to its ``--help``;
        returns the commands that have none (a test keeps that list empty)."""
        missing: list[str] = []
        sub = next((a for a in self._actions if isinstance(a, argparse._SubParsersAction)), None)
        if sub is None:
            lines = examples.get(path.strip())
            if lines:
                self.epilog = "examples:\n" + "\n".join(f"  {line}" for line in lines)
            else:
                missing.append(path.strip())
            return missing
        for name, child in sub.choices.items():
            if isinstance(child, CliParser):
                missing += child.add_examples(examples, f"{path} {name}")
        return missing

    def error(self, message: str) -> NoReturn:
        """Print ``PROG: error: MESSAGE (see PROG --help)`` and exit 2."""
        self.exit(EXIT_USAGE, f"{self.prog}: error: {one_line(message)} (see {self.prog} --help)\n")


def fail(prog: str, message: str) -> int:
    """Print one error line for ``prog`` and return the error exit status."""
    print(f"{prog}: error: {one_line(message)}", file=sys.stderr, flush=True)
    return EXIT_ERROR


def run_command(parser: argparse.ArgumentParser, argv: Sequence[str] | None = None) -> int:
    """Parse ``argv`` and run the chosen command (``args.func(args) -> int``).

    Returns:
        The command's exit status; 1 after a :class:`~wikigym.errors.WikigymError` or a
        file-system error naming its file (printed as one line), 130 after Ctrl-C.
    """
    try:
        return _parse_and_run(parser, argv)
    except BrokenPipeError:
        # The reader went away (`wikigym corpus search ... | head`): not an error of ours.
        # Point stdout at /dev/null so the interpreter's own flush at exit cannot fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_BROKEN_PIPE


def _parse_and_run(parser: argparse.ArgumentParser, argv: Sequence[str] | None) -> int:
    args = parser.parse_args(argv)  # --help writes here: inside the broken-pipe guard
    try:
        with sigterm_as_interrupt():
            return int(args.func(args))
    except KeyboardInterrupt as exc:
        return _stopped(parser.prog, exc)
    except Exception as exc:
        # Ctrl-C or SIGTERM that landed in a callback of a C extension comes back wrapped
        # (pydantic-core turns it into a serialization error): the clean-up has run (every
        # output is removed on any exception), so it ends as the interruption it is.
        interrupted = _interruption(exc)
        if interrupted is not None:
            return _stopped(parser.prog, interrupted)
        if isinstance(exc, WikigymError):
            return fail(parser.prog, str(exc))
        if isinstance(exc, OSError) and exc.filename is not None:  # a file the user named
            return fail(parser.prog, f"{exc.strerror or exc}: {exc.filename}")
        raise  # a bug: keep the traceback


def _interruption(exc: BaseException) -> KeyboardInterrupt | None:
    """The Ctrl-C or SIGTERM behind ``exc`` (its cause or context, a few links deep)."""
    seen: BaseException | None = exc
    for _ in range(8):
        seen = seen.__cause__ or seen.__context__ if seen is not None else None
        if seen is None:
            return None
        if isinstance(seen, KeyboardInterrupt):
            return seen
    return None


def _stopped(prog: str, exc: KeyboardInterrupt) -> int:
    if isinstance(exc, Terminated):
        print(f"{prog}: terminated (SIGTERM)", file=sys.stderr, flush=True)
        return EXIT_TERMINATED
    print(f"{prog}: interrupted", file=sys.stderr, flush=True)
    return EXIT_INTERRUPTED


@contextlib.contextmanager
def sigterm_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM raises :class:`~wikigym.errors.Terminated` in the main thread.

    ``Terminated`` is a ``KeyboardInterrupt``, so SIGTERM (Slurm, Kubernetes, ``timeout``) gets
    the clean-up Ctrl-C gets: partial outputs, hidden build siblings and worker processes are
    removed by the code that already handles Ctrl-C. See :func:`interrupt_on_sigterm`.
    """
    restore = interrupt_on_sigterm()
    try:
        yield
    finally:
        restore()


def interrupt_on_sigterm() -> Callable[[], None]:
    """From now on, SIGTERM raises :class:`~wikigym.errors.Terminated` in the main thread;
    returns the function that puts the previous handler back.

    A second SIGTERM during the clean-up is ignored (a scheduler's SIGKILL after its grace
    period still ends the process), and a child forked meanwhile dies of SIGTERM as it would
    without the handler. Outside the main thread, where Python cannot install signal
    handlers, nothing changes (the returned function does nothing).

    A SIGTERM that lands where an exception would be lost is put off until the main thread
    leaves that place: inside an import (C extensions import lazily and treat any failure
    as "module missing": DuckDB's ``execute`` swallowed the interruption while it imported
    pandas, and the command ran to its end) or a ``__del__``.
    """
    if threading.current_thread() is not threading.main_thread():
        return lambda: None
    owner = os.getpid()
    active = threading.Event()
    active.set()

    def redeliver() -> None:
        if active.is_set():
            os.kill(owner, signal.SIGTERM)

    def handle(signum: int, frame: FrameType | None) -> None:
        if os.getpid() != owner:  # a forked worker inherited the handler: default action
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        if _swallows_exceptions(frame):
            timer = threading.Timer(DEFERRED_SIGTERM_S, redeliver)
            timer.daemon = True
            timer.start()
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # let the clean-up finish
        raise Terminated("SIGTERM")

    previous = signal.signal(signal.SIGTERM, handle)

    def restore() -> None:
        active.clear()
        signal.signal(signal.SIGTERM, previous)

    return restore


#: How soon a put-off SIGTERM is delivered again (see :func:`interrupt_on_sigterm`).
DEFERRED_SIGTERM_S = 0.02


def _swallows_exceptions(frame: FrameType | None) -> bool:
    """Whether an exception raised at ``frame`` may be lost by a caller: the main thread
    is inside an import or a finaliser."""
    while frame is not None:
        code = frame.f_code
        if code.co_filename.startswith("<frozen importlib") or code.co_name == "__del__":
            return True
        frame = frame.f_back
    return False


def require_extra(modules: Sequence[str], extra: str, command: str) -> None:
    """Refuse ``command`` in one line when the optional ``extra`` it needs is not installed.

    Raises:
        ConfigError: One of ``modules`` cannot be imported (it is named, with the remedy).
    """
    missing = [m for m in modules if importlib.util.find_spec(m) is None]
    if missing:
        raise ConfigError(
            f"{command} needs the '{extra}' extra ({', '.join(missing)} not installed); "
            f"install it from the wikigym checkout with: python3 -m pip install -e '.[{extra}]'"
        )
