"""Trained only on the generated world, tested on real Wikipedia (issue 38).

The source text's claim (Tongyi): reinforcement learning in a clean synthetic environment
carries over to the real world, because the model learns how to search, not particular
results. This measures it in miniature with the from-scratch model of
``bench_learning_search.py`` (no pretrained weights can be reached here): the same model, SFT
and GRPO recipe, trained only on easy tasks of a generated world, evaluated through the real env
(real BM25 search, the env's binary reward, greedy decoding, the same 4-step budget and
Search-R1 tags) on:

- ``enwiki-easy``: the easy tasks ``synth generate --up-to`` makes from the shared real
  enwiki excerpt (206 pages built into a snapshot): real prose, real names, the generator's
  question templates;
- ``hotpotqa``: the shared 300 HotpotQA dev questions in their closed world
  (``corpus build --format hotpotqa`` + ``tasks import hotpotqa``): real prose and questions
  written by people;
- ``world-seed<N>``: the reference, easy tasks of a generated world of another seed (the
  held-out set of ``bench_learning_search.py``): in-distribution transfer.

Every eval set is built at run time from the current code (snapshot build, task synthesis,
import) and recorded by snapshot id, taskset id, generator and seed, so the experiment reruns
after synth changes and says what it used.

The tokenizer (``--tokenizer``): ``mixed`` (default) is trained on the train world's chats and
on real English Wikipedia text, a quarter of its characters (``--english-share``): the shared
wikitext articles and wiki-18 passages, built into a snapshot, less every page whose title is a
page of an eval set; ``world`` is ``bench_learning_search.py``'s (the train world's chats
alone: its SFT and GRPO are that benchmark's, bit for bit). ``--stage vocab`` writes
``transfer_vocabulary.json``: the vocabulary figures below for tokenizers of several English
shares, without training (what chose the default).

Beside success (Wilson 95% intervals), tool-call validity and mean steps, the JSON says why:
per set, the ceiling of the learnt skill (the share of tasks whose answer the question's own
results show, as the SFT chats were made), the vocabulary (tokens per word, the share of
question and answer tokens the SFT data never held), and per stage a reading of every episode
(question copied into the search, the answer shown, answered right when shown, F1, by answer
type). ``transfer_episodes.jsonl`` keeps the first episodes of each set and stage to read.

Stages (each well inside 90 minutes on 2 cores; ``--stage all`` runs both in one process):

    python benchmarks/bench_transfer.py --threads 1 --stage sft    # sets, SFT, untrained + SFT evals
    python benchmarks/bench_transfer.py --threads 1 --stage grpo   # GRPO from that SFT, its evals
    python benchmarks/bench_transfer.py --smoke                    # pipeline check (minutes)
    python benchmarks/bench_transfer.py --stage vocab              # tokenizer survey (minutes)

``--stage grpo`` starts from the SFT checkpoint ``--stage sft`` left in the work folder only if
it was made with the same settings and the eval sets are the same (else one line says to rerun
``--stage sft``). Deterministic given the seeds and ``--threads``.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bench_learning_search as lsb
from common import environment, shared_data

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results"
WORK = ROOT / "benchmarks" / "work" / "transfer"
STAGE_SFT = "stage_sft.json"
STAGES = ("untrained", "sft", "grpo")
ENWIKI = "wiki/enwiki-excerpt-206pages.xml.bz2"
HOTPOTQA = "qa/hotpotqa-distractor-300.jsonl"
# Real English text for the mixed tokenizer: neither eval set's source (their pages are
# dropped by title as well).
ENGLISH = ("wiki/wikitext", "wiki/dpr-wiki18-1000passages.jsonl")
EPISODES_KEPT = 8  # per set and stage, in transfer_episodes.jsonl
SEARCH_TAG = re.compile(r"<search>(.*?)(?:</search>|$)", re.DOTALL)
OBSERVATION_CHARS = 600  # of each kept observation


@dataclass(frozen=True)
class EvalSet:
    """One eval set: its env, how many tasks the untrained model plays, and what it is."""

    name: str
    spec: Any
    untrained_limit: int | None
    limit: int | None
    record: dict[str, Any]
    real: bool = True


@dataclass(frozen=True)
class Caps:
    """Eval sizes (the train sizes are ``bench_learning_search``'s)."""

    enwiki_tasks: int  # a cap: the excerpt yields what it yields (partial)
    hotpotqa: int | None  # questions evaluated (None: all 300)


FULL = Caps(enwiki_tasks=5000, hotpotqa=None)
SMOKE = Caps(enwiki_tasks=12, hotpotqa=12)


def taskset_record(taskset: Any, snapshot: Any) -> dict[str, Any]:
    """What identifies an eval set's tasks and corpus."""
    gens = sorted({t.generator for t in taskset})
    return {
        "snapshot_id": snapshot.snapshot_id,
        "taskset_id": taskset.taskset_id,
        "taskset_name": taskset.name,
        "tasks": len(taskset),
        "generator": gens[0] if len(gens) == 1 else gens,
        "articles": snapshot.num_articles,
    }


def build_eval_sets(
    work: Path, folder: Path, sizes: lsb.Sizes, caps: Caps, args: argparse.Namespace
) -> list:
    """The three eval sets, built from the current code: the real ones afresh every run in
    ``folder`` (one per run's models: runs side by side do not rebuild each other's), the
    reference world cached in ``work`` as ``bench_learning_search`` caches it."""
    from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source
    from wikigym.synth.generate import SynthConfig, generate_tasks
    from wikigym.tasks.importers import import_hotpotqa

    data = shared_data()
    folder.mkdir(parents=True, exist_ok=True)
    sets: list[EvalSet] = []

    snap_dir = folder / "enwiki"
    build_snapshot(
        [open_build_source(data / ENWIKI)], snap_dir, BuildConfig(), overwrite=True, progress=False
    )
    snap = Snapshot.open(snap_dir)
    config = SynthConfig(difficulty=lsb.LEVEL, n=caps.enwiki_tasks, seed=args.seed, partial=True)
    tasks = generate_tasks(snap, config)
    tasks_file = folder / "enwiki-easy.jsonl"
    tasks.save(tasks_file)
    sets.append(
        EvalSet(
            "enwiki-easy",
            lsb.env_spec(snap_dir, tasks_file, sizes),
            None,
            None,
            {
                "source": f"shared/data/{ENWIKI}",
                "made_by": f"synth generate --difficulty {lsb.LEVEL} --n {caps.enwiki_tasks} "
                f"--up-to --seed {args.seed}",
                "task_seed": args.seed,
            }
            | taskset_record(tasks, snap),
        )
    )

    snap_dir = folder / "hotpotqa"
    build_snapshot(
        [open_build_source(data / HOTPOTQA, "hotpotqa")],
        snap_dir,
        BuildConfig(),
        overwrite=True,
        progress=False,
    )
    snap = Snapshot.open(snap_dir)
    tasks = import_hotpotqa(data / HOTPOTQA, snap)
    tasks_file = folder / "hotpotqa.jsonl"
    tasks.save(tasks_file)
    sets.append(
        EvalSet(
            "hotpotqa",
            lsb.env_spec(snap_dir, tasks_file, sizes),
            caps.hotpotqa,
            caps.hotpotqa,
            {
                "source": f"shared/data/{HOTPOTQA}",
                "made_by": "corpus build --format hotpotqa; tasks import hotpotqa --corpus",
            }
            | taskset_record(tasks, snap),
        )
    )

    world = lsb.build_world(
        args.reference_world_seed,
        sizes.heldout_articles,
        work / f"world-{args.reference_world_seed}-n{sizes.heldout_articles}",
        sizes.heldout,
        args.seed + 1,
    )
    spec = lsb.spec_for(world, sizes.heldout, args.seed + 1, sizes)
    sets.append(
        EvalSet(
            f"world-seed{args.reference_world_seed}",
            spec,
            min(sizes.heldout, sizes.heldout_untrained),
            None,
            {
                "source": f"generated world, seed {args.reference_world_seed}, "
                f"{sizes.heldout_articles} articles (bench_learning_search's held-out set)",
                "world_seed": args.reference_world_seed,
                "task_seed": args.seed + 1,
            }
            | taskset_record(spec.taskset(), Snapshot.open(world / "snapshot")),
            real=False,
        )
    )
    return sets


def english_texts(folder: Path, sets: list[EvalSet]) -> tuple[tuple[str, ...], dict[str, Any]]:
    """Real English passages for the mixed tokenizer (see the module docstring), in passage
    order, and what they are (their snapshot is built in ``folder``)."""
    from wikigym.corpora import BuildConfig, Snapshot, build_snapshot, open_build_source

    data = shared_data()
    snap_dir = folder / "english"
    sources = [open_build_source(data / p) for p in ENGLISH]
    build_snapshot(sources, snap_dir, BuildConfig(), overwrite=True, progress=False)
    snap = Snapshot.open(snap_dir)
    eval_titles: set[str] = set()
    for s in sets:
        if not s.real:  # the reference world's names are fictional
            continue
        titles = Snapshot.open(Path(s.spec.corpus)).sql("SELECT title FROM articles")
        eval_titles |= {str(t).casefold() for t in titles.column("title").to_pylist()}
    rows = snap.sql(
        "SELECT a.title, p.text FROM passages p JOIN articles a USING (doc_id) "
        "ORDER BY p.passage_id"
    ).to_pylist()
    kept = [str(r["text"]) for r in rows if str(r["title"]).casefold() not in eval_titles]
    dropped = sorted({str(r["title"]) for r in rows if str(r["title"]).casefold() in eval_titles})
    return tuple(kept), {
        "sources": [f"shared/data/{p}" for p in ENGLISH],
        "snapshot_id": snap.snapshot_id,
        "passages": len(kept),
        "chars": sum(len(t) for t in kept),
        "dropped_eval_titles": dropped,
    }


def tokenizer_texts(
    chat_texts: tuple[str, ...], english: tuple[str, ...], share: float
) -> tuple[tuple[str, ...], int]:
    """The chats and the English text repeated to ``share`` of the characters (BPE counts
    pairs, so a repeat weighs the text as a larger corpus would), and the repeat count."""
    chat_chars = sum(len(t) for t in chat_texts)
    english_chars = sum(len(t) for t in english) or 1
    repeat = max(1, round(share / (1 - share) * chat_chars / english_chars))
    return chat_texts + english * repeat, repeat


def _shown_token(tok: Any, token_id: int) -> str:
    """A token as text, or as its byte-level form when it is part of a character."""
    text = str(tok.decode([token_id]))
    return text if "\ufffd" not in text else str(tok.convert_ids_to_tokens(token_id))


def vocabulary(
    tok: Any, chat_texts: tuple[str, ...], sets: list[EvalSet], *, examples: int = 0
) -> dict[str, Any]:
    """Per eval set: tokens per word of its questions and answers, and the share of their
    tokens that the SFT chats never held (their embeddings were trained only to be unlikely);
    with ``examples``, that many of those tokens, the most frequent first."""
    seen: set[int] = set()
    lengths: list[int] = []
    for start in range(0, len(chat_texts), 1024):
        batch = tok(list(chat_texts[start : start + 1024]), add_special_tokens=False)["input_ids"]
        for ids in batch:
            seen.update(ids)
            lengths.append(len(ids))
    lengths.sort()
    out: dict[str, Any] = {
        "tokens_in_sft_data": len(seen),
        "vocab": len(tok),
        # How long the SFT chats' texts are (the template adds ~10 tokens): an observation
        # longer than these is a position the model never trained at.
        "sft_chat_text_tokens": {
            "median": lengths[len(lengths) // 2] if lengths else 0,
            "p99": lengths[int(len(lengths) * 0.99)] if lengths else 0,
            "max": lengths[-1] if lengths else 0,
        },
    }
    for s in sets:
        tasks = list(s.spec.taskset())[: s.limit]
        row: dict[str, Any] = {}
        for field, texts in (
            ("question", [t.question for t in tasks]),
            ("answer", [t.answer for t in tasks]),
        ):
            ids = tok([" " + x for x in texts], add_special_tokens=False)["input_ids"]
            n_tok = sum(len(i) for i in ids)
            words = sum(len(x.split()) for x in texts) or 1
            missing = Counter(t for i in ids for t in i if t not in seen)
            unseen = sum(missing.values())
            row[field] = {
                "tokens_per_word": round(n_tok / words, 3),
                "unseen_token_share": round(unseen / n_tok, 4) if n_tok else 0.0,
                "texts_with_unseen_token": round(
                    sum(any(t not in seen for t in i) for i in ids) / len(ids), 4
                )
                if ids
                else 0.0,
            }
            if examples:
                row[field]["unseen_examples"] = {
                    _shown_token(tok, t): c
                    for t, c in sorted(missing.items(), key=lambda kv: (-kv[1], kv[0]))[:examples]
                }
        out[s.name] = row
    return out


SURVEY_SHARES = (0.0, 0.1, 0.25, 0.5)  # 0.0: the chats alone (the world tokenizer)


def vocabulary_survey(
    folder: Path, train: Any, sets: list[EvalSet], vocab_size: int
) -> dict[str, Any]:
    """:func:`vocabulary` for tokenizers trained with each of :data:`SURVEY_SHARES` of real
    English (no model is trained)."""
    from wikigym.trainers.tag_chats import tag_chats
    from wikigym.trainers.tiny import TokenizerText, build_tokenizer

    texts = lsb.chat_texts(tag_chats(train))
    english, _ = english_texts(folder, sets)
    out: dict[str, Any] = {}
    for share in SURVEY_SHARES:
        tok_texts = texts if share == 0.0 else tokenizer_texts(texts, english, share)[0]
        tok = build_tokenizer(
            vocab_size,
            TokenizerText(texts=tok_texts, space_words=True, prefix_preserving=True),
        )
        out[str(share)] = vocabulary(tok, texts, sets, examples=12)
    return out


def ceiling(s: EvalSet) -> dict[str, Any]:
    """The skill's ceiling on a set: the share of tasks whose answer the question's own
    results show (as the SFT chats were made), and with the entity's search after it."""
    from wikigym.trainers.tag_chats import tag_chats

    chats = tag_chats(s.spec)
    n = len(s.spec.taskset())
    one = sum(c["searches"] == 1 for c in chats)
    return {
        "tasks": n,
        "question_search_shows_answer": round(one / n, 4) if n else 0.0,
        "with_entity_search": round(len(chats) / n, 4) if n else 0.0,
    }


def read_episodes(s: EvalSet, episodes: list[dict[str, Any]], tok: Any) -> dict[str, Any]:
    """What the episodes of one stage on one set did (see the module docstring)."""
    from wikigym.envs.metrics import best_match
    from wikigym.trainers.tag_chats import shown_in

    tasks = {t.task_id: t for t in s.spec.taskset()}
    n = len(episodes) or 1
    counts: Counter[str] = Counter()
    by_type: dict[str, list[int]] = {}
    f1 = 0.0
    obs_tokens: list[int] = []
    for e in episodes:
        task = tasks[e["task_id"]]
        golds = [task.answer, *task.aliases]
        turns = e["turns"]
        observations = [m["content"] for m in turns if m["role"] == "tool"]
        success = e["components"].get("outcome", e["reward"]) > 0
        shown = any(shown_in(g, o) for g in golds for o in observations)
        # The first turn searched if the env ran a search (its observation says so); the query
        # is the tag's text (a turn cut at the token cap has no closing tag).
        searched = bool(observations) and observations[0].startswith("search(")
        query = SEARCH_TAG.search(turns[0]["content"]) if searched else None
        counts["searched"] += searched
        counts["question_copied"] += query is not None and query.group(1).strip() == task.question
        counts["answered"] += e["answer"] is not None
        # An answer copied from what the episode read (right or wrong), not written from memory.
        counts["answer_from_results"] += e["answer"] is not None and any(
            e["answer"].strip() and shown_in(e["answer"].strip(), o) for o in observations
        )
        counts["answer_shown"] += shown
        counts["right_when_shown"] += shown and success
        counts["success"] += success
        if e["answer"] is not None:
            f1 += best_match(e["answer"], golds)[1]
        if searched:
            obs_tokens.append(len(tok(turns[1]["content"], add_special_tokens=False)["input_ids"]))
        by_type.setdefault(task.answer_type, []).append(int(success))
    return {
        "episodes": len(episodes),
        "first_turn_searches": round(counts["searched"] / n, 4),
        "question_copied_exactly": round(counts["question_copied"] / n, 4),
        "answered": round(counts["answered"] / n, 4),
        "answer_from_results": round(counts["answer_from_results"] / counts["answered"], 4)
        if counts["answered"]
        else 0.0,
        "answer_shown": round(counts["answer_shown"] / n, 4),
        "right_when_shown": round(counts["right_when_shown"] / counts["answer_shown"], 4)
        if counts["answer_shown"]
        else 0.0,
        "mean_f1": round(f1 / n, 4),
        "first_observation_tokens": round(sum(obs_tokens) / len(obs_tokens), 1)
        if obs_tokens
        else 0.0,
        "success_by_answer_type": {
            k: {"n": len(v), "success": round(sum(v) / len(v), 4)}
            for k, v in sorted(by_type.items())
        },
    }


def kept_episodes(
    name: str, stage: str, s: EvalSet, episodes: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The first episodes of a set and stage, observations shortened, to read."""
    tasks = {t.task_id: t for t in s.spec.taskset()}
    out = []
    for e in episodes[:EPISODES_KEPT]:
        task = tasks[e["task_id"]]
        out.append(
            {
                "set": name,
                "stage": stage,
                "task_id": e["task_id"],
                "question": task.question,
                "gold": task.answer,
                "answer": e["answer"],
                "success": e["components"].get("outcome", e["reward"]) > 0,
                "turns": [
                    {
                        "role": m["role"],
                        "content": m["content"]
                        if m["role"] == "assistant"
                        else m["content"][:OBSERVATION_CHARS],
                    }
                    for m in e["turns"]
                ],
            }
        )
    return out


def stage_row(m: dict[str, Any]) -> dict[str, Any]:
    """A stage's measurement in the result's shape."""
    return {
        "success": m["success"],
        "ci95": [m["ci_low"], m["ci_high"]],
        "n": m["n"],
        "tool_call_validity": m["tool_call_validity"],
        "tool_calls_per_episode": m["tool_calls_per_episode"],
        "mean_steps": m["mean_steps"],
        "reward_components": m["reward_components"],
    }


def plot(path: Path, result: dict[str, Any]) -> None:
    """Success per set and stage with 95% intervals, the skill's ceiling on each set, and
    what the trained policy did there."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    names = list(result["eval"])
    fig, (a, b) = plt.subplots(1, 2, figsize=(12, 4.5))
    width = 0.26
    for j, stage in enumerate(STAGES):
        xs, ys, lo, hi = [], [], [], []
        for i, name in enumerate(names):
            row = result["eval"][name].get(stage)
            if row is None:
                continue
            xs.append(i + (j - 1) * width)
            ys.append(row["success"])
            lo.append(row["success"] - row["ci95"][0])
            hi.append(row["ci95"][1] - row["success"])
        a.bar(xs, ys, width, yerr=[lo, hi], capsize=4, label=stage)
    for i, name in enumerate(names):
        top = result["sets"][name]["ceiling"]["question_search_shows_answer"]
        a.hlines(top, i - 1.5 * width, i + 1.5 * width, colors="k", linestyles="dashed")
    a.plot([], [], "k--", label="answer in the question's results")
    a.set_xticks(range(len(names)), names)
    a.set_ylabel("success (95% CI)")
    a.set_ylim(0, 1)
    a.set_title("trained on the generated world only")
    a.legend(fontsize=8)
    stage = next(
        (st for st in ("grpo", "sft") if st in result["diagnosis"].get(names[0], {})), None
    )
    keys = ("question_copied_exactly", "answer_shown", "right_when_shown", "mean_f1")
    if stage is not None:
        for j, key in enumerate(keys):
            b.bar(
                [i + (j - 1.5) * 0.2 for i in range(len(names))],
                [result["diagnosis"][n][stage][key] for n in names],
                0.2,
                label=key.replace("_", " "),
            )
        b.set_xticks(range(len(names)), names)
        b.set_ylim(0, 1)
        b.set_title(f"what the {stage} policy did (every episode)")
        b.legend(fontsize=8)
    fig.suptitle(path.stem)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--smoke", action="store_true", help="tiny sizes: a pipeline check")
    ap.add_argument(
        "--stage",
        choices=("sft", "grpo", "all", "vocab"),
        default="all",
        help="sft: eval sets, SFT, the untrained and SFT evaluations; grpo: GRPO from the SFT "
        "stage's checkpoint and its evaluations; all: both; vocab: only the tokenizer survey "
        "(transfer_vocabulary.json)",
    )
    ap.add_argument(
        "--tokenizer",
        choices=("mixed", "world"),
        default="mixed",
        help="mixed: trained on the train world's chats and real English text; world: on the "
        "chats alone (bench_learning_search's)",
    )
    ap.add_argument(
        "--english-share",
        type=float,
        default=0.25,
        help="share of the mixed tokenizer's training characters that are real English (0.25: "
        "fewer tokens per real word than the chats alone, with about as few tokens the SFT "
        "data never holds; 0.5 left such a token in 46%% of enwiki questions)",
    )
    ap.add_argument("--out", type=Path, default=RESULTS, help="where the JSON and PNG go")
    ap.add_argument("--work", type=Path, default=WORK, help="worlds, eval sets, checkpoints")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--train-world-seed", type=int, default=0)
    ap.add_argument("--reference-world-seed", type=int, default=1)
    ap.add_argument("--threads", type=int, default=1, help="torch CPU threads")
    ap.add_argument(
        "--grpo-steps",
        type=int,
        default=None,
        help="GRPO steps (default: bench_learning_search's recipe, 200; 100, its GPU size, "
        "keeps the grpo stage within 90 minutes on 2 cores); the SFT stage does not depend on it",
    )
    args = ap.parse_args(argv)
    if args.threads < 1:
        print(f"error: --threads must be at least 1, got {args.threads}", file=sys.stderr)
        return 2
    if args.grpo_steps is not None and args.grpo_steps < 1:
        print(f"error: --grpo-steps must be at least 1, got {args.grpo_steps}", file=sys.stderr)
        return 2
    if args.train_world_seed == args.reference_world_seed:
        print("error: --reference-world-seed must differ from --train-world-seed", file=sys.stderr)
        return 2
    if not 0.0 < args.english_share < 1.0:
        print(
            f"error: --english-share is a share in (0, 1), got {args.english_share}",
            file=sys.stderr,
        )
        return 2
    if not (shared_data() / HOTPOTQA).is_file():
        print(
            f"error: the shared data is not at {shared_data()}; set WIKIGYM_SHARED_DATA",
            file=sys.stderr,
        )
        return 2

    import torch

    from wikigym.synth.generate import GENERATOR
    from wikigym.trainers.coldstart import sft_stages
    from wikigym.trainers.tag_chats import tag_chats

    torch.set_num_threads(args.threads)
    sizes = lsb.SMOKE if args.smoke else lsb.FULL
    if args.grpo_steps is not None:
        sizes = dataclasses.replace(sizes, grpo_steps=args.grpo_steps)
    caps = SMOKE if args.smoke else FULL
    profile = "smoke" if args.smoke else "full"
    tag = "transfer" + ("_smoke" if args.smoke else "")
    tag += "" if args.tokenizer == "mixed" else f"_{args.tokenizer}"
    work = args.work / profile / f"seed{args.seed}"
    # One folder per tokenizer's models and real eval sets (the survey trains none).
    models = work / ("tokenizer-survey" if args.stage == "vocab" else f"tokenizer-{args.tokenizer}")
    stage_file = models / STAGE_SFT
    finished_sft = stage_file.is_file() and (models / "sft" / "chats" / "final").is_dir()
    if args.stage == "grpo" and not finished_sft:  # before the minutes of building sets
        print(
            f"error: --stage grpo: no finished --stage sft in {models}; run --stage sft with "
            "the same options first",
            file=sys.stderr,
        )
        return 2
    models.mkdir(parents=True, exist_ok=True)
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    command = "python benchmarks/bench_transfer.py " + " ".join(
        sys.argv[1:] if argv is None else argv
    )
    t0 = time.perf_counter()
    c0 = time.process_time()
    load = [round(x, 2) for x in os.getloadavg()]
    commit = environment()["git_commit"]
    timings: dict[str, float] = {}
    # The clock of each stage (sft, grpo): --stage all runs both, each timed apart.
    phase = "grpo" if args.stage == "grpo" else "sft"

    def timed(key: str, start: float) -> None:
        timings[key] = round(time.perf_counter() - start, 1)

    t = time.perf_counter()
    sets = build_eval_sets(work, models / "eval", sizes, caps, args)
    train_world = lsb.build_world(
        args.train_world_seed,
        sizes.articles,
        work / f"world-{args.train_world_seed}-n{sizes.articles}",
        sizes.train_tasks,
        args.seed,
    )
    train = lsb.spec_for(train_world, sizes.train_tasks, args.seed, sizes)
    timed("worlds_and_eval_sets", t)
    set_records = {s.name: s.record for s in sets}
    if args.stage == "vocab":
        survey = vocabulary_survey(models / "eval", train, sets, sizes.vocab_size)
        res = {
            "smoke": args.smoke,
            "command": command.strip(),
            "train": {"world_seed": args.train_world_seed, "tasks": sizes.train_tasks},
            "sets": set_records,
            "vocab_size": sizes.vocab_size,
            "tokenizers": survey,
            "seconds": round(time.perf_counter() - t0, 1),
        }
        path = out / f"{tag}_vocabulary.json"
        path.write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")
        for share, row in survey.items():
            cells = ", ".join(
                f"{name}: {row[name]['question']['texts_with_unseen_token']:.3f} of questions "
                f"with an unseen token, {row[name]['question']['tokens_per_word']:.2f} tokens/word"
                for name in set_records
            )
            print(f"english share {share}: {cells}")
        return 0

    recipe = lsb.sft_recipe(sizes, args.seed)
    made_by = lsb.sft_key(recipe, args.train_world_seed, sizes) | {
        "tokenizer": args.tokenizer,
        "english_share": args.english_share if args.tokenizer == "mixed" else None,
    }
    from wikigym.corpora import Snapshot

    train_taskset = train.taskset()
    train_record = {
        "world_seed": args.train_world_seed,
        "articles": sizes.articles,
        "task_seed": args.seed,
        "tasks": len(train_taskset),
        "taskset_id": train_taskset.taskset_id,
        "snapshot_id": Snapshot.open(Path(train.corpus)).snapshot_id,
        "generator": GENERATOR,
        "level": lsb.LEVEL,
        "seed": args.seed,
        "sizes": sizes.__dict__,
        "sft_max_length": recipe.max_length,  # tokens of a chat SFT trains on (longer: cut)
    }
    evals: dict[str, dict[str, Any]] = {s.name: {} for s in sets}
    stage_info: dict[str, Any] = {}
    commands: dict[str, str] = {}

    if args.stage == "grpo":
        stored = json.loads(stage_file.read_text()) if stage_file.is_file() else None
        problem = None
        if stored is None or not (models / "sft" / "chats" / "final" / "config.json").is_file():
            problem = f"no finished --stage sft in {models}"
        elif stored["made_by"] != made_by:
            problem = f"the SFT checkpoint in {models} was made with other settings"
        elif stored["sets"] != set_records:
            changed = sorted(n for n in set_records if stored["sets"].get(n) != set_records[n])
            problem = f"the eval sets changed since --stage sft ({', '.join(changed)})"
        if problem is not None:
            print(
                f"error: --stage grpo: {problem}; run --stage sft with the same options first",
                file=sys.stderr,
            )
            return 2
        assert stored is not None
        evals = stored["eval"]
        stage_info = stored["info"]
        commands = stored["commands"]
        tok_record = stored["tokenizer"]
        ceilings = stored["ceilings"]
        sft_loss = stored["sft_loss"]
        # The vocabulary figures are redone by the current code (the chats are deterministic).
        t = time.perf_counter()
        texts = lsb.chat_texts(tag_chats(train))
        timed("chats", t)
    else:
        for stale in ("base", "sft", "grpo", STAGE_SFT):
            path = models / stale
            if path.is_dir():
                shutil.rmtree(path)
            elif path.exists():
                path.unlink()
        t = time.perf_counter()
        chats = tag_chats(train)
        texts = lsb.chat_texts(chats)
        timed("chats", t)
        t = time.perf_counter()
        tok_record = {
            "kind": args.tokenizer,
            "vocab_size": sizes.vocab_size,
            "pre_tokenization": "GPT-2 (a word with its space), byte-level BPE, digits apart",
            "chats": len(chats),
            "chat_chars": sum(len(x) for x in texts),
        }
        tok_texts = texts
        if args.tokenizer == "mixed":
            english, english_record = english_texts(models / "eval", sets)
            tok_texts, repeat = tokenizer_texts(texts, english, args.english_share)
            tok_record |= {"english": english_record, "english_repeat": repeat}
            tok_record["english_share"] = round(
                english_record["chars"] * repeat / sum(len(x) for x in tok_texts), 4
            )
        lsb.build_base(models / "base", sizes, args.seed, tok_texts)
        timed("tokenizer_and_base", t)
        t = time.perf_counter()
        ceilings = {s.name: ceiling(s) for s in sets}
        timed("ceilings", t)
        t = time.perf_counter()
        sft_stages(models / "base", chats, models / "sft", recipe, cpu=True)
        timed("sft", t)
        sft_loss = [
            {**h, "stage": stage}
            for stage in ("first", "windows", "chats")
            if (models / "sft" / stage / "log_history.json").is_file()
            for h in json.loads((models / "sft" / stage / "log_history.json").read_text())
            if "loss" in h
        ]
        stage_info["sft_chats"] = len(chats)
        stage_info["sft_final_loss"] = sft_loss[-1]["loss"] if sft_loss else None

    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(models / "base")
    t = time.perf_counter()
    vocab = vocabulary(tok, texts, sets)
    timed("vocabulary", t)

    def measure(stage: str, model_dir: Path) -> None:
        for s in sets:
            t = time.perf_counter()
            episodes: list[dict[str, Any]] = []
            m = lsb.evaluate(
                model_dir,
                s.spec,
                max_new_tokens=sizes.max_new_tokens,
                system=recipe.system_text,
                limit=s.untrained_limit if stage == "untrained" else s.limit,
                episodes=episodes,
            )
            timed(f"eval_{stage}_{s.name}", t)
            evals[s.name][stage] = stage_row(m)
            with episodes_file(stage, s.name).open("w") as f:
                for e in episodes:
                    f.write(json.dumps(e, ensure_ascii=False) + "\n")
            lo, hi = m["ci_low"], m["ci_high"]
            print(
                f"{s.name} {stage}: success {m['success']:.4f} [{lo:.4f}, {hi:.4f}] n={m['n']}",
                flush=True,
            )

    def episodes_file(stage: str, name: str) -> Path:
        return models / f"episodes-{stage}-{name}.jsonl"

    def episodes_of(stage: str, s: EvalSet) -> list[dict[str, Any]]:
        with episodes_file(stage, s.name).open() as f:
            return [json.loads(line) for line in f]

    def result(complete: bool) -> dict[str, Any]:
        """The result so far; the reading of the episodes is redone from their files (every
        stage's, the earlier process's too, read by the current code)."""
        order = {name: i for i, name in enumerate(STAGES)}
        diagnosis = {
            s.name: {st: read_episodes(s, episodes_of(st, s), tok) for st in evals[s.name]}
            for s in sets
        }
        seconds = dict(stage_info.get("seconds", {}))
        seconds[phase] = dict(timings) | {"total": round(time.perf_counter() - t0, 1)}
        cpu = dict(stage_info.get("cpu_seconds", {}))
        cpu[phase] = round(time.process_time() - c0, 1)
        loads = dict(stage_info.get("load_average", {}))
        loads[phase] = {"start": load, "end": [round(x, 2) for x in os.getloadavg()]}
        commits = dict(stage_info.get("git_commits", {}))
        commits[phase] = commit  # each stage's code: a stage may run at another commit
        return {
            "smoke": args.smoke,
            "complete": complete,
            "note": "SMOKE RUN: tiny sizes, a pipeline check, not the result" if args.smoke else "",
            "command": " && ".join(commands.values()),
            "commands": commands,
            "train": train_record
            | {
                "tokenizer": tok_record,
                "sft_chats": stage_info.get("sft_chats"),
                "sft_final_loss": stage_info.get("sft_final_loss"),
            },
            "eval": {
                name: dict(sorted(rows.items(), key=lambda kv: order[kv[0]]))
                for name, rows in evals.items()
            },
            "sets": {
                name: record | {"ceiling": ceilings[name], "vocabulary": vocab[name]}
                for name, record in set_records.items()
            },
            "vocabulary": {k: v for k, v in vocab.items() if k not in set_records},
            "diagnosis": diagnosis,
            "env": sets[0].spec.kwargs,
            "greedy_max_new_tokens": sizes.max_new_tokens,
            "seconds": seconds,
            "cpu_seconds": cpu,
            "load_average": loads,
            "git_commits": commits,
            "machine": f"{os.cpu_count()} CPU cores (shared with other jobs), torch CPU, "
            f"{args.threads} thread(s)",
        }

    def write(complete: bool) -> dict[str, Any]:
        res = result(complete)
        tmp = out / f".{tag}.json.tmp"
        tmp.write_text(json.dumps(res, indent=2, ensure_ascii=False) + "\n")
        tmp.replace(out / f"{tag}.json")
        with (out / f"{tag}_episodes.jsonl").open("w") as f:
            for s in sets:
                for st in STAGES:
                    if st in evals[s.name]:
                        for e in kept_episodes(s.name, st, s, episodes_of(st, s)):
                            f.write(json.dumps(e, ensure_ascii=False) + "\n")
        return res

    commands[args.stage] = command.strip()
    if phase == "sft":
        measure("sft", models / "sft" / "chats" / "final")
        measure("untrained", models / "base")
        so_far = result(False)
        stage_info |= {
            k: so_far[k] for k in ("seconds", "cpu_seconds", "load_average", "git_commits")
        }
        stage_file.write_text(
            json.dumps(
                {
                    "made_by": made_by,
                    "sets": set_records,
                    "eval": evals,
                    "info": stage_info,
                    "commands": commands,
                    "tokenizer": tok_record,
                    "ceilings": ceilings,
                    "sft_loss": sft_loss,
                }
            )
        )
        if args.stage == "sft":
            res = write(False)
            plot(out / f"{tag}.png", res)
            print(f"sft stage done: {out / (tag + '.json')} (run --stage grpo next)")
            return 0
        # One process runs both stages: the grpo stage's clock starts here.
        timings.clear()
        t0 = time.perf_counter()
        c0 = time.process_time()
        load = [round(x, 2) for x in os.getloadavg()]
        phase = "grpo"
    t = time.perf_counter()
    grpo, _ = lsb.run_grpo(
        models / "sft" / "chats" / "final",
        train,
        models / "grpo",
        sizes,
        seed=args.seed,
        system=recipe.system_text,
    )
    timed("grpo", t)
    measure("grpo", grpo)
    res = write(True)
    plot(out / f"{tag}.png", res)
    for name, rows in res["eval"].items():
        line = ", ".join(
            f"{st} {r['success']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] n={r['n']}"
            for st, r in rows.items()
        )
        print(f"{name}: {line}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
