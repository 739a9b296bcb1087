"""Optional LLM paraphrases of template questions (OpenAI-compatible chat API, via urllib).

A paraphrase is kept only if it still names every constant of the query (their surface
forms occur, case-folded) and does not contain the answer or any alias (normalised); else the
template question stays. The endpoint is ``URL`` if it ends in ``/chat/completions``, else
``URL/chat/completions``. The model name comes from ``$WIKIGYM_LLM_MODEL`` (default
``default``); temperature 0 and the task seed are sent, but whether the server honours them
is up to the server.
"""

from __future__ import annotations

import json
import os
import urllib.error
import urllib.request
from collections.abc import Sequence

from wikigym.envs.metrics import normalize_answer
from wikigym.errors import SynthError

_PROMPT = (
    "Rewrite the question below in fluent, natural English. Keep every name, number, date and "
    "range exactly as written, keep every condition, add nothing, and do not answer it. Reply "
    "with the rewritten question only.\n\nQuestion: {q}"
)


def endpoint(url: str) -> str:
    url = url.rstrip("/")
    return url if url.endswith("/chat/completions") else url + "/chat/completions"


def contains_word(text: str, phrase: str) -> bool:
    """Whether normalised ``phrase`` occurs in normalised ``text`` on word boundaries."""
    p = normalize_answer(phrase)
    return bool(p) and f" {p} " in f" {normalize_answer(text)} "


def call_llm(url: str, question: str, seed: int, timeout: float = 60.0) -> str:
    """The model's rewrite of ``question`` (stripped).

    Raises:
        SynthError: The endpoint cannot be reached or answers something else than a chat
            completion.
    """
    body = {
        "model": os.environ.get("WIKIGYM_LLM_MODEL", "default"),
        "messages": [{"role": "user", "content": _PROMPT.format(q=question)}],
        "temperature": 0,
        "seed": seed,
    }
    req = urllib.request.Request(
        endpoint(url),
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
        method="POST",
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            data = json.loads(resp.read().decode("utf-8"))
        text = data["choices"][0]["message"]["content"]
    except (urllib.error.URLError, TimeoutError, OSError) as exc:
        raise SynthError(f"--llm {url}: cannot reach the endpoint ({exc}); check the URL") from exc
    except (ValueError, KeyError, IndexError, TypeError) as exc:
        raise SynthError(
            f"--llm {url}: expected an OpenAI chat completion with choices[0].message.content"
        ) from exc
    return str(text).strip().strip('"').strip()


def accept(paraphrase: str, must_keep: Sequence[str], forbidden: Sequence[str]) -> bool:
    """Whether a paraphrase keeps every constant and leaks nothing forbidden."""
    if not paraphrase or len(paraphrase) > 2000:
        return False
    low = paraphrase.casefold()
    if any(k.casefold() not in low for k in must_keep):
        return False
    return not any(contains_word(paraphrase, f) for f in forbidden)
