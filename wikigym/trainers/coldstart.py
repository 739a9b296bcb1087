"""The cold-start checkpoint of ``cpu-tiny``: the tiny model after SFT on oracle trajectories.

A random-weight tiny model emits no tool calls, so GRPO on it sees reward 0 in every group and
learns nothing. :func:`build_cold_start_model` makes the starting point that shows a learning
signal instead: the tiny model (:func:`wikigym.trainers.tiny.build_tiny_model`, tokenizer
trained locally), fine-tuned through TRL's ``SFTTrainer`` (:func:`wikigym.trainers.sft.run_sft`)
on short oracle trajectories (:func:`compact_chats`, replayed through the env) of one level of a
TaskSet (the easy tasks by default) and of more tasks of that level synthesised on the same
snapshot (:func:`training_tasks`), with the loss on the assistant turns only. After it the policy calls the tools in the env's format and
solves some episodes, so rewards vary within GRPO groups.

The chats use the compact prompt (:func:`compact_prompt`): a short system text that names the
tools and shows the call format, then the question. The env's full first observation and the
tools JSON of the chat template take ~1,600 tokens, a short compact chat ~400; the call format stays the one the env parses (``<tool_call>`` JSON), and
tool results are the env's own observations. GRPO from this checkpoint must use the same
prompt (:func:`compact_rows`, with the rollout of :mod:`wikigym.trainers.rollout` and no tool
schema in the prompt).

The result is cached under ``CACHE/tiny-sft-<key>``, where ``key`` hashes the settings
(:class:`ColdStartRecipe`), the snapshot id and the taskset id of the trajectories: the same
settings on the same data reuse the directory; any change builds another. The directory
appears only when complete (built as a hidden sibling, renamed at the end).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from wikigym.errors import WikigymError
from wikigym.outputs import atomic_output
from wikigym.tasks.refs import passage_ref
from wikigym.tasks.taskset import OracleCall, Task, TaskSet
from wikigym.trainers.adapter import EnvSpec
from wikigym.trainers.sft import call_turn

if TYPE_CHECKING:
    from wikigym.trainers.progress import Progress

COLD_START_VERSION = 4
COLD_START_MARKER = "wikigym_cold_start.json"

COLD_START_RUN: dict[str, Any] = {"per_device_train_batch_size": 16}
"""What the cpu-tiny demonstration run changes in the preset: 16 episodes a step (4 tasks x 4
generations), so each of its 4 steps has 4 groups that can vary, not 1."""

COMPACT_SYSTEM = (
    "Answer the question with the tools search(query, k), open(page, section), find(page, "
    "text) and answer(text, citations). One call per turn: "
    '<tool_call>{"name": "search", "arguments": {"query": "...", "k": 5}}</tool_call>'
)
"""The compact prompt's system text: the tools and the call format the env parses."""


def compact_prompt(question: str, *, system: bool = True) -> list[dict[str, str]]:
    """The compact prompt of a question: the system text (unless ``system`` is false: the
    question alone, for a policy that learnt the tools and the call format from its SFT data),
    then ``Question: ...``."""
    user = {"role": "user", "content": f"Question: {question}"}
    return [{"role": "system", "content": COMPACT_SYSTEM}, user] if system else [user]


SEARCH_KS: tuple[int, ...] = (2, 3, 5)
"""Result counts the short oracle tries for its searches, smallest first (see
:func:`compact_chats`)."""

QUESTION_K = 3
"""Results of the first search, whose query is the question itself (see :func:`compact_chats`):
on held-out easy tasks of another world the answer is in the top 3 hits of the question for
77% of the tasks, against 51% for the oracle's own first query (the entity's title); 45% vs 23%
in the first hit."""


def oracle_taskset(spec: EnvSpec) -> TaskSet:
    """``spec``'s TaskSet, whose oracle calls the cold start's chats replay.

    Raises:
        WikigymError: ``spec`` has no TaskSet.
    """
    taskset = spec.taskset()
    if taskset is None:
        raise WikigymError(
            f"{spec.env_id} has no TaskSet: the cold start needs oracle trajectories"
        )
    return taskset


