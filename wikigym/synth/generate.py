"""From drafts to tasks: prove, render, check for leaks, attach evidence, rubric and oracle.

:func:`generate_tasks` is the whole pipeline; same snapshot, config and seed give the same
TaskSet (every choice comes from one seeded RNG, and every collection is walked in a fixed
order).
"""

from __future__ import annotations

import functools
import hashlib
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from wikigym.corpora.snapshot import Snapshot
from wikigym.errors import SynthError
from wikigym.synth import idsets
from wikigym.synth import paraphrase as para
from wikigym.synth.drafts import Draft, QuestionForm, form_names, question_form
from wikigym.synth.evaluate import Evaluator, Item, all_ids, frozen
from wikigym.synth.fields import unheld_value
from wikigym.synth.graph import REAL_SOURCES, KnowledgeGraph, graph_of
from wikigym.synth.levels import LEVELS, level_problems, structure_can_meet
from wikigym.synth.minimal import anchor_shortcut, redundant
from wikigym.synth.node import entity_ids, kind_of, phrasing_rng
from wikigym.synth.oracle import FIND_MAX_HITS, build_oracle
from wikigym.synth.query import Node, canonical, constraints, forms_of, measures, walk, wrap
from wikigym.synth.render import Renderer
from wikigym.synth.sampler import Sampler
from wikigym.synth.surfacing import unsurfaced
from wikigym.synth.unanswerable import (
    BelievedEmpty,
    near_miss,
    unanswerable_slots,
    unanswerable_task,
)
from wikigym.tasks.taskset import Evidence, EvidenceFact, RubricEntry, Task, TaskSet

# Bump with any change to what the generator writes for the same snapshot, config and seed: the
# default TaskSet is cached under this name (tests/test_synth_generator_version.py pins it).
GENERATOR = "wikigym.synth/6"
# The oracle must fit WikiSearch-v1's default step budget (12 actions), so that it solves
# every task as the env is made by default.
MAX_ORACLE_CALLS = 12
SHORTCUT_LEVELS = frozenset({"hard", "phd"})  # levels that reject the anchor-page shortcut
DIFFICULTIES: tuple[str, ...] = (*LEVELS, "mixed")


@dataclass(frozen=True)
class SynthConfig:
    """What to generate.

    Attributes:
        difficulty: ``easy``, ``medium``, ``hard``, ``phd`` or ``mixed`` (levels in turn).
        n: Number of tasks.
        seed: Seed of every random choice.
        relations: Relations the queries may use (None: all).
        yes_no: Also make yes/no questions.
        llm: OpenAI-compatible endpoint for paraphrases (None: templates only).
        attempts_per_task: Drafts tried per task before giving up. A slot that succeeds
            never reaches it (so raising it changes no TaskSet that could be made before);
            a small real wiki makes its rare phd drafts only within many (the shared
            206-page enwiki excerpt under ``wikigym.synth/6``: 1 of 20 phd tasks within
            2,000 attempts a slot, 6 within 20,000). The slot that fails spends all of them:
            about a minute for that run, 5.4 min for the Japanese excerpt's (18 of 20; docs/synth.md).
        unanswerable: Share of tasks made unanswerable near-misses (:mod:`.unanswerable`).
        forms: Question forms drafted besides the level's mix, each at its own weight
            (:attr:`~wikigym.synth.drafts.QuestionForm.opt_in_weight`; ``yes_no`` is what
            ``yes_no=True`` adds). Empty: the mix alone, as ``GENERATOR`` pins it.
        partial: ``n`` is a cap: keep the tasks made before the first slot no draft fills,
            instead of failing (``synth generate --up-to``; the default tasks of a corpus
            make what its facts allow). Without unanswerable tasks the result is the first
            tasks of any larger ``n``, so a capped run equals a run asking for exactly what
            it made.
    """

    difficulty: str = "mixed"
    n: int = 100
    seed: int = 0
    relations: tuple[str, ...] | None = None
    yes_no: bool = False
    llm: str | None = None
    attempts_per_task: int = 20_000
    unanswerable: float = 0.0
    forms: tuple[str, ...] = ()
    partial: bool = False


