"""Build speed and memory: wikitext MB/s per core, passages/s scaling, peak RSS at 1M passages.

(a) ``build_snapshot`` end to end on the real enwiki excerpt with 1 and 2 threads, in MB/s
    of WIKITEXT (UTF-8 bytes of the pages' uncompressed text, not bz2 bytes) per core,
    against ``mwparserfromhell.parse(text).strip_code()`` alone on the same texts; with a
    breakdown (reader alone, ``parse_wikitext`` alone, ``process_batch`` = parse + passages +
    links + facts) to show where the time goes. The excerpt is small, so each figure is the
    median of ``--repeat`` runs.
(b) passages/s building a generated world with 1 and 2 worker processes (scaling).
(c) peak memory of building a >= 1M-passage world snapshot through the CLI
    (``python -m wikigym corpus build WORLD --threads 2``), sampled with psutil over the
    whole process tree (sum of RSS, and sum of PSS which counts shared pages once).

Usage:
    python benchmarks/bench_build.py                  # all three parts
    python benchmarks/bench_build.py --quick          # small world, 2 repeats, no 1M build
    python benchmarks/bench_build.py --parts a b
"""

from __future__ import annotations

import argparse
import resource
import shutil
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repository: wikigym
sys.path.insert(0, str(Path(__file__).resolve().parent))  # benchmarks: common

import common

from wikigym.corpora import BuildConfig, BuildReport, build_snapshot, open_build_source
from wikigym.corpora.pagebuild import encode_record, process_batch
from wikigym.corpora.records import RawPage
from wikigym.corpora.wikitext import parse_wikitext

EXCERPT = Path("wiki") / "enwiki-excerpt-206pages.xml.bz2"


def median_seconds(func: Callable[[], Any], repeat: int) -> tuple[float, list[float]]:
    """Median and all of ``repeat`` timed calls."""
    runs = [common.timed(func)[0] for _ in range(repeat)]
    return common.median(runs), runs


def _cpu(who: int) -> float:
    usage = resource.getrusage(who)
    return usage.ru_utime + usage.ru_stime


def build_once(
    sources: Sequence[Path], threads: int, fmt: str = "auto"
) -> tuple[BuildReport, dict[str, float]]:
    """One build into a throw-away folder under benchmarks/work; and its CPU seconds.

    CPU is split into the main process (reader, id assignment, Parquet and tantivy writer
    threads, DuckDB resolution) and the worker processes (parsing), from getrusage.
    """
    tmp = Path(tempfile.mkdtemp(prefix="bench-build-", dir=common.WORK))
    try:
        opened = [open_build_source(p, fmt) for p in sources]
        main0, kids0 = _cpu(resource.RUSAGE_SELF), _cpu(resource.RUSAGE_CHILDREN)
        report = build_snapshot(opened, tmp / "snap", BuildConfig(threads=threads), progress=False)
        cpu = {
            "main_cpu_s": _cpu(resource.RUSAGE_SELF) - main0,
            "workers_cpu_s": _cpu(resource.RUSAGE_CHILDREN) - kids0,
        }
        return report, cpu
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def part_a(args: argparse.Namespace) -> dict[str, Any]:
    """Wikitext MB/s: our build end to end vs strip_code alone, plus a breakdown."""
    import mwparserfromhell

    path = args.data / EXCERPT
    pages = [r for r in open_build_source(path).records() if isinstance(r, RawPage)]
    mb = sum(len(p.wikitext.encode("utf-8")) for p in pages) / 1e6
    redirects = sum(1 for p in pages if p.redirect)
    print(f"(a) {path.name}: {len(pages)} pages ({redirects} redirects), {mb:.2f} MB wikitext")
    rows: dict[str, dict[str, Any]] = {}

    def add(name: str, func: Callable[[], Any], cores: int) -> None:
        func()  # warm-up (imports, caches, page cache)
        sec, runs = median_seconds(func, args.repeat)
        rows[name] = {
            "seconds": sec,
            "runs": runs,
            "cores": cores,
            "mb_s": mb / sec,
            "mb_s_per_core": mb / sec / cores,
        }
        print(f"    {name:<44} {mb / sec:7.2f} MB/s  ({mb / sec / cores:.2f} per core)", flush=True)

    add(
        "mwparserfromhell strip_code",
        lambda: [mwparserfromhell.parse(p.wikitext).strip_code() for p in pages],
        1,
    )
    add("reader alone (bz2 + XML)", lambda: list(open_build_source(path).records()), 1)
    add("parse_wikitext alone", lambda: [parse_wikitext(p) for p in pages], 1)
    add(
        "process_batch (parse+passages+links+facts)",
        lambda: process_batch([encode_record(p) for p in pages], 100, path.name),
        1,
    )
    for threads in args.threads:
        add(
            f"build_snapshot end to end, threads={threads}",
            lambda t=threads: build_once([path], t)[0],
            threads,
        )
    ref = rows["mwparserfromhell strip_code"]["mb_s_per_core"]
    ratios = {
        f"build t={t} per core / strip_code": rows[f"build_snapshot end to end, threads={t}"][
            "mb_s_per_core"
        ]
        / ref
        for t in args.threads
    }
    ratios["parse_wikitext / strip_code"] = rows["parse_wikitext alone"]["mb_s"] / ref
    return {
        "source": path.name,
        "pages": len(pages),
        "wikitext_mb": mb,
        "rows": rows,
        "ratios": ratios,
    }