def compact_chats(
    spec: EnvSpec, *, system: bool = True, progress: Progress | None = None
) -> list[dict[str, Any]]:
    """Short oracle chats of ``spec``'s TaskSet with the compact prompt (with its system text
    unless ``system`` is false) and no tool schema.

    Every chat opens with the same move: a search whose query is the question as written
    (:data:`QUESTION_K` results). A tiny model learns to copy a whole question far sooner than
    to pick the entity's name out of it, and BM25 over the question's words (the relation
    among them) ranks the passage that holds the answer higher than a search for the title.
    When those results show the answer, the chat answers from them, citing the hit that holds
    it; otherwise the oracle's calls follow (its searches retried with the entity's name: the
    "search again with what you learned" move), by their shortest route: the fewest calls
    before the answer, and the smallest search result count of :data:`SEARCH_KS` under which
    every page the trajectory opens or cites was shown before (in the question or an earlier
    observation). A chat is kept only if its replay gets a positive reward, unmasked, and
    writes only what it was shown; it ends with the answer call (the env's last observation is
    not a turn the policy plays).

    ``progress``: a bar over the tasks replayed.

    Raises:
        WikigymError: ``spec`` has no TaskSet.
    """
    taskset = oracle_taskset(spec)
    env = spec.make()
    out: list[dict[str, Any]] = []
    tasks: Any = enumerate(taskset)
    if progress is not None:
        tasks = progress.iterate(tasks, "cold start: oracle chats", len(taskset), "task")
    try:
        for i, task in tasks:
            chat = _shortest_chat(env, task, seed=i, system=system)
            if chat is not None:
                out.append({"messages": chat, "task_id": task.task_id})
    finally:
        env.close()
    return out


def _shortest_chat(env: Any, task: Task, *, seed: int, system: bool) -> list[dict[str, Any]] | None:
    """The shortest solving replay of ``task`` that copies only what it was shown: the search
    for the question, then the fewest oracle calls before its answer call (none when the
    question's results show the answer), then the smallest search result count under which
    every page and citation was shown before it is used. None when no replay solves the task
    that way (a chat that cites what it never saw would teach guessing)."""
    calls = list(task.oracle)
    if not calls or calls[-1].name != "answer":
        return None
    first = OracleCall(name="search", arguments={"query": task.question, "k": QUESTION_K})
    for n in range(len(calls)):
        route = [first, *calls[:n], calls[-1]]
        for k in SEARCH_KS if n else SEARCH_KS[:1]:
            replay = _replay(env, task, route, seed=seed, search_k=k, system=system)
            if replay is not None and replay[1]:
                return replay[0]
    return None


def _replay(
    env: Any, task: Task, calls: list[Any], *, seed: int, search_k: int, system: bool
) -> tuple[list[dict[str, Any]], bool] | None:
    """The compact chat of ``calls`` (oracle calls of ``task``) with ``search_k`` results per
    search, and whether every page, citation and answer text was shown before it; None when
    the replay does not solve the task.

    An answer whose oracle citations were not shown, but whose text a shown search hit holds
    (title or passage), cites that hit instead (the first): the answer is then given from the
    search results, one hop sooner, citing what the agent read."""
    env.reset(seed=seed, options={"task_id": task.task_id})
    snapshot = env.unwrapped.snapshot
    messages: list[dict[str, Any]] = compact_prompt(task.question, system=system)
    seen = task.question
    hits: list[Any] = []  # the search hits shown so far, in the order shown
    copied = True
    reward = 0.0
    info: dict[str, Any] = {}
    done = False
    for i, call in enumerate(calls):
        arguments = dict(call.arguments)
        if call.name == "search" and i:  # the first search keeps its own count
            arguments["k"] = search_k
            hits += snapshot.search(str(arguments["query"]), search_k)  # what the env shows
        if call.name == "answer":
            arguments = _cite_shown(arguments, seen, hits)
        page = arguments.get("page")
        shown = [page] if isinstance(page, str) else []
        if call.name == "answer" and isinstance(arguments.get("text"), str):
            shown.append(arguments["text"])
        citations = arguments.get("citations")
        if isinstance(citations, list):
            shown += [f"[{c}]" for c in citations if isinstance(c, str)]
        if any(s not in seen for s in shown):
            copied = False
        text = json.dumps(_in_call_order(arguments), ensure_ascii=False)
        action, message = call_turn(call.name, text)
        obs, step_reward, terminated, truncated, info = env.step(action)
        reward = float(step_reward)
        messages.append(message)
        done = terminated or truncated
        if done:
            break
        messages.append({"role": "tool", "name": call.name, "content": obs})
        seen += "\n" + obs
    outcome = (info.get("reward_components") or {}).get("outcome", reward)
    if not done or info.get("mask") or reward <= 0 or outcome <= 0:
        return None
    return messages, copied


