"""Parsing worker processes for the build, with results in submission order.

Each worker is a forked process with its own task pipe and result pipe, so the main
process needs no helper threads (``multiprocessing.Pool`` keeps three, and they compete
with the main thread for the GIL while it reads, writes tables and feeds Tantivy). The
pipes are enlarged so a worker can hand back results without waiting for the main process
to read each one. Results travel as ``marshal`` bytes: they are plain tuples of
str/int/None, and marshal loads them ~4x faster than pickle.

The main process writes tasks without blocking and reads whatever results arrive while a
pipe is full: a worker blocked on a full result pipe and a main process blocked on a full
task pipe would otherwise wait for each other forever (batches of real Wikipedia pages are
megabytes). Worker ``i`` returns its results in the order it received its batches, so the
main process gets the global order back by remembering which worker (or itself) took each
batch (see :func:`wikigym.corpora.build._ordered_results`).
"""

from __future__ import annotations

import contextlib
import marshal
import multiprocessing as mp
import os
import pickle
import select
import struct
import sys
import traceback
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from wikigym.corpora.pagebuild import WireRecord, WireResult, process_batch
from wikigym.errors import BuildError

_OK, _FAILED = b"\x00", b"\x01"
_HEADER = struct.Struct("<Q")  # frame = 8-byte length + payload; length 0 = stop
PIPE_BYTES = 1 << 20  # Linux default pipe-max-size for unprivileged processes


def _grow(fd: int) -> None:
    """Enlarge a pipe's kernel buffer where the platform allows (a speed-up, not needed)."""
    if not sys.platform.startswith("linux"):
        return
    import fcntl

    # pipe-max-size may be lowered by the administrator: the default buffer still works.
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, fcntl.F_SETPIPE_SZ, PIPE_BYTES)


def _read_exact(fd: int, n: int) -> bytes | None:
    """``n`` bytes from a blocking fd; None on end of file before the first byte."""
    parts, got = [], 0
    while got < n:
        chunk = os.read(fd, min(n - got, PIPE_BYTES))
        if not chunk:
            if got == 0:
                return None
            raise EOFError(f"pipe closed after {got} of {n} bytes")
        parts.append(chunk)
        got += len(chunk)
    return b"".join(parts)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _serve(task_fd: int, result_fd: int, inherited: list[int]) -> None:
    """Worker loop: batches in, marshalled results out, until the stop frame or EOF."""
    for fd in inherited:  # the main process's ends: EOF must mean the main process is gone
        os.close(fd)
    while True:
        head = _read_exact(task_fd, _HEADER.size)
        if head is None:
            return
        (size,) = _HEADER.unpack(head)
        if size == 0:
            return
        payload = _read_exact(task_fd, size)
        assert payload is not None
        batch, words, source = pickle.loads(payload)
        try:
            out = _OK + marshal.dumps(process_batch(batch, words, source))
        # Any failure goes to the main process, which raises it with this traceback.
        except BaseException:  # noqa: BLE001
            out = _FAILED + traceback.format_exc().encode("utf-8", "replace")
            _write_all(result_fd, _HEADER.pack(len(out)) + out)
            return
        _write_all(result_fd, _HEADER.pack(len(out)))
        _write_all(result_fd, out)


@dataclass
class _Channel:
    """The main process's side of one worker."""

    proc: Any
    task_fd: int
    result_fd: int
    buffer: bytearray = field(default_factory=bytearray)
    done: deque[bytes] = field(default_factory=deque)
    eof: bool = False


