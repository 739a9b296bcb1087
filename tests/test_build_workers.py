"""The build's worker processes: order, failures and deaths become clear errors."""

from __future__ import annotations

import os
import signal

import pytest

from wikigym.corpora.pagebuild import encode_record, process_batch
from wikigym.corpora.records import RawPage
from wikigym.corpora.workers import Workers
from wikigym.errors import BuildError


def _batch(start: int, n: int) -> list[tuple[object, ...]]:
    return [
        encode_record(RawPage(title=f"Page {i}", wikitext=f"Page {i} is about the number {i}."))
        for i in range(start, start + n)
    ]


def test_results_in_submission_order_per_worker() -> None:
    batches = [_batch(10 * b, 10) for b in range(12)]
    with Workers(2) as workers:
        for b, batch in enumerate(batches):
            workers.submit(b % 2, batch, 100, "test")
        got = [workers.result(b % 2) for b in range(len(batches))]
    assert got == [process_batch(batch, 100, "test") for batch in batches]


def test_worker_failure_raises_with_its_traceback() -> None:
    with Workers(1) as workers:
        workers.submit(0, None, 100, "test")  # type: ignore[arg-type]  # not a batch
        with pytest.raises(BuildError, match=r"(?s)build worker 0 failed:.*TypeError"):
            workers.result(0)


def test_worker_death_raises() -> None:
    workers = Workers(1)
    try:
        os.kill(workers.pids[0], signal.SIGKILL)
        with pytest.raises(BuildError, match="exited unexpectedly with code -9"):
            workers.result(0)
    finally:
        workers.terminate()


def test_needs_a_worker() -> None:
    with pytest.raises(ValueError, match="at least one worker"):
        Workers(0)


def test_megabyte_batches_do_not_deadlock() -> None:
    """Task and result pipes both full (real dump pages are big): the main process must read
    results while it waits to send, or the two processes wait for each other forever."""
    text = "Alpha beta gamma delta. " * 20_000  # ~480 KB of wikitext per page
    big = [
        [encode_record(RawPage(title=f"Big {b} {i}", wikitext=text)) for i in range(6)]
        for b in range(4)
    ]
    with Workers(1) as workers:
        for batch in big:
            workers.submit(0, batch, 100, "test")  # ~3 MB each, nothing read yet
        got = [workers.result(0) for _ in big]
    assert [len(r) for r in got] == [6, 6, 6, 6]
    assert got[3] == process_batch(big[3], 100, "test")


def test_batches_cut_by_pages_or_wikitext_size() -> None:
    from wikigym.corpora.build import _batches

    small = [RawPage(title=f"S{i}", wikitext="x" * 10) for i in range(10)]
    assert [len(b) for b in _batches(small, 4, 1_000)] == [4, 4, 2]
    big = [RawPage(title=f"B{i}", wikitext="x" * 600) for i in range(5)]
    assert [len(b) for b in _batches(big, 64, 1_000)] == [2, 2, 1]  # cut at >= 1,000 chars
