"""One example (or a few) per command, shown at the end of its ``--help``.

Kept in one table so that a test can parse every example with the real parser (an example
that stops working fails the suite) and check that no command lacks one.
"""

from __future__ import annotations

EXAMPLES: dict[str, tuple[str, ...]] = {
    "corpus build": (
        "wikigym corpus build enwiki-latest-pages-articles1.xml.bz2 --out snap/enwiki",
        "wikigym corpus build psgs_w100.tsv --format dpr-tsv --out snap/wiki18 --threads 8",
        "wikigym corpus build synthetic --articles 20000 --seed 1 --out snap/world",
        "wikigym corpus build bgwiki-latest-pages-articles.xml.bz2 --facts "
        "latest-all.json.bz2 --out snap/bgwiki",
    ),
    "corpus generate": ("wikigym corpus generate --articles 3000 --seed 0 --out world-dump",),
    "corpus info": ("wikigym corpus info snap/enwiki",),
    "corpus verify": ("wikigym corpus verify snap/enwiki",),
    "corpus search": ("wikigym corpus search snap/enwiki 'capital of France' -k 5 --json",),
    "corpus sql": (
        'wikigym corpus sql snap/enwiki "SELECT relation, count(*) AS n FROM facts '
        'GROUP BY relation ORDER BY n DESC LIMIT 10"',
        'wikigym corpus sql snap/enwiki "SELECT source, count(*) AS n, count(passage_id) AS '
        'stated FROM facts WHERE typed AND restates IS NULL GROUP BY source"',
    ),
    "tasks import": (
        "wikigym corpus build hotpot_dev.json --format hotpotqa --out snap/hotpot",
        "wikigym tasks import hotpotqa hotpot_dev.json --corpus snap/hotpot --out hotpot.jsonl",
    ),
    "tasks info": ("wikigym tasks info hotpot.jsonl",),
    "synth generate": (
        "wikigym synth generate --difficulty phd --n 100 --out phd.jsonl",
        "wikigym synth generate --difficulty mixed --n 400 --corpus snap/enwiki --out t.jsonl",
        "wikigym synth generate --difficulty easy --n 5000 --up-to --corpus snap/enwiki "
        "--out easy.jsonl",
    ),
    "synth verify": ("wikigym synth verify t.jsonl --corpus snap/enwiki",),
    "synth stats": ("wikigym synth stats t.jsonl",),
    "synth calibrate": (
        "wikigym synth calibrate t.jsonl --agent heuristic --k 8 --out calibrated.jsonl",
    ),
    "synth filter": (
        "wikigym synth filter calibrated.jsonl --min-pass 0.1 --max-pass 0.8 --out band.jsonl",
    ),
    "eval": (
        "wikigym eval --agent heuristic --report eval-report",
        "wikigym eval --agent openai:http://localhost:8000/v1 --model qwen --tasks t.jsonl "
        "--corpus snap/enwiki --report run-a",
        "wikigym eval --retrieval --tasks hotpot.jsonl --corpus snap/hotpot --k 1,5,10 "
        "--report retrieval",
    ),
    "view": (
        "wikigym view eval-report",
        "wikigym view run-a run-b --out a-vs-b.html",
    ),
    "replay": ("wikigym replay eval-report/trajectories/000000-synth-easy-3e98d0e748c6.jsonl",),
    "train grpo": (
        "wikigym train grpo --preset cpu-tiny --output-dir runs/tiny",
        "wikigym train grpo --preset single-gpu --model Qwen/Qwen3-0.6B --tasks t.jsonl "
        "--corpus snap/enwiki --output-dir runs/qwen --overrides '{\"learning_rate\": 1e-6}'",
    ),
    "train sft": ("wikigym train sft --data sft-data --output-dir runs/sft --cpu",),
    "export sft": ("wikigym export sft --tasks t.jsonl --corpus snap/enwiki --out sft-data",),
    "serve": ("wikigym serve --corpus snap/enwiki --tasks t.jsonl --port 8000",),
    "mcp": ("wikigym mcp --corpus snap/enwiki --tasks t.jsonl",),
    "demo": ("wikigym demo --report wikigym-demo",),
}
