"""Search-R1 tag chats: the shortest oracle trajectories a from-scratch policy can learn from.

A chat is the question, ``<search> QUESTION </search>``, the env's observation, then
``<answer> ANSWER </answer>`` when those results show the answer; otherwise a second search for
the entity the oracle searched (``<search> ENTITY </search>``), its observation, and the answer
when that one shows it. Tasks whose answer neither search shows are left out: a chat that
answers what it was not shown teaches guessing.

Why this form (``bench_learning_search``, issue 14): the tags are a call format the env parses
natively in every ``tool_format`` (Search-R1's), with no JSON and no citation to copy, so the
policy's turns are the question copied into a query and the answer copied out of a result.
Those two copies are the whole skill, and a tiny model trained from scratch learns them from
tens of thousands of such chats. The result count is the env's ``search_k`` (a tag has no place
for one; Search-R1's retriever returns 3).

Every chat is replayed through the env and kept only if its answer gets a positive outcome
reward, unmasked: the observations are the env's own.
"""

from __future__ import annotations

import re
from typing import Any

from wikigym.envs.wiki_search import WikiSearchEnv
from wikigym.errors import WikigymError
from wikigym.trainers.adapter import EnvSpec
from wikigym.trainers.coldstart import compact_prompt, oracle_taskset


def shown_in(text: str, where: str) -> bool:
    """Whether ``where`` holds ``text`` as whole words (``5`` is not shown by ``p1523`` or
    ``1905``)."""
    return re.search(r"(?<!\w)" + re.escape(text) + r"(?!\w)", where) is not None


def shows(text: str, hits: list[Any]) -> bool:
    """Whether a hit's title or text holds ``text`` as whole words (:func:`shown_in`)."""
    return any(shown_in(text, h.title) or shown_in(text, h.text) for h in hits)


def tag_chats(spec: EnvSpec) -> list[dict[str, Any]]:
    """The tag chats of ``spec``'s TaskSet (see the module docstring), in task order; each
    ``{"messages", "task_id", "searches"}``.

    Raises:
        WikigymError: ``spec`` has no TaskSet.
    """
    taskset = oracle_taskset(spec)
    env = spec.make()
    inner = env.unwrapped
    if not isinstance(inner, WikiSearchEnv):
        env.close()
        raise WikigymError(f"tag chats are WikiSearch-v1 episodes, not {spec.env_id}")
    out: list[dict[str, Any]] = []
    try:
        snapshot = inner.snapshot
        k = inner.toolbox.config.search_k
        for i, task in enumerate(taskset):
            entity = next(
                (str(c.arguments["query"]) for c in task.oracle if c.name == "search"), None
            )
            queries = [task.question] + ([entity] if entity else [])
            # The searches up to the first whose results show the answer (what the env shows).
            route: list[str] = []
            for query in queries:
                route.append(query)
                if shows(task.answer, snapshot.search(query, k)):
                    break
            else:
                continue
            chat = _replay(env, task, route, seed=i)
            if chat is not None:
                out.append({"messages": chat, "task_id": task.task_id, "searches": len(route)})
    finally:
        env.close()
    return out


def _replay(env: Any, task: Any, queries: list[str], *, seed: int) -> list[dict[str, Any]] | None:
    """The chat of ``queries`` then the answer, played through ``env``; None unless the answer
    ends the episode with a positive outcome, unmasked."""
    env.reset(seed=seed, options={"task_id": task.task_id})
    # The question alone: the policy learns the tags from these chats (GRPO and evaluation
    # prompt the same way, compact_rows and compact_prompt without the system text).
    messages: list[dict[str, Any]] = compact_prompt(task.question, system=False)
    for query in queries:
        action = f"<search> {query} </search>"
        obs, _, terminated, truncated, _ = env.step(action)
        if terminated or truncated:
            return None
        messages += [{"role": "assistant", "content": action}, {"role": "tool", "content": obs}]
    action = f"<answer> {task.answer} </answer>"
    _, reward, terminated, _, info = env.step(action)
    outcome = (info.get("reward_components") or {}).get("outcome", reward)
    if not terminated or info.get("mask") or outcome <= 0:
        return None
    messages.append({"role": "assistant", "content": action})
    return messages
