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