def _spin(n: int) -> float:
    """A pure-Python CPU loop (no I/O, no shared data); returns its own seconds."""
    start = time.perf_counter()
    acc = 0
    for i in range(n):
        acc += i * i % 7
    return time.perf_counter() - start


def machine_ceiling(processes: int, repeat: int, n: int = 20_000_000) -> float:
    """How much faster ``processes`` independent CPU loops finish than one after the other:
    the scaling this machine allows at best (shared caches, clock, neighbours)."""
    import multiprocessing as mp

    ratios = []
    with mp.get_context("fork").Pool(processes) as pool:
        pool.map(_spin, [1000] * processes)  # start the workers
        for _ in range(repeat):
            alone = _spin(n)
            start = time.perf_counter()
            pool.map(_spin, [n] * processes)
            together = time.perf_counter() - start
            ratios.append(processes * alone / together)
    return common.median(ratios)


def part_b(args: argparse.Namespace) -> dict[str, Any]:
    """passages/s of a generated world build with 1 and 2 processes.

    The thread counts are interleaved (1, 2, 1, 2, ...) so drift in the machine's speed
    (a shared VM) falls on both; each figure is the median of ``--repeat-b`` builds. The
    machine's own ceiling for the same process counts is measured alongside.
    """
    world = common.ensure_world(args.world_articles, args.seed)
    print(f"(b) {world.name}")
    runs: dict[int, list[tuple[BuildReport, dict[str, float]]]] = {t: [] for t in args.threads}
    for _ in range(args.repeat_b):
        for threads in args.threads:
            runs[threads].append(build_once([world], threads, "world"))
    rows: dict[int, dict[str, Any]] = {}
    for threads in args.threads:
        reports = [r for r, _ in runs[threads]]
        sec = common.median([r.seconds for r in reports])
        rows[threads] = {
            "seconds": sec,
            "main_cpu_s": common.median([c["main_cpu_s"] for _, c in runs[threads]]),
            "workers_cpu_s": common.median([c["workers_cpu_s"] for _, c in runs[threads]]),
            "runs": [r.seconds for r in reports],
            "passages": reports[0].passages,
            "articles": reports[0].articles,
            "input_mb": reports[0].input_bytes / 1e6,
            "passages_s": reports[0].passages / sec,
        }
        print(
            f"    threads={threads}: {reports[0].passages / sec:,.0f} passages/s ({sec:.1f} s, "
            f"runs {', '.join(f'{r.seconds:.1f}' for r in reports)})",
            flush=True,
        )
    ids = {r.snapshot_id for t in args.threads for r, _ in runs[t]}
    assert len(ids) == 1, f"builds with different thread counts differ: {ids}"
    lo, hi = min(args.threads), max(args.threads)
    scaling = rows[hi]["passages_s"] / rows[lo]["passages_s"]
    ceiling = machine_ceiling(hi, args.repeat_b)
    print(f"    scaling {hi}/{lo} = {scaling:.2f}x; machine ceiling (CPU loop) {ceiling:.2f}x")
    return {
        "world": world.name,
        "rows": rows,
        "scaling": {f"{hi}/{lo}": scaling},
        "machine_ceiling": {f"{hi}/{lo}": ceiling},
    }


