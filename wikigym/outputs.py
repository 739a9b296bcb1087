"""Outputs that are whole or absent: refuse to replace unless asked, write beside, rename at the end.

:func:`atomic_output` is what every command that writes a result uses (``synth generate``,
``tasks import``, ``eval``, ``demo``, ``export sft``, ``train grpo``, ``train sft``): the work
goes into a hidden sibling ``.partial-PID.NAME`` (same folder, so the final rename is atomic);
on success it replaces ``NAME``, on any failure (an error, Ctrl-C) it is removed. Siblings
left by a process that was killed (``kill -9``: no clean-up ran) are removed by the next run
for the same output once their process is gone.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Literal

from wikigym.errors import OutputExistsError

PARTIAL_PREFIX = ".partial-"


def refuse_existing(path: str | Path, overwrite: bool) -> None:
    """Raise unless ``path`` is free (absent or an empty directory) or ``overwrite`` is true.

    Raises:
        OutputExistsError: ``path`` exists and ``overwrite`` is false.
    """
    path = Path(path)
    if overwrite or not (path.exists() or path.is_symlink()):
        return
    if path.is_dir() and not path.is_symlink() and not any(path.iterdir()):
        return  # an empty directory holds nothing to lose
    raise OutputExistsError(f"{path} exists; pass --overwrite to replace it")


def _remove(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process: alive
        return True
    return True


def remove_stale_partials(path: str | Path) -> list[Path]:
    """Remove the partial siblings of ``path`` whose writing process is gone; returns them."""
    path = Path(path)
    removed: list[Path] = []
    if not path.parent.is_dir():
        return removed
    for sibling in sorted(path.parent.glob(f"{PARTIAL_PREFIX}*.{path.name}")):
        pid_text = sibling.name[len(PARTIAL_PREFIX) :].split(".", 1)[0].removesuffix("-old")
        if pid_text.isdigit() and int(pid_text) != os.getpid() and not _alive(int(pid_text)):
            _remove(sibling)
            removed.append(sibling)
    return removed


def _install(tmp: Path, path: Path) -> None:
    if not (path.exists() or path.is_symlink()):
        os.replace(tmp, path)
        return
    old = path.parent / f"{PARTIAL_PREFIX}{os.getpid()}-old.{path.name}"
    _remove(old)
    os.replace(path, old)
    try:
        os.replace(tmp, path)
    except OSError:
        os.replace(old, path)  # put the previous output back
        raise
    _remove(old)


@contextlib.contextmanager
def atomic_output(
    path: str | Path, *, overwrite: bool = False, kind: Literal["dir", "file"] = "dir"
) -> Iterator[Path]:
    """Yield a temporary sibling of ``path`` to write; rename it to ``path`` at the end.

    Args:
        path: The output (a directory for ``kind="dir"``, else a file).
        overwrite: Replace an existing ``path`` (only once the new output is complete).
        kind: ``"dir"``: the sibling is created as an empty directory; ``"file"``: the caller
            creates it (its name keeps the suffix of ``path``).

    Raises:
        OutputExistsError: ``path`` exists and ``overwrite`` is false (checked before any work).
    """
    path = Path(path)
    refuse_existing(path, overwrite)
    path.parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(path)
    tmp = path.parent / f"{PARTIAL_PREFIX}{os.getpid()}.{path.name}"
    _remove(tmp)
    if kind == "dir":
        tmp.mkdir()
    try:
        yield tmp
        refuse_existing(path, overwrite)  # someone made it meanwhile
        _install(tmp, path)
    finally:
        if tmp.exists() or tmp.is_symlink():
            _remove(tmp)
