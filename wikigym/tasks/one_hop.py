"""One-hop questions drawn from a snapshot's facts (the default TaskSet until synth lands).

A fact (subject, relation, object) becomes "What is the <relation> of <subject>?" when the
subject has exactly one object for that relation (so the answer is unique), the fact is
stated in a known passage, and the answer does not occur in the question.
"""

from __future__ import annotations

import re

import numpy as np

from wikigym.corpora.snapshot import Snapshot
from wikigym.tasks.refs import passage_ref
from wikigym.tasks.taskset import Evidence, EvidenceFact, OracleCall, RubricEntry, Task, TaskSet

GENERATOR = "wikigym.one-hop/1"

# Phrasings for relations whose generic form reads badly; the rest use the generic one.
_TEMPLATES: dict[str, str] = {
    "born_in": "Where was {s} born?",
    "birth_place": "Where was {s} born?",
    "birth_date": "When was {s} born?",
    "death_date": "When did {s} die?",
    "death_place": "Where did {s} die?",
    "located_in": "In which country is {s} located?",
    "capital": "What is the capital of {s}?",
    "founded_by": "Who founded {s}?",
    "founder": "Who founded {s}?",
    "headquarters": "Where is {s} headquartered?",
    "author": "Who wrote {s}?",
    "director": "Who directed {s}?",
    "population": "What is the population of {s}?",
    "spouse": "Who was the spouse of {s}?",
    "nationality": "What was the nationality of {s}?",
    "mayor": "Who is the mayor of {s}?",
    "elevation_m": "What is the elevation of {s} in metres?",
    "length_km": "How long is {s} in kilometres?",
}
_SKIP_RELATIONS = {"name", "image", "caption", "website", "logo", "map", "signature", "alt"}


def _question(relation: str, subject: str) -> str:
    template = _TEMPLATES.get(relation)
    if template:
        return template.format(s=subject)
    words = re.sub(r"[_\s]+", " ", relation).strip()
    return f"What is the {words} of {subject}?"


def one_hop_tasks(snapshot: Snapshot, n: int = 500, seed: int = 0) -> TaskSet:
    """Up to ``n`` one-hop tasks from ``snapshot``'s facts, chosen with ``seed``.

    World facts are preferred when the snapshot has them (they are exact); otherwise
    infobox facts are used.
    """
    has_world = snapshot.sql("SELECT count(*) AS n FROM facts WHERE source = 'world'")
    source = "world" if has_world.column("n")[0].as_py() > 0 else "infobox"
    rows = snapshot.sql(
        """
        WITH functional AS (
            SELECT subject_doc_id, relation FROM facts WHERE source = ?
            GROUP BY subject_doc_id, relation HAVING count(*) = 1
        )
        SELECT f.fact_id, f.subject_doc_id, a.title AS subject, f.relation, f.object,
               f.object_doc_id, f.passage_id, f.value_type,
               coalesce(o.redirects_from, []::VARCHAR[]) AS aliases, o.title AS object_title
        FROM facts f
        JOIN functional USING (subject_doc_id, relation)
        JOIN articles a ON a.doc_id = f.subject_doc_id
        LEFT JOIN articles o ON o.doc_id = f.object_doc_id
        WHERE f.source = ? AND f.passage_id IS NOT NULL
          AND length(f.object) BETWEEN 1 AND 60
        ORDER BY f.fact_id
        """,
        [source, source],
    ).to_pylist()
    candidates = []
    for r in rows:
        if r["relation"] in _SKIP_RELATIONS:
            continue
        question = _question(r["relation"], r["subject"])
        if r["object"].casefold() in question.casefold():
            continue
        candidates.append((r, question))
    rng = np.random.default_rng(seed)
    order: list[int] = [int(x) for x in rng.permutation(len(candidates))[:n]] if candidates else []
    tasks = []
    for i in sorted(int(x) for x in order):
        r, question = candidates[i]
        aliases = [a for a in [r["object_title"], *r["aliases"]] if a and a != r["object"]]
        pid = r["passage_id"]
        tasks.append(
            Task(
                task_id=f"onehop-{r['fact_id']}",
                question=question,
                answer=r["object"],
                aliases=list(dict.fromkeys(aliases)),
                answer_type=r["value_type"],
                level="easy",
                query={"op": "project", "relation": r["relation"], "subject": r["subject"]},
                evidence=Evidence(
                    doc_ids=[r["subject_doc_id"]],
                    passage_ids=[pid],
                    titles=[r["subject"]],
                    facts=[
                        EvidenceFact(
                            subject_doc_id=r["subject_doc_id"],
                            subject=r["subject"],
                            relation=r["relation"],
                            object=r["object"],
                            object_doc_id=r["object_doc_id"],
                            passage_id=pid,
                        )
                    ],
                ),
                rubric=[
                    RubricEntry(
                        text=f"{r['subject']} -- {r['relation']} -> [ANSWER]",
                        passage_ids=[pid],
                        entities=[r["subject"]],
                    )
                ],
                oracle=[
                    OracleCall(name="search", arguments={"query": question, "k": 5}),
                    OracleCall(name="open", arguments={"page": r["subject"]}),
                    OracleCall(
                        name="answer",
                        arguments={"text": r["object"], "citations": [passage_ref(pid)]},
                    ),
                ],
                difficulty={"hops": 1, "constraints": 1},
                snapshot_id=snapshot.snapshot_id,
                generator=GENERATOR,
                seed=seed,
                source=source,
            )
        )
    return TaskSet(tasks, name=f"one-hop-{snapshot.snapshot_id[:12]}")