class Workers:
    """``n`` forked parsing processes. Use as a context manager; :meth:`close` joins them.

    Args:
        n: Number of worker processes (>= 1).
    """

    def __init__(self, n: int) -> None:
        if n < 1:
            raise ValueError(f"need at least one worker, got {n}")
        ctx = mp.get_context("fork")
        self._channels: list[_Channel] = []
        try:
            for i in range(n):
                task_r, task_w = os.pipe()
                res_r, res_w = os.pipe()
                _grow(task_w)
                _grow(res_w)
                ours = [task_w, res_r]
                ours += [fd for ch in self._channels for fd in (ch.task_fd, ch.result_fd)]
                proc = ctx.Process(
                    target=_serve,
                    args=(task_r, res_w, ours),
                    name=f"wikigym-build-{i}",
                    daemon=True,
                )
                proc.start()
                os.close(task_r)
                os.close(res_w)  # the worker holds the only writer: its death reads as EOF
                os.set_blocking(task_w, False)
                os.set_blocking(res_r, False)
                self._channels.append(_Channel(proc, task_w, res_r))
        except BaseException:
            self.terminate()
            raise

    @property
    def pids(self) -> list[int]:
        """Process ids of the workers."""
        return [int(ch.proc.pid) for ch in self._channels]

    def __len__(self) -> int:
        return len(self._channels)

    def __enter__(self) -> Workers:
        return self

    def __exit__(self, exc_type: object, exc: object, tb: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.terminate()

    def _drain(self, ch: _Channel) -> None:
        """Read what the worker has sent so far (non-blocking) into complete frames."""
        while not ch.eof:
            try:
                chunk = os.read(ch.result_fd, PIPE_BYTES)
            except BlockingIOError:
                break
            if not chunk:
                ch.eof = True
                break
            ch.buffer += chunk
        while len(ch.buffer) >= _HEADER.size:
            (size,) = _HEADER.unpack_from(ch.buffer)
            end = _HEADER.size + size
            if len(ch.buffer) < end:
                break
            ch.done.append(bytes(ch.buffer[_HEADER.size : end]))
            del ch.buffer[:end]

    def _send(self, worker: int, frame: bytes) -> None:
        ch = self._channels[worker]
        view = memoryview(frame)
        poller = select.poll()
        poller.register(ch.task_fd, select.POLLOUT)
        poller.register(ch.result_fd, select.POLLIN)
        while view:
            try:
                view = view[os.write(ch.task_fd, view) :]
                continue
            except BlockingIOError:
                pass
            except OSError as exc:  # broken pipe: the worker is gone
                raise self._died(worker) from exc
            poller.poll()
            self._drain(ch)  # results waiting to be read may be what blocks the worker
            if ch.eof:
                raise self._died(worker)

    def submit(self, worker: int, batch: list[WireRecord], words: int, source: str) -> None:
        """Send one batch to ``worker`` (its result comes back after its earlier ones)."""
        payload = pickle.dumps((batch, words, source), protocol=pickle.HIGHEST_PROTOCOL)
        self._send(worker, _HEADER.pack(len(payload)) + payload)

    def ready(self, worker: int) -> bool:
        """Whether ``worker``'s oldest outstanding result is complete (or it died)."""
        ch = self._channels[worker]
        if not ch.done:
            self._drain(ch)
        return bool(ch.done) or ch.eof

    def result(self, worker: int) -> list[WireResult]:
        """``worker``'s oldest outstanding result (blocks until it is there).

        Raises:
            BuildError: The worker failed (its traceback is in the message) or died.
        """
        ch = self._channels[worker]
        self._drain(ch)
        while not ch.done:
            if ch.eof:
                raise self._died(worker)
            poller = select.poll()
            poller.register(ch.result_fd, select.POLLIN)
            poller.poll()
            self._drain(ch)
        data = ch.done.popleft()
        if data[:1] == _OK:
            return marshal.loads(memoryview(data)[1:])
        raise BuildError(f"build worker {worker} failed:\n{data[1:].decode('utf-8', 'replace')}")

    def _died(self, worker: int) -> BuildError:
        proc = self._channels[worker].proc
        proc.join(timeout=1)
        return BuildError(
            f"build worker {worker} (pid {proc.pid}) exited unexpectedly with code "
            f"{proc.exitcode}; out of memory? Retry with fewer --threads"
        )

    def close(self) -> None:
        """Stop the workers (all their results must have been read) and wait for them."""
        for i in range(len(self._channels)):
            with contextlib.suppress(BuildError):  # already gone: join reports nothing more
                self._send(i, _HEADER.pack(0))
        for ch in self._channels:
            ch.proc.join()
        self._close_fds()

    def terminate(self) -> None:
        """Kill the workers now (on error or interrupt)."""
        for ch in self._channels:
            if ch.proc.is_alive():
                ch.proc.terminate()
        for ch in self._channels:
            ch.proc.join()
        self._close_fds()

    def _close_fds(self) -> None:
        for ch in self._channels:
            for fd in (ch.task_fd, ch.result_fd):
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._channels = []