# The mix of question forms per level (weights; see wikigym.synth.levels). Easy and medium
# allow no intersection, so the forms that live in one (union, negation, same, fuzz, wide)
# start at hard.
FORM_MIX: dict[str, dict[str, float]] = {
    "easy": {"entity": 0.5, "literal": 0.3, "count": 0.1, "comparison": 0.05, "arithmetic": 0.05},
    "medium": {
        "entity": 0.4, "literal": 0.25, "count": 0.1, "comparison": 0.1, "superlative": 0.1,
        "arithmetic": 0.05, "list": 0.05,
    },
    "hard": {
        "entity": 0.22, "literal": 0.13, "count": 0.05, "comparison": 0.05, "superlative": 0.08,
        "arithmetic": 0.05, "union": 0.06, "negation": 0.06, "same": 0.05, "fuzz": 0.08,
        "wide": 0.06, "relative_time": 0.04, "partial_name": 0.03, "list": 0.04,
    },
    "phd": {
        "entity": 0.16, "literal": 0.08, "comparison": 0.07, "superlative": 0.08,
        "arithmetic": 0.08, "union": 0.08, "negation": 0.08, "same": 0.07, "fuzz": 0.08,
        "wide": 0.08, "relative_time": 0.08, "partial_name": 0.06,
    },
}  # fmt: skip
# Clues a search cannot take literally (counted per task as ``fuzzy_clues``).
FUZZY_FORMS = frozenset({"fuzz", "relative_time", "partial_name"})


def opt_in_form_names() -> list[str]:
    """The registered forms a config can add to the mix (those with an opt-in weight)."""
    return [f for f in form_names() if question_form(f).opt_in_weight]


def opt_in_forms(config: SynthConfig) -> tuple[str, ...]:
    """The forms ``config`` adds to every level's mix (``yes_no`` first when asked for by
    ``yes_no=True``), without repeats.

    Raises:
        SynthError: A form that is not registered, or that has no opt-in weight.
    """
    names = (*(("yes_no",) if config.yes_no else ()), *config.forms)
    for name in names:
        if not question_form(name).opt_in_weight:
            raise SynthError(
                f"question form {name!r} is drafted by the level mix, not on request; "
                f"forms that can be added: {', '.join(opt_in_form_names())}"
            )
    return tuple(dict.fromkeys(names))


def level_mix(level: str, extra: tuple[str, ...] = ()) -> tuple[tuple[str, ...], tuple[float, ...]]:
    """The forms drafted at ``level`` and their shares: the level's :data:`FORM_MIX`, then
    each form of ``extra`` at its opt-in weight there (none: not at that level)."""
    mix = dict(FORM_MIX[level])
    for name in extra:
        weight = question_form(name).opt_in_weight.get(level)
        if weight and name not in mix:
            mix[name] = weight
    total = sum(mix.values())
    return tuple(mix), tuple(w / total for w in mix.values())


QUOTA_ATTEMPTS = 30  # drafts of a slot's scheduled form before the weighted draw takes over
# A slot made a question with no answer keeps to its scheduled form far longer: fewer drafts
# of some forms can be perturbed (a comparison of named candidates cannot), and a fallback to
# the weighted draw would give the unanswerable tasks another mix of forms, and of lengths,
# than the answerable ones (a model could learn to abstain by form or length).
QUOTA_ATTEMPTS_UNANSWERABLE = 300
# ... and to a length drawn from the answerable questions of its level made so far (within
# LENGTH_SLACK words), once LENGTH_SAMPLE of them are made: a near-miss needs a constant in a
# description of several constraints, so unmatched, the questions with no answer run longer.
LENGTH_SLACK = 4
LENGTH_SAMPLE = 5
LENGTH_ATTEMPTS = 150  # drafts held to the length (then to the form alone)


@functools.cache
def form_cycle(names: tuple[str, ...], weights: tuple[float, ...]) -> tuple[str, ...]:
    """One cycle of 100 slots in which each form has its weight's share, spread evenly
    (smooth weighted round robin; ties by the mix's order, never by hashing)."""
    want = [round(100 * w) for w in weights]
    current = [0] * len(names)
    out: list[str] = []
    for _ in range(sum(want)):
        for i, w in enumerate(want):
            current[i] += w
        best = max(range(len(names)), key=lambda i: (current[i], -i))
        current[best] -= sum(want)
        out.append(names[best])
    return tuple(out)