CALL_ORDER: tuple[str, ...] = ("query", "text", "page", "section", "k", "citations")
"""The order of a call's arguments in the chats: what the policy copies first (the query, the
answer text), then what follows from it (a result count; the citation of the hit that holds
the text just written). Sorted keys would put ``citations`` before ``text``: the model would
have to pick the hit before the answer it holds."""


def _in_call_order(arguments: dict[str, Any]) -> dict[str, Any]:
    """``arguments`` with the keys of :data:`CALL_ORDER` first, in that order, then the rest
    sorted (the env reads JSON objects by key; the order only shapes what the model writes)."""
    rank = {k: i for i, k in enumerate(CALL_ORDER)}
    keys = sorted(arguments, key=lambda k: (rank.get(k, len(rank)), k))
    return {k: arguments[k] for k in keys}


def _cite_shown(arguments: dict[str, Any], seen: str, hits: list[Any]) -> dict[str, Any]:
    """``arguments`` of an answer call, citing the first shown hit that holds the answer text
    when one of its own citations was not shown (unchanged otherwise)."""
    citations = arguments.get("citations")
    text = arguments.get("text")
    if not isinstance(text, str) or not isinstance(citations, list):
        return arguments
    if all(isinstance(c, str) and f"[{c}]" in seen for c in citations):
        return arguments
    for hit in hits:
        if text in hit.title or text in hit.text:
            return {**arguments, "citations": [passage_ref(hit.passage_id)]}
    return arguments


def compact_rows(
    spec: EnvSpec, rows: list[dict[str, Any]], *, system: bool = True
) -> list[dict[str, Any]]:
    """Dataset rows (``prompt``, ``task_id``, ``seed``) with the compact prompt (with its
    system text unless ``system`` is false: the prompt the checkpoint was fine-tuned on)."""
    taskset = spec.taskset()
    if taskset is None:
        raise WikigymError(f"{spec.env_id} has no TaskSet: compact prompts need its questions")
    return [
        {**row, "prompt": compact_prompt(taskset.get(str(row["task_id"])).question, system=system)}
        for row in rows
    ]


@dataclass(frozen=True)
class ColdStartRecipe:
    """What the cold-start checkpoint is built from (every field is part of the cache key).

    Up to four SFT stages, each skipped at 0 steps: ``first_steps`` on the first turns alone
    (:func:`first_turns`: the question copied into a search), ``window_steps`` on the chats'
    turn windows (:func:`turn_windows`: short sequences dense in what the agent copies), then
    ``sft_steps`` on the whole chats, and ``own_steps`` on the TaskSet's own chats. The
    defaults are the cpu-tiny demonstration's; ``bench_learning_search`` sets a constant rate,
    uniform batches and no system text, which is what taught a tiny model to copy held-out
    questions (see docs/training.md).
    """

    seed: int = field(default=0, metadata={"help": "Seed of the weights and the data order."})
    level: str = field(default="easy", metadata={"help": "Task level the trajectories come from."})
    extra_tasks: int = field(
        default=300,
        metadata={"help": "Tasks of the level synthesised on the snapshot besides the TaskSet's."},
    )
    hidden_size: int = field(default=128, metadata={"help": "Width of the tiny model."})
    num_layers: int = field(default=2, metadata={"help": "Decoder layers of the tiny model."})
    head_dim: int = field(default=32, metadata={"help": "Dimensions per attention head."})
    vocab_size: int = field(default=1024, metadata={"help": "BPE vocabulary of the tokenizer."})
    first_steps: int = field(
        default=0,
        metadata={
            "help": "SFT steps, first, on the first turn alone: the question copied into a "
            "search (0: none)."
        },
    )
    window_steps: int = field(
        default=150, metadata={"help": "SFT steps on turn windows (0: none)."}
    )
    window_batch_size: int = field(default=64, metadata={"help": "Windows per SFT batch."})
    sft_steps: int = field(default=150, metadata={"help": "SFT steps on whole chats."})
    learning_rate: float = field(default=3e-3, metadata={"help": "Peak SFT learning rate."})
    warmup_steps: int = field(default=20, metadata={"help": "Linear warmup, then cosine decay."})
    batch_size: int = field(default=16, metadata={"help": "Chats per SFT batch."})
    max_length: int = field(default=512, metadata={"help": "Tokens per chat (longer: cut)."})
    max_env_steps: int = field(default=8, metadata={"help": "Env step budget of the replays."})
    lr_scheduler_type: str = field(
        default="cosine",
        metadata={
            "help": "TRL's learning-rate schedule after the warmup (cosine; "
            "constant_with_warmup keeps the rate up until the copy skill appears)."
        },
    )
    group_by_length: bool = field(
        default=True,
        metadata={"help": "Batches of chats of similar length (less padding, noisier steps)."},
    )
    system_text: bool = field(
        default=True,
        metadata={
            "help": "Chats open with the compact system text (false: the question alone; GRPO "
            "from the checkpoint then prompts without it too)."
        },
    )
    own_steps: int = field(
        default=200,
        metadata={
            "help": "SFT steps, last, on the chats of the TaskSet's own tasks only (the tasks "
            "the GRPO run plays; 0: none)."
        },
    )


