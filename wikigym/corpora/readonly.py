"""Open a Tantivy index for reading where its folder cannot be written.

Tantivy takes a lock file in the index folder whenever it opens a reader, so a snapshot on
a read-only mount, or owned by another user, fails to open ("Failed to acquire Lockfile").
A snapshot is read-only data: :class:`ReadOnlyIndex` opens it in place when it can, and
otherwise through a private folder of symbolic links to the index files.
"""

from __future__ import annotations

import os
import tempfile
import weakref
from pathlib import Path
from typing import NoReturn

import tantivy

from wikigym.corpora.staging import clean_stale_owned, make_owned_dir, remove_tree
from wikigym.errors import SnapshotError

SHADOW_PREFIX = "wikigym-index-"


class ReadOnlyIndex:
    """An index opened for reading, from a read-only mount or another user's files too.

    Tantivy takes a lock file in the index folder when it opens a reader, which fails where
    the folder is not writable. There the index is opened through a private folder of
    symbolic links to its files (removed when this object goes; Tantivy's lock file is
    the only file written in it).

    Raises:
        SnapshotError: The index files cannot be read, or no private folder can be made.
        ValueError: The files are not a Tantivy index.
    """

    def __init__(self, path: Path) -> None:
        self.shadow: Path | None = None
        try:
            self.index = tantivy.Index.open(str(path))
            return
        except ValueError as exc:
            if "Lockfile" not in str(exc):  # the folder is read-only: go through a private one
                _raise_unreadable(path, exc)
        tmp = Path(tempfile.gettempdir())
        clean_stale_owned(tmp, SHADOW_PREFIX)  # left by processes killed with an index open
        try:
            shadow = make_owned_dir(tmp, SHADOW_PREFIX)
        except OSError as exc:
            raise SnapshotError(
                f"{path} is read-only and no private folder could be made to open it "
                f"({exc}); set TMPDIR to a writable folder"
            ) from exc
        self.shadow = shadow
        self._cleanup = weakref.finalize(self, remove_tree, shadow, quiet=True)
        try:
            for name in sorted(os.listdir(path)):
                if not name.endswith(".lock"):
                    os.symlink(path.resolve() / name, shadow / name)
        except PermissionError as exc:
            raise SnapshotError(
                f"cannot list the index {path}: permission denied; the snapshot's files must "
                "be readable by this user (ask its owner to run `chmod -R a+rX` on it)"
            ) from exc
        try:
            self.index = tantivy.Index.open(str(shadow))
        except ValueError as exc:
            _raise_unreadable(path, exc)


def _raise_unreadable(path: Path, exc: ValueError) -> NoReturn:
    """Re-raise a Tantivy open error: a permission problem is not a corrupted index."""
    text = str(exc)
    if "PermissionDenied" in text or "Permission denied" in text:
        raise SnapshotError(
            f"cannot read the index {path}: {text}; the snapshot's files must be readable "
            "by this user (ask its owner to run `chmod -R a+rX` on it)"
        ) from exc
    raise exc