def first_constant(node: Node, renderer: Renderer) -> str | None:
    """Surface form of the constant at the end of the deepest chain."""
    item = node.constant
    if item is not None:
        return renderer.g.surface(item)
    for child, _ in node.paths():
        if (c := first_constant(child, renderer)) is not None:
            return c
    return None


def names_candidate(root: Node, answer: Item) -> bool:
    """Whether ``root`` names ``answer`` by design ("Which has the largest population: A, B
    or C?" lists its candidates)."""
    return root.names_answer(answer)


def distractor_stats(root: Node, ev: Evaluator) -> tuple[int, int]:
    """(distractor_min, distractors): the fewest same-kind matches of one constraint over all
    intersections, and the entities matching some but not all top-level constraints."""
    low: int | None = None
    top_union = -1
    for n in walk(root):
        members = n.conjuncts()
        if members is None:
            continue
        cons = constraints(n)
        if len(cons) < 2:
            continue
        kind = kind_of(n)
        filters = [k for a in members if (k := a.filter_kind) is not None]
        kinds = [ev.value(a) for a in members if a.filter_kind is not None]
        sets = [ev.value(_positive(c)) for c in cons]
        kind_ids, set_ids = all_ids(kinds), all_ids(sets)
        if kind_ids is not None and set_ids is not None:
            # Entity sets only (the usual case): sorted id arrays, no Python sets.
            every = ev.g.member_ids(kind) if kind else idsets.as_ids(ev.g.out_rows.keys_array())
            parts = []
            for c, v in zip(cons, set_ids, strict=True):
                s_ids = idsets.minus(every, v) if c.negated is not None else v
                for name in filters:  # one gather of kind codes (a kind can be most of the graph)
                    s_ids = ev.g.ids_of_kind(s_ids, name)
                parts.append(s_ids)
                low = len(s_ids) if low is None else min(low, len(s_ids))
            n_union = len(idsets.union_all(parts))
        else:
            union: set[object] = set()
            every_set = ev.g.members(kind) if kind else frozenset(ev.g.out_rows)
            for c, got in zip(cons, sets, strict=True):
                s = every_set - frozen(got) if c.negated is not None else frozen(got)
                for members_of_kind in kinds:
                    s = s & frozen(members_of_kind)
                union |= s
                low = len(s) if low is None else min(low, len(s))
            n_union = len(union)
        if top_union < 0:
            top_union = n_union - 1
    return (low or 0), max(top_union, 0)


def _positive(node: Node) -> Node:
    """What a constraint holds, or for a negation what it leaves out."""
    negated = node.negated
    return node if negated is None else negated


def shortcut(root: Node, answer: Item, graph: KnowledgeGraph) -> bool:
    """Whether a named entity two or more hops from the answer is also its direct neighbour."""
    if not isinstance(answer, int):
        return False
    near = {graph.f_obj[r] for r in graph.out_rows.get(answer, ())}
    near |= {graph.f_subj[r] for r in graph.in_rows.get(answer, ())}

    def visit(n: Node, depth: int) -> bool:
        item = n.constant
        if isinstance(item, int):
            return depth >= 2 and item in near
        # A negated entity is not a path to the answer (paths() leaves it out).
        return any(visit(child, depth + step) for child, step in n.paths())

    return visit(root, 0)


def honest_question(root: Node, r: Renderer, ev: Evaluator, seed: int) -> str | None:
    """The template question of ``root`` said by ``r`` with the set sizes of ``ev``, or None
    when it cannot be said honestly (see :meth:`TaskBuilder.say`)."""
    r.sizes = ev.size
    try:
        question = r.question(root, phrasing_rng(root, seed))
    finally:
        r.sizes = None
    if r.unfit or any(ev.size(n) > 1 for n in r.definites):
        return None
    return question


def closed_world(root: Node, graph: KnowledgeGraph) -> int:
    """1 when ``root``'s answer is unique only inside the snapshot, else 0.

    A query that picks its answer out of every entity of some kind ("the person born in X
    in the 1920s") is unique among the entities the snapshot holds; a real wiki's snapshot
    holds some of the world's (an excerpt, a dump of one date), so such a task is marked. A
    query that reads its answer off named pages ("the capital of the country where X was
    born") stays unique in any larger world (:meth:`~wikigym.synth.node.Node.open_world`),
    and a generated world is the whole world (:meth:`KnowledgeGraph.complete`)."""
    return int(not graph.complete() and not root.open_world())