def part_c(args: argparse.Namespace) -> dict[str, Any]:
    """Peak memory of a >= 1M-passage build (the cached measured build, or a fresh one)."""
    from wikigym.corpora.manifest import read_manifest

    if args.rss_fresh:
        for stale in (
            common.WORK / f"snap-world-n{args.big_articles}-s{args.seed}",
            common.WORK / f"snap-world-n{args.big_articles}-s{args.seed}.build.json",
        ):
            if stale.is_dir():
                shutil.rmtree(stale)
            elif stale.exists():
                stale.unlink()
    snap, stats = common.ensure_world_snapshot(args.big_articles, args.seed, args.big_threads)
    counts = read_manifest(snap)["counts"]
    out = {k: v for k, v in stats.items() if k != "stdout"}
    out.update(
        snapshot=str(snap.relative_to(common.ROOT)),
        passages=counts["passages"],
        articles=counts["articles"],
        peak_rss_gib=common.gib(stats["peak_rss_bytes"]),
        peak_pss_gib=common.gib(stats["peak_pss_bytes"]),
        passages_s=counts["passages"] / stats["seconds"],
        build_summary=stats.get("stdout", "").strip(),
    )
    print(
        f"(c) {snap.name}: {counts['passages']:,} passages, peak RSS (tree) "
        f"{out['peak_rss_gib']:.2f} GiB, PSS {out['peak_pss_gib']:.2f} GiB, {stats['seconds']:.0f} s"
    )
    return out


def render(res: dict[str, Any]) -> str:
    parts = []
    if "a" in res:
        a = res["a"]
        parts.append(
            f"## (a) wikitext throughput: {a['source']} ({a['pages']} pages, "
            f"{a['wikitext_mb']:.2f} MB of wikitext)\n\n"
            + common.markdown_table(
                ["what", "cores", "median s", "MB/s", "MB/s per core"],
                [
                    [n, r["cores"], r["seconds"], r["mb_s"], r["mb_s_per_core"]]
                    for n, r in a["rows"].items()
                ],
            )
            + "\n\n"
            + common.markdown_table(["ratio", "value"], [[k, v] for k, v in a["ratios"].items()])
        )
    if "b" in res:
        b = res["b"]
        parts.append(
            f"## (b) passages/s on {b['world']}\n\n"
            + common.markdown_table(
                [
                    "worker processes",
                    "articles",
                    "passages",
                    "median s",
                    "passages/s",
                    "main process CPU s",
                    "worker CPU s",
                ],
                [
                    [
                        t,
                        r["articles"],
                        r["passages"],
                        r["seconds"],
                        r["passages_s"],
                        r["main_cpu_s"],
                        r["workers_cpu_s"],
                    ]
                    for t, r in b["rows"].items()
                ],
            )
            + "\n\nScaling: "
            + ", ".join(f"{k} = {v:.2f}x" for k, v in b["scaling"].items())
            + " (runs interleaved; median of each). Same machine, same run, independent "
            + "pure-Python CPU loops: "
            + ", ".join(f"{k} = {v:.2f}x" for k, v in b.get("machine_ceiling", {}).items())
            + " (the most this machine gives; the snapshot ids of all builds are equal)."
        )
    if "c" in res:
        c = res["c"]
        parts.append(
            f"## (c) peak memory of a {c['passages']:,}-passage build (`{c['snapshot']}`)\n\n"
            f"Command: `{c['command']}` (RSS sampled every 0.5 s, PSS every 2 s, over the process tree; "
            f"{c['samples']} samples, up to {c['peak_processes']} processes)\n\n"
            + common.markdown_table(
                [
                    "articles",
                    "passages",
                    "seconds",
                    "passages/s",
                    "peak RSS sum GiB",
                    "peak PSS sum GiB",
                ],
                [
                    [
                        c["articles"],
                        c["passages"],
                        c["seconds"],
                        c["passages_s"],
                        c["peak_rss_gib"],
                        c["peak_pss_gib"],
                    ]
                ],
            )
        )
    return "\n\n".join(parts)


