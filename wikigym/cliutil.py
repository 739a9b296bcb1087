"""What every wikigym command line shares: a parser whose mistakes are one line, and one runner.

Every user mistake ends the same way: a non-zero exit and ONE line on stderr
(``PROG: error: WHAT (...)``), no traceback. Argument mistakes come from :class:`CliParser`
(exit 2), the typed errors of :mod:`wikigym.errors` from :func:`run_command` (exit 1), Ctrl-C
exits 130. Anything else is a bug and keeps its traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from collections.abc import Sequence
from typing import Any, NoReturn, TypeAlias

from wikigym.errors import ConfigError, WikigymError

#: What ``add_subparsers`` returns; each room's ``add_parser(sub)`` takes it (any parser class).
SubParsers: TypeAlias = "argparse._SubParsersAction[Any]"

EXIT_ERROR = 1
EXIT_USAGE = 2
EXIT_INTERRUPTED = 130
#: Exit status when the reader of our output closed the pipe (128 + SIGPIPE, as shells report).
EXIT_BROKEN_PIPE = 141


def one_line(text: str) -> str:
    """``text`` on one line: its non-empty lines joined by ``"; "``."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


class CliParser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that reports a usage mistake in one line and points to ``--help``.

    Subparsers made from it (``add_subparsers``) are of this class too.
    """

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
        return int(args.func(args))
    except WikigymError as exc:
        return fail(parser.prog, str(exc))
    except KeyboardInterrupt:
        print(f"{parser.prog}: interrupted", file=sys.stderr, flush=True)
        return EXIT_INTERRUPTED
    except OSError as exc:
        if exc.filename is None:  # not a named file the user pointed at: a bug, keep the trace
            raise
        return fail(parser.prog, f"{exc.strerror or exc}: {exc.filename}")


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