def generator_version(name: str | None) -> int:
    """The version of a generator name (``wikigym.synth/6`` -> 6; 0 for another generator)."""
    prefix = GENERATOR.rsplit("/", 1)[0] + "/"
    if not name or not name.startswith(prefix) or not name[len(prefix) :].isdigit():
        return 0
    return int(name[len(prefix) :])


class TaskBuilder:
    """Turns drafts into proved tasks for one snapshot."""

    def __init__(
        self,
        snapshot: Snapshot,
        graph: KnowledgeGraph,
        rng: np.random.Generator,
        seed: int,
        llm: str | None = None,
        evaluator: Evaluator | None = None,
    ) -> None:
        self.snapshot = snapshot
        self.g = graph
        self.rng = rng
        self.seed = seed
        self.llm = llm
        # The sampler's evaluator, when given: a draft is built right after it is drafted,
        # and the proof below re-evaluates the sets its minimisation just evaluated (the
        # memo is a cache of a pure function of the graph: the proof is the same, and
        # the sampler clears it before each draft).
        self._shared = evaluator is not None
        self.ev = evaluator if evaluator is not None else Evaluator(graph)
        self.renderer = Renderer(graph, rng)
        self._passages: Callable[[int], list] = snapshot.passages_of

    def say(self, root: Node) -> str | None:
        """The template question of ``root``, or None when it cannot be said honestly.

        Every description said definitely ("the person who ...", "this person") denotes
        exactly one entity of the snapshot (at most one in a near-miss, whose empty
        description is the point), and the proof checks it here on the renderer's record;
        one that denotes several is said indefinitely ("a person who ..."), and a draft whose
        wording needs a definite description where the set has several members (the
        subject of "When was ... born?") is refused."""
        return honest_question(root, self.renderer, self.ev, self.seed)

    def _statements(self, rows: list[int]) -> dict[int, str]:
        """Where each of ``rows`` (facts stated in no passage) is stated: its category line,
        Wikidata statement or infobox field (``| key = value``), read by fact id."""
        if not rows:
            return {}
        ids = [int(self.g.f_id[r]) for r in rows]
        got = self.snapshot.sql(
            "SELECT fact_id, coalesce(statement, '| ' || key || ' = ' || value_text) AS statement"
            " FROM facts WHERE list_contains(?, fact_id)",
            [ids],
        ).to_pylist()
        by_id = {int(x["fact_id"]): x["statement"] for x in got if x["statement"]}
        return {r: by_id[i] for r, i in zip(rows, ids, strict=True) if i in by_id}

    def answer_text(self, draft: Draft) -> str:
        """The answer as the task states it (any draft: nothing is checked here)."""
        return draft.root.answer_text(self.g, draft.answer)

    def answer_of(self, draft: Draft) -> tuple[str, list[str], str]:
        """(answer, aliases, answer_type)."""
        return draft.root.answer(self.g, draft.answer)

    def build(self, draft: Draft, level: str, index: int) -> Task | None:
        """The task of ``draft`` at ``level``, or None when it fails a check."""
        g, ev = self.g, self.ev
        root = draft.root
        # An entity without a page is named, never found: it answers as a name (a literal
        # question), not as a page to reach.
        if isinstance(draft.answer, int) and draft.answer >= g.n_pages and draft.form != "literal":
            return None
        if not self._shared:
            ev.reset()
        result = ev.eval(root)
        if result != frozenset((draft.answer,)):
            return None
        m: dict[str, float | int | str] = dict(measures(root))
        # The structure first: it is free, and most drafts that fail, fail it.
        if not m["constants"] or not structure_can_meet(level, m):
            return None
        m["distractor_min"], m["distractors"] = distractor_stats(root, ev)
        m["oracle_calls"] = 6  # provisional: checked for real below
        if level_problems(level, m) or shortcut(root, draft.answer, g):
            return None
        # Minimal: no constraint can be dropped, so the hop count is the effective one.
        if redundant(root, ev):
            return None
        m["effective_hops"] = m["hops"]
        m["forms"] = ",".join(forms_of(root))
        # Every passage of the evidence is shown by some find of the oracle, and a find
        # shows at most FIND_MAX_HITS: more passages than the call budget's finds can show
        # could never make an oracle (exact), so the witness stops there.
        try:
            rows = ev.witness(root, draft.answer, (MAX_ORACLE_CALLS - 2) * FIND_MAX_HITS)
        except SynthError:
            return None
        # A fact stated in no passage (only by a category line or a Wikidata statement) is
        # never a task's only evidence: some evidence is text the agent can read and cite.
        if not rows or not any(g.stated(r) for r in rows):
            return None
        # ... and the answer itself is read in text: some fact stated in a passage has each
        # of its nodes (as subject or object): the answer, each member of a list, none of a
        # computed answer (the form says which).
        read = {x for r in rows if g.stated(r) for x in (g.f_subj[r], g.f_obj[r])}
        if not all(x in read for x in question_form(draft.form).answer_nodes(draft.answer)):
            return None
        # The oracle makes one search, at most one find per evidence passage, and the
        # answer: a level whose floor of calls that cannot reach is refused before any page
        # is read (exact; every check here only rejects, so their order changes nothing).
        bound = 2 + len({g.f_pid[r] for r in rows if g.stated(r)})
        if level_problems(level, {**m, "oracle_calls": bound}):
            return None
        if level in SHORTCUT_LEVELS and anchor_shortcut(root, draft.answer, g, self._passages, ev):
            return None
        # Every value the snapshot states of what the query reads, not only the graph's.
        if unheld_value(root, ev, self.snapshot) is not None:
            return None
        m["unsurfaced"] = unsurfaced(root, ev, self.snapshot.search)
        m["fuzzy_clues"] = sum(bool(FUZZY_FORMS & set(n.forms(False))) for n in walk(root))
        if level_problems(level, m):
            return None
        form = question_form(draft.form)
        question = self.say(root)
        if question is None:
            return None
        kept = list(self.renderer.kept)
        answer, aliases, answer_type = self.answer_of(draft)
        golds = [answer, *aliases]
        leak_free = form.names_entities or names_candidate(root, draft.answer)
        if not leak_free and any(para.contains_word(question, x) for x in golds):
            return None
        constants = entity_ids(root)
        hidden = [
            e
            for r in rows
            for e in (g.f_subj[r], g.f_obj[r])
            if isinstance(e, int) and e not in constants and e != draft.answer
        ]
        hidden = list(dict.fromkeys(hidden))
        # The oracle before the hidden-name scan: evidence of thousands of rows (counts and
        # superlatives over wide sets) fails the call budget after a few pages, while the
        # scan would test every hidden title. Both only reject, so the order changes nothing.
        first = first_constant(root, self.renderer) or question[:120]
        try:
            oracle = build_oracle(g, rows, self._passages, first, answer, MAX_ORACLE_CALLS)
        except SynthError:
            return None
        if not form.names_entities and any(
            para.contains_word(question, g.titles[e]) for e in hidden
        ):
            return None
        m["oracle_calls"] = len(oracle)
        if len(oracle) > MAX_ORACLE_CALLS or level_problems(level, m):
            return None
        template_question = question
        if self.llm:
            cand = para.call_llm(self.llm, question, self.seed * 1_000_003 + index)
            forbidden = golds if not form.names_entities else []
            forbidden = [*forbidden, *(g.titles[e] for e in hidden)]
            if para.accept(cand, kept, forbidden):
                question = cand
                m["template_question"] = template_question
                m["paraphrase"] = "llm"
            else:
                m["paraphrase"] = "rejected"
        m["form"] = draft.form
        m["hidden_entities"] = len(hidden)
        m["indefinite_descriptions"] = len(self.renderer.indefinites)
        m["closed_world"] = closed_world(root, g)
        evidence, rubric = self._evidence(rows, draft, form, hidden)
        source = g.source
        if g.src is not None:  # a real wiki: every source the evidence comes from
            used = {g.source_of(r) for r in rows}
            source = "+".join(x for x in REAL_SOURCES if x in used)
        key = canonical(root) + "|" + str(draft.answer)
        digest = hashlib.sha256(key.encode()).hexdigest()[:12]
        return Task(
            task_id=f"synth-{level}-{digest}",
            question=question,
            answer=answer,
            aliases=aliases,
            answer_type=answer_type,
            level=level,
            query=wrap(root),
            evidence=evidence,
            rubric=rubric,
            oracle=oracle,
            difficulty=m,
            snapshot_id=self.snapshot.snapshot_id,
            generator=GENERATOR,
            seed=self.seed,
            source=source,
        )

    def _evidence(
        self, rows: list[int], draft: Draft, form: QuestionForm, hidden: list[int]
    ) -> tuple[Evidence, list[RubricEntry]]:
        g = self.g
        names = {e: f"[E{i + 1}]" for i, e in enumerate(hidden)}
        if isinstance(draft.answer, int) and form.masks_answer:
            names[draft.answer] = "[ANSWER]"
        else:
            for e in (draft.answer,) if isinstance(draft.answer, int) else ():
                names[e] = g.titles[e]

        def shown(x: int | str, literal_is_answer: bool) -> tuple[str, str]:
            if isinstance(x, int):
                name = names.get(x, g.titles[x])
                return name, name
            if literal_is_answer:
                return "[ANSWER]", "[ANSWER]"
            s = g.surface(x)
            return s, (f"on {s}" if len(x) == 10 and x[4] == "-" else f"in {s}")

        facts, rubric, docs, pids = [], [], [], []
        statements = self._statements([r for r in rows if not g.stated(r)])
        for r in rows:
            s, rel, o = g.f_subj[r], g.f_rel[r], g.f_obj[r]
            pid = g.f_pid[r] if g.stated(r) else None
            docs.append(s)
            if pid is not None:
                pids.append(pid)
            facts.append(
                EvidenceFact(
                    subject_doc_id=s,
                    subject=g.titles[s],
                    relation=rel,
                    object=g.f_surface[r],
                    object_doc_id=o if isinstance(o, int) else None,
                    passage_id=pid,
                    source=None if g.src is None else g.source_of(r),
                    statement=statements.get(r),
                )
            )
            lit_answer = form.masks_answer and o == draft.answer
            subj_name = names.get(s, g.titles[s])
            obj_bare, obj_at = shown(o, lit_answer)
            if not isinstance(o, int) and not lit_answer and g.f_vtype[r] != "date":
                obj_at = obj_bare
            entities = [g.titles[s], g.f_surface[r]]
            rubric.append(
                RubricEntry(
                    text=Renderer.rubric_text(rel, subj_name, obj_bare, obj_at),
                    passage_ids=[pid] if pid is not None else [],
                    entities=list(dict.fromkeys(entities)),
                    connected_to_answer=True,
                )
            )
        if isinstance(draft.answer, int) and form.masks_answer:
            docs.append(draft.answer)
        docs = list(dict.fromkeys(docs))
        evidence = Evidence(
            doc_ids=docs,
            passage_ids=list(dict.fromkeys(pids)),
            titles=[g.titles[d] for d in docs],
            facts=facts,
        )
        return evidence, rubric