def targets(res: dict[str, Any]) -> list[str]:
    lines = []
    if "a" in res:
        for k, v in res["a"]["ratios"].items():
            if k.startswith("build"):
                lines.append(f"- (a) {k} = {v:.2f} (target >= 1): {'MET' if v >= 1 else 'MISSED'}")
    if "b" in res:
        for k, v in res["b"]["scaling"].items():
            lines.append(
                f"- (b) passages/s scaling {k} = {v:.2f}x (target >= 1.7x): {'MET' if v >= 1.7 else 'MISSED'}"
            )
    if "c" in res:
        g = res["c"]["peak_rss_gib"]
        p = res["c"]["peak_pss_gib"]
        lines.append(
            f"- (c) peak RSS (tree sum) {g:.2f} GiB, PSS {p:.2f} GiB (target < 4 GB): "
            f"{'MET' if g * 2**30 < 4e9 else 'MISSED'}"
        )
    return lines


def plot(res: dict[str, Any], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = [p for p in ("a", "b") if p in res]
    if not panels:
        return
    fig, axes = plt.subplots(1, len(panels), figsize=(6 * len(panels), 3.8), squeeze=False)
    for ax, part in zip(axes[0], panels, strict=True):
        if part == "a":
            rows = res["a"]["rows"]
            ax.barh(list(rows), [r["mb_s_per_core"] for r in rows.values()], color="tab:green")
            ax.set_xlabel("MB of wikitext / s / core")
            ax.set_title(f"(a) {res['a']['source']}")
            ax.tick_params(axis="y", labelsize=7)
        else:
            rows = res["b"]["rows"]
            ax.bar(
                [str(t) for t in rows], [r["passages_s"] for r in rows.values()], color="tab:purple"
            )
            ax.set_xlabel("worker processes")
            ax.set_ylabel("passages / s")
            ax.set_title(f"(b) {res['b']['world']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(
        description="Build speed (wikitext MB/s/core, passages/s scaling) and peak memory at 1M passages."
    )
    parser.add_argument("--parts", nargs="+", choices=["a", "b", "c"], default=["a", "b", "c"])
    parser.add_argument("--data", type=Path, default=common.shared_data(), help="shared data")
    parser.add_argument("--repeat", type=int, default=5, help="runs per figure in (a), median")
    parser.add_argument("--repeat-b", type=int, default=3, help="builds per thread count in (b)")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--world-articles", type=int, default=20_000, help="world size for (b)")
    parser.add_argument(
        "--big-articles", type=int, default=230_000, help="world for (c): >= 1M passages"
    )
    parser.add_argument("--big-threads", type=int, default=2, help="build threads for (c)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument(
        "--rss-fresh", action="store_true", help="(c): rebuild even if a measured build is cached"
    )
    parser.add_argument(
        "--quick", action="store_true", help="2 repeats, 3k-article world, skip (c)"
    )
    parser.add_argument("--name", default=None, help="result file name (default bench_build)")
    args = parser.parse_args()
    if args.quick:
        args.repeat, args.repeat_b = 2, 1
        args.world_articles = min(args.world_articles, 3000)
        args.parts = [p for p in args.parts if p != "c"]
    name = args.name or ("bench_build_quick" if args.quick else "bench_build")
    common.WORK.mkdir(parents=True, exist_ok=True)

    res: dict[str, Any] = {}
    started = time.perf_counter()
    for part, func in (("a", part_a), ("b", part_b), ("c", part_c)):
        if part in args.parts:
            res[part] = func(args)
    body = render(res) + "\n\n## Targets\n\n" + "\n".join(targets(res))
    png = common.RESULTS / f"{name}.png"
    common.RESULTS.mkdir(parents=True, exist_ok=True)
    plot(res, png)
    if png.exists():
        body += f"\n\nPlot: `{png.name}`."
    data = {"args": {**vars(args), "data": str(args.data)}, "results": res, "targets": targets(res)}
    data["wall_seconds"] = time.perf_counter() - started
    md = common.write_results(name, data, body)
    print("\n" + body)
    print(f"\nwrote {md}, {md.with_suffix('.json')}")


if __name__ == "__main__":
    main()
