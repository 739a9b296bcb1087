"""Parsing worker processes for the build, with results in submission order.

Each worker is a forked process with its own task pipe and result pipe, so the main
process needs no helper threads (``multiprocessing.Pool`` keeps three, and they compete
with the main thread for the GIL while it reads, writes tables and feeds Tantivy). The
pipes are enlarged so a worker can hand back several results without waiting for the main
process to read them (a 64 KiB pipe made each worker stall on every ~100 KB result).
Results travel as ``marshal`` bytes: they are plain tuples of str/int/None, and marshal
loads them ~4x faster than pickle.

Worker ``i`` returns its results in the order it received its batches, so the main
process gets the global order back by remembering which worker (or itself) took each
batch (see :func:`wikigym.corpora.build._ordered_results`).
"""

from __future__ import annotations

import contextlib
import marshal
import multiprocessing as mp
import pickle
import sys
import traceback
from multiprocessing.connection import Connection
from typing import Any

from wikigym.corpora.pagebuild import WireRecord, WireResult, process_batch
from wikigym.errors import BuildError

_OK, _FAILED = b"\x00", b"\x01"
_STOP = b""
PIPE_BYTES = 1 << 20  # Linux default pipe-max-size for unprivileged processes


def _grow(conn: Connection) -> None:
    """Enlarge a pipe's kernel buffer where the platform allows (a speed-up, not needed)."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl

    # pipe-max-size may be lowered by the administrator: the default buffer still works.
    with contextlib.suppress(OSError):
        fcntl.fcntl(conn.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _serve(tasks: Connection, results: Connection) -> None:
    """Worker loop: batches in, marshalled results out, until the stop message."""
    while True:
        try:
            payload = tasks.recv_bytes()
        except EOFError:
            return  # the main process went away
        if payload == _STOP:
            return
        batch, words, source = pickle.loads(payload)
        try:
            out = _OK + marshal.dumps(process_batch(batch, words, source))
        # Any failure goes to the main process, which raises it with this traceback.
        except BaseException:  # noqa: BLE001
            results.send_bytes(_FAILED + traceback.format_exc().encode("utf-8", "replace"))
            return
        results.send_bytes(out)


class Workers:
    """``n`` forked parsing processes. Use as a context manager; :meth:`close` joins them.

    Args:
        n: Number of worker processes (>= 1).
    """

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"need at least one worker, got {n}")
        ctx = mp.get_context("fork")
        self._tasks: list[Connection] = []
        self._results: list[Connection] = []
        self._procs: list[Any] = []
        for i in range(n):
            task_r, task_w = ctx.Pipe(duplex=False)
            res_r, res_w = ctx.Pipe(duplex=False)
            _grow(task_w)
            _grow(res_w)
            proc = ctx.Process(
                target=_serve, args=(task_r, res_w), name=f"wikigym-build-{i}", daemon=True
            )
            proc.start()
            task_r.close()
            res_w.close()  # the worker holds the only writer: its death reads as EOF here
            self._tasks.append(task_w)
            self._results.append(res_r)
            self._procs.append(proc)

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers."""
        return [int(proc.pid) for proc in self._procs]

    def __len__(self) -> int:
        return len(self._procs)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()

    def submit(self, worker: int, batch: list[WireRecord], words: int, source: str) -> None:
        """Send one batch to ``worker`` (its result comes back after its earlier ones)."""
        payload = pickle.dumps((batch, words, source), protocol=pickle.HIGHEST_PROTOCOL)
        try:
            self._tasks[worker].send_bytes(payload)
        except OSError as exc:
            raise self._died(worker) from exc

    def ready(self, worker: int) -> bool:
        """Whether ``worker``'s oldest outstanding result has started to arrive."""
        return self._results[worker].poll()

    def result(self, worker: int) -> list[WireResult]:
        """``worker``'s oldest outstanding result (blocks until it is there).

        Raises:
            BuildError: The worker failed (its traceback is in the message) or died.
        """
        try:
            data = self._results[worker].recv_bytes()
        except (EOFError, OSError) as exc:
            raise self._died(worker) from exc
        if data[:1] == _OK:
            return marshal.loads(memoryview(data)[1:])  # type: ignore[no-any-return]
        raise BuildError(f"build worker {worker} failed:\n{data[1:].decode('utf-8', 'replace')}")

    def _died(self, worker: int) -> BuildError:
        proc = self._procs[worker]
        proc.join(timeout=1)
        return BuildError(
            f"build worker {worker} (pid {proc.pid}) exited unexpectedly with code "
            f"{proc.exitcode}; out of memory? Retry with fewer --threads"
        )

    def close(self) -> None:
        """Stop the workers after their outstanding batches and wait for them."""
        for conn in self._tasks:
            with contextlib.suppress(OSError):  # already gone: join reports nothing more
                conn.send_bytes(_STOP)
            conn.close()
        for proc in self._procs:
            proc.join()
        for conn in self._results:
            conn.close()

    def terminate(self) -> None:
        """Kill the workers now (on error or interrupt)."""
        for proc in self._procs:
            if proc.is_alive():
                proc.terminate()
        for proc in self._procs:
            proc.join()
        for conn in (*self._tasks, *self._results):
            conn.close()