def _levels(difficulty: str, n: int) -> list[str]:
    if difficulty == "mixed":
        return [LEVELS[i % len(LEVELS)] for i in range(n)]
    return [difficulty] * n


def generate_tasks(snapshot: Snapshot, config: SynthConfig) -> TaskSet:
    """``config.n`` proved tasks from ``snapshot``.

    Raises:
        SynthError: Bad options, or fewer tasks than asked could be made (the message says
            how many and what to change).
    """
    if config.difficulty not in DIFFICULTIES:
        raise SynthError(
            f"difficulty must be one of {', '.join(DIFFICULTIES)}, got {config.difficulty!r}"
        )
    if config.n < 1:
        raise SynthError(f"--n must be at least 1, got {config.n}")
    extra = opt_in_forms(config)
    g = graph_of(snapshot)
    relations = None
    if config.relations is not None:
        unknown = sorted(set(config.relations) - set(g.fwd))
        if unknown:
            raise SynthError(
                f"unknown relation(s) {', '.join(unknown)} in this snapshot; "
                f"it has: {', '.join(g.relations())}"
            )
        relations = frozenset(config.relations)
    # One random stream per level: a level's tasks depend on the seed and that level alone,
    # so a change to how phd questions are searched leaves the easy tasks of a mixed TaskSet
    # (the ones a cpu-tiny run plays) as they were, and `--difficulty easy` gives the same
    # tasks as a mixed run's easy slots.
    streams = {lv: np.random.default_rng([config.seed, 0x5E17, i]) for i, lv in enumerate(LEVELS)}
    rng = streams[LEVELS[0]]
    sampler = Sampler(g, rng, relations)
    builder = TaskBuilder(snapshot, g, rng, config.seed, config.llm, evaluator=sampler.ev)
    tasks: list[Task] = []
    seen_ids: set[str] = set()
    seen_answers: set[tuple[str, str]] = set()
    made: dict[str, int] = {}
    missing = unanswerable_slots(config.n, config.unanswerable, config.seed)
    trust = BelievedEmpty(g, snapshot.passages_of, snapshot.search)
    lengths: dict[str, list[int]] = {lv: [] for lv in LEVELS}
    length_rngs = {
        lv: np.random.default_rng([config.seed, 0x1E46, i]) for i, lv in enumerate(LEVELS)
    }
    answers_yes_no = {lv: {"yes": 0, "no": 0} for lv in LEVELS}
    for index, level in enumerate(_levels(config.difficulty, config.n)):
        rng = sampler.rng = builder.rng = streams[level]
        names, weights = level_mix(level, extra)
        # Each slot first tries the form its level's quota schedules (so every form of the
        # mix gets its share where the snapshot allows), then the weighted draw.
        cycle = form_cycle(names, weights)
        scheduled = cycle[made.get(level, 0) % len(cycle)]
        task = None
        target = None
        if index in missing and len(lengths[level]) >= LENGTH_SAMPLE:
            pool = lengths[level]
            target = pool[int(length_rngs[level].integers(len(pool)))]
        # Yes/no answers alternate within a level (the minority first): balanced 50/50.
        want_yes = answers_yes_no[level]["yes"] <= answers_yes_no[level]["no"]
        for attempt in range(config.attempts_per_task):
            if attempt < (QUOTA_ATTEMPTS_UNANSWERABLE if index in missing else QUOTA_ATTEMPTS):
                form = scheduled
            else:
                form = names[int(rng.choice(len(names), p=weights))]
            draft = sampler.draft(level, form, want_yes)
            if draft is None:
                continue
            policy = question_form(draft.form)
            # An answer this level already has is refused below whatever the build finds, and
            # the build draws nothing from ``rng``: refusing it first changes no task. Most
            # drafts of a large n end here, since answers run out before drafts do.
            unique = not policy.repeats_answers and index not in missing
            if unique and (level, builder.answer_text(draft)) in seen_answers:
                continue
            cand = builder.build(draft, level, index)
            if cand is not None and index in missing:  # its near-miss, or another draft
                near = near_miss(draft.root, g, rng, trust) if policy.perturbable else None
                said = None if near is None else builder.say(near)
                cand = None if near is None or said is None else unanswerable_task(cand, near, said)
            if cand is None or cand.task_id in seen_ids:
                continue
            if unique and (level, cand.answer) in seen_answers:
                continue
            if (
                target is not None
                and attempt < LENGTH_ATTEMPTS
                and abs(len(cand.question.split()) - target) > LENGTH_SLACK
            ):
                continue
            task = cand
            break
        if task is None and config.partial:
            break
        if task is None and index in missing and trust.refused:
            raise SynthError(
                f"made only {made.get(level, 0)} {level} task(s): a question with no answer "
                "needs facts complete for its relations (a generated world) or a text check "
                f"that finds nothing, and this snapshot's text may answer all "
                f"{trust.refused} near-miss(es) tried (last: {trust.last_reason}); lower "
                "--unanswerable"
            )
        if task is None:
            raise SynthError(
                f"made only {made.get(level, 0)} {level} task(s) after "
                f"{config.attempts_per_task:,} attempts for the next one ({len(tasks)} of "
                f"{config.n} in all); this snapshot may be too small or too sparse for {level} "
                "questions: ask for fewer (--up-to keeps what is made), an easier difficulty, "
                "or more relations"
            )
        tasks.append(task)
        if not task.unanswerable:
            lengths[level].append(len(task.question.split()))
        if task.answer_type == "yes/no":
            answers_yes_no[level][task.answer] += 1
        seen_ids.add(task.task_id)
        seen_answers.add((level, task.answer))
        made[level] = made.get(level, 0) + 1
    name = f"synth-{config.difficulty}-n{config.n}-s{config.seed}-{snapshot.snapshot_id[:12]}"
    return TaskSet(tasks, name=name)


__all__ = ["DIFFICULTIES", "GENERATOR", "SynthConfig", "TaskBuilder", "generate_tasks"]
