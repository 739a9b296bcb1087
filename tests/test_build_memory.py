"""What keeps a build's memory from growing with the corpus: glibc's mmap threshold pinned
(each index run's 1 MB pages are mapped and unmapped, not left in the heaps)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

import wikigym.corpora.build as build_module
from wikigym.corpora import BuildConfig, build_snapshot, open_build_source

# In a fresh process: free one mapped 1 MB block (as the end of an index run does), then
# take eight more (the next run's pages), and print how many of them glibc mapped.
_PROBE = """
import ctypes, sys
from wikigym.corpora.memory import keep_large_blocks_mapped
libc = ctypes.CDLL("libc.so.6")
if not hasattr(libc, "mallinfo2"):
    print("no-mallinfo2"); sys.exit(0)
class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in (
        "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks",
        "fordblks", "keepcost")]
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.malloc.argtypes = [ctypes.c_size_t]
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "pinned":
    assert keep_large_blocks_mapped()
libc.free(libc.malloc(1 << 20))
before = libc.mallinfo2().hblks
blocks = [libc.malloc(1 << 20) for _ in range(8)]
print(libc.mallinfo2().hblks - before)
for block in blocks:
    libc.free(block)
"""


def _mapped_blocks(mode: str) -> int:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True
    ).stdout.strip()
    if out == "no-mallinfo2":
        pytest.skip("not glibc >= 2.33 (no mallinfo2)")
    return int(out)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's allocator")
def test_large_blocks_stay_mapped_after_one_is_freed() -> None:
    """Unpinned, glibc raises its threshold when the first 1 MB block is freed and serves
    the next ones from its heaps (where a trim cannot give them all back: the build kept
    ~30 MB per index run); pinned, every one is mapped, and unmapped when freed."""
    assert _mapped_blocks("default") == 0  # glibc's dynamic threshold, what the build had
    assert _mapped_blocks("pinned") == 8


def test_build_pins_the_threshold(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The build pins the threshold before its workers fork and its index runs start."""
    calls: list[bool] = []
    monkeypatch.setattr(build_module, "keep_large_blocks_mapped", lambda: calls.append(True))
    dump = tmp_path / "dump.xml"
    text = "Alpha is a page with enough prose for the build to keep it as an article. " * 3
    dump.write_text(
        '<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.10/"><page><title>Alpha'
        "</title><ns>0</ns><id>1</id><revision><timestamp>2020-01-01T00:00:00Z</timestamp>"
        f"<text>{text}</text></revision></page></mediawiki>",
        encoding="utf-8",
    )
    build_snapshot([open_build_source(dump)], tmp_path / "s", BuildConfig(), progress=False)
    assert calls == [True]


# In a fresh process: index runs of synthetic passages; print the process's own memory
# (RssAnon, MB) after each run, once the run's writer is gone and freed memory given back.
_RUNS = """
import random, sys
from pathlib import Path
from wikigym.corpora import index
from wikigym.corpora.index import IndexConfig, PassageIndexWriter
from wikigym.corpora.memory import keep_large_blocks_mapped

def anon_mb():
    with open("/proc/self/status") as f:
        return next(int(l.split()[1]) // 1024 for l in f if l.startswith("RssAnon:"))

if sys.argv[2] == "pinned":
    keep_large_blocks_mapped()
after = []
close_run = PassageIndexWriter._close_run
def measured(self):
    close_run(self)
    after.append(anon_mb())
PassageIndexWriter._close_run = measured
runs, docs = int(sys.argv[3]), int(sys.argv[4])
rng = random.Random(0)
words = [f"w{i}x{rng.randrange(10**6)}" for i in range(50_000)]
texts = [" ".join(rng.choices(words, k=100)) for _ in range(4099)]
writer = PassageIndexWriter(
    Path(sys.argv[1]), IndexConfig().with_language("en"), segment_docs=docs
)
for pid in range(runs * docs):
    writer.add(pid, pid // 4, f"Title {pid // 4}", texts[pid % 4099])
writer.close()
print(" ".join(map(str, after)))
"""


def _run_memory(tmp_path: Path, mode: str, runs: int, docs: int) -> list[int]:
    out = subprocess.run(
        [sys.executable, "-c", _RUNS, str(tmp_path / mode), mode, str(runs), str(docs)],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [int(x) for x in out]


@pytest.mark.slow  # ~1 min: 8 index runs of 2^16 passages
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc and glibc")
def test_index_runs_give_their_memory_back(tmp_path: Path) -> None:
    """The memory left after each index run (writer gone, freed memory given back) stays
    flat from the second run on: before the threshold was pinned it grew ~30 MB per 2^19-
    passage run of a build (135 -> 275 MB over 7 runs)."""
    after = _run_memory(tmp_path, "pinned", 8, 1 << 16)
    assert len(after) == 8
    assert max(after[2:]) - after[1] < 12, after