def turn_windows(chats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Each assistant turn of ``chats`` with the least context it needs: the question, and
    for a later turn the call before it and that call's observation (no system text: with
    ``ColdStartRecipe.system_text`` false this is the prompt the policy plays, as the first
    turn's window is the whole prompt).

    A whole chat is ~350 tokens of which ~70 are the policy's; a window is 40-150 tokens,
    most of them the turn itself and what it copies (the query from the question, the page
    and citation from the last result). A tiny model learns to copy from these far sooner,
    per CPU second, than from whole chats (measured in ``bench_learning_search``).
    """
    out: list[dict[str, Any]] = []
    for chat in chats:
        messages = chat["messages"]
        question = next(m for m in messages if m["role"] == "user")
        turns = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        for n, i in enumerate(turns):
            context = [question] if n == 0 else [question, *messages[i - 2 : i]]
            out.append({"messages": [*context, messages[i]], "task_id": chat.get("task_id")})
    return out


def first_turns(chats: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The first assistant turn of each chat with only the question before it (the first of
    its :func:`turn_windows`)."""
    return [w for w in turn_windows(chats) if len(w["messages"]) == 2]


@dataclass(frozen=True)
class SFTStage:
    """One SFT stage of a :class:`ColdStartRecipe`: its rows and TRL settings."""

    name: str
    rows: list[dict[str, Any]]
    steps: int
    learning_rate: float
    warmup_steps: int
    batch_size: int


def stage_plan(
    chats: list[dict[str, Any]],
    recipe: ColdStartRecipe,
    own: list[dict[str, Any]] | None = None,
) -> list[SFTStage]:
    """The SFT stages of ``recipe`` in order, those with steps only (see :func:`sft_stages`).

    - ``first``: the first turn of each chat. Copying the question is the skill every later
      turn builds on, and its windows are the shortest: with ~24k distinct train questions a
      2-layer model copies 71% of held-out questions exactly after 500 steps of 64 (20% with
      ~4k questions, which it memorises instead).
    - ``windows``: every turn with what came before it (:func:`turn_windows`).
    - ``chats``: whole chats; the windows stage has already moved the weights far, so a
      gentler rate (a third) follows it.
    - ``own``: the chats of the tasks a GRPO run will play, at a third of the rate.
    """
    lr, warmup = recipe.learning_rate, recipe.warmup_steps
    window_rows = recipe.window_batch_size
    plan = [
        SFTStage(
            "first",
            at_most(first_turns(chats), recipe.first_steps * window_rows, recipe.seed),
            recipe.first_steps, lr, warmup, window_rows,
        ),
        SFTStage(
            "windows",
            at_most(turn_windows(chats), recipe.window_steps * window_rows, recipe.seed),
            recipe.window_steps, lr, warmup, window_rows,
        ),
        SFTStage(
            "chats",
            at_most(chats, recipe.sft_steps * recipe.batch_size, recipe.seed),
            recipe.sft_steps,
            lr / 3 if recipe.window_steps > 0 else lr,
            min(warmup, max(1, recipe.sft_steps // 10)),
            recipe.batch_size,
        ),
        SFTStage(
            "own",
            list(own or []),
            recipe.own_steps if own else 0,
            lr / 3,
            min(warmup, max(1, recipe.own_steps // 10)),
            recipe.batch_size,
        ),
    ]  # fmt: skip
    return [stage for stage in plan if stage.steps > 0]


def sft_stages(
    base: str | Path,
    chats: list[dict[str, Any]],
    out: Path,
    recipe: ColdStartRecipe,
    own: list[dict[str, Any]] | None = None,
    *,
    cpu: bool = True,
    progress: Progress | None = None,
) -> Path:
    """The SFT stages of ``recipe`` (:func:`stage_plan`) from ``base`` (TRL's ``SFTTrainer``,
    assistant turns only, float32 on the CPU; ``cpu=False``: on the trainer's accelerator,
    bf16); returns the final checkpoint under ``out``. ``progress``: each stage's steps as a
    labelled bar.

    With ``own`` (the chats of the tasks a GRPO run will play) a last stage of
    ``recipe.own_steps`` fits those alone, at a third of the rate. It is what makes the
    cpu-tiny run show a signal: a model this small, trained for minutes, does not copy names it
    has not seen (see ``bench_learning_search``), but it learns 50 tasks' chats by heart in
    about 100 steps (measured with a plain training loop from the stages before: greedy, 40 of
    50 solved, against 0 before it), so some of its sampled episodes solve them and some do
    not, and rewards vary within groups (200 steps by default: 100 left one default TaskSet
    with no solved episode in the run). Tasks held out from the SFT data need the copy skill
    instead; this stage does not claim it."""
    from datasets import Dataset

    from wikigym.trainers.sft import run_sft

    common: dict[str, Any] = {
        "assistant_only_loss": True,
        "lr_scheduler_type": recipe.lr_scheduler_type,
        "max_length": recipe.max_length,
        "seed": recipe.seed,
        "use_cpu": cpu,
        "bf16": not cpu,
        "group_by_length": recipe.group_by_length,
    }
    model = str(base)
    plan = stage_plan(chats, recipe, own)
    for i, stage in enumerate(plan, 1):
        model = str(
            run_sft(
                model,
                Dataset.from_list(stage.rows),
                out / stage.name,
                max_steps=stage.steps,
                learning_rate=stage.learning_rate,
                warmup_steps=stage.warmup_steps,
                batch_size=stage.batch_size,
                progress=progress,
                stage=f"cold start SFT {i}/{len(plan)} ({stage.name})",
                **common,
            )
        )
    return Path(model)


def at_most(rows: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """``rows``, or ``n`` of them drawn without replacement when there are more (a stage of
    ``steps`` x ``batch`` rows reads no more than that; TRL tokenizes the whole dataset first,
    which for 80k windows took minutes), kept in their order."""
    if len(rows) <= n:
        return rows
    import random

    keep = sorted(random.Random(seed).sample(range(len(rows)), n))
    return [rows[i] for i in keep]


def training_tasks(spec: EnvSpec, subset: TaskSet, recipe: ColdStartRecipe) -> TaskSet:
    """The tasks the cold start is fine-tuned on: ``subset`` (the TaskSet's tasks of the level)
    and ``recipe.extra_tasks`` more of the level synthesised on the same snapshot (a few
    dozen chats teach a tiny model the format but not to copy names), without duplicates."""
    if recipe.extra_tasks <= 0:
        return subset
    from wikigym.synth.generate import SynthConfig, generate_tasks

    snapshot = spec.snapshot()
    assert snapshot is not None  # a spec with a TaskSet reads a snapshot
    extra = generate_tasks(
        snapshot, SynthConfig(difficulty=recipe.level, n=recipe.extra_tasks, seed=recipe.seed + 1)
    )
    ids = {t.task_id for t in subset}
    questions = {t.question for t in subset}
    more = [t for t in extra if t.task_id not in ids and t.question not in questions]
    return TaskSet([*subset, *more], name=f"{subset.name}-coldstart")


def level_subset(taskset: TaskSet, level: str) -> TaskSet:
    """The tasks of ``taskset`` at ``level``, in TaskSet order.

    Raises:
        WikigymError: No task has that level (the message lists the levels there are).
    """
    chosen = [t for t in taskset if t.level == level]
    if not chosen:
        levels = sorted({str(t.level) for t in taskset})
        raise WikigymError(f"the TaskSet has no {level!r} tasks; its levels are {levels}")
    return TaskSet(chosen, name=f"{taskset.name}-{level}")


def cold_start_key(recipe: ColdStartRecipe, taskset: TaskSet) -> str:
    """The cache key: a sha256 prefix over the recipe and the ids of the data it is built on."""
    payload = {
        "version": COLD_START_VERSION,
        "recipe": asdict(recipe),
        "taskset_id": taskset.taskset_id,
        "snapshot_ids": sorted(taskset.snapshot_ids()),
    }
    return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()[:16]


def build_cold_start_model(
    spec: EnvSpec,
    cache: Path,
    recipe: ColdStartRecipe | None = None,
    *,
    progress: Progress | None = None,
) -> Path:
    """Build (or reuse) the SFT'd tiny model for the TaskSet of ``spec``.

    Args:
        spec: A WikiSearch run (its corpus and TaskSet give the trajectories; its tool set
            the tool schema of the chats).
        cache: The folder the checkpoint is cached in (``tiny-sft-<key>`` below it).
        recipe: The settings (default: :class:`ColdStartRecipe`).
        progress: Where its stages are shown (default: shown on stderr).

    Returns:
        The checkpoint directory (model and tokenizer, loadable by ``from_pretrained``).

    Raises:
        WikigymError: ``spec`` has no TaskSet, the level has no task, or no oracle trajectory
            of the level solves its task.
    """
    from wikigym.trainers.tiny import build_tiny_model

    recipe = recipe or ColdStartRecipe()
    subset = level_subset(oracle_taskset(spec), recipe.level)
    out = Path(cache) / f"tiny-sft-{cold_start_key(recipe, subset)}"
    marker = out / COLD_START_MARKER
    if marker.is_file():
        return out
    from wikigym.trainers.progress import Progress

    progress = progress or Progress()
    kwargs = {**spec.kwargs, "max_steps": recipe.max_env_steps}
    progress.stage(
        "cold start",
        f"built once, cached in {out}: {recipe.extra_tasks} more {recipe.level} tasks, their "
        f"oracle chats, a tokenizer, a tiny model, then SFT ({cold_start_steps(recipe)})",
    )
    progress.stage("cold start: tasks", f"synthesising {recipe.extra_tasks} {recipe.level} tasks")
    tasks = training_tasks(spec, subset, recipe)
    progress.done("cold start: tasks", f"{len(tasks)} tasks")
    chats_spec = EnvSpec(env_id=spec.env_id, corpus=spec.corpus, tasks=tasks, kwargs=kwargs)
    chats = compact_chats(chats_spec, system=recipe.system_text, progress=progress)
    ids = {t.task_id for t in subset}
    own = [c for c in chats if c["task_id"] in ids]
    if not chats:
        raise WikigymError(
            f"no oracle trajectory of the {recipe.level!r} tasks solves its task; check that "
            "the TaskSet matches the corpus"
        )
    with atomic_output(out, overwrite=True) as tmp:
        base = build_tiny_model(
            tmp / "base",
            seed=recipe.seed,
            vocab_size=recipe.vocab_size,
            hidden_size=recipe.hidden_size,
            num_layers=recipe.num_layers,
            head_dim=recipe.head_dim,
            progress=progress,
        )
        final = sft_stages(base, chats, tmp / "sft", recipe, own=own, progress=progress)
        for f in sorted(final.iterdir()):
            f.rename(tmp / f.name)
        for sub in ("base", "sft"):
            _rmtree(tmp / sub)
        info: dict[str, Any] = {
            "recipe": asdict(recipe),
            "version": COLD_START_VERSION,
            "taskset_id": subset.taskset_id,
            "snapshot_ids": sorted(subset.snapshot_ids()),
            "chats": len(chats),
        }
        (tmp / COLD_START_MARKER).write_text(json.dumps(info, indent=2, sort_keys=True) + "\n")
    progress.done("cold start")
    return out


def cold_start_steps(recipe: ColdStartRecipe) -> str:
    """The SFT stages of ``recipe`` in words: ``4 stages: windows 150, chats 150, own 200 steps``
    (the ``own`` stage counted when it has steps; it runs when the TaskSet has chats)."""
    steps = [
        (name, n)
        for name, n in (
            ("first", recipe.first_steps),
            ("windows", recipe.window_steps),
            ("chats", recipe.sft_steps),
            ("own", recipe.own_steps),
        )
        if n > 0
    ]
    listed = ", ".join(f"{name} {n}" for name, n in steps)
    return f"{len(steps)} stage{'s' if len(steps) != 1 else ''}: {listed} steps"


def cold_start_system_text(path: str | Path) -> bool:
    """Whether the cold-start checkpoint at ``path`` was fine-tuned on prompts with the
    compact system text (true for any model without a build record)."""
    info = cold_start_info(path)
    recipe = info.get("recipe") if info else None
    return bool(recipe.get("system_text", True)) if isinstance(recipe, dict) else True


def cold_start_info(path: str | Path) -> dict[str, Any] | None:
    """The build record of a cold-start checkpoint (None for any other model)."""
    marker = Path(path) / COLD_START_MARKER
    if not marker.is_file():
        return None
    info = json.loads(marker.read_text(encoding="utf-8"))
    return info if isinstance(info, dict) else None


def _rmtree(path: Path) -> None:
    import shutil

    shutil.rmtree(path, ignore_errors=True)
