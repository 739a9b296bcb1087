"""The agent factory: an agent from its command-line spec (``oracle``, ``heuristic``, ...).

Its own module, so that the agents import the interface (:mod:`wikigym.eval.agents`) and the
factory imports the agents, never the other way round. Model-driven agents load on use.
"""

from __future__ import annotations

from wikigym.errors import EvalError
from wikigym.eval.agents import Agent, OracleAgent

AGENT_SPECS = ("oracle", "heuristic", "reference", "openai:URL", "hf:PATH")


def make_agent(
    spec: str,
    *,
    seed: int = 0,
    model: str | None = None,
    timeout_s: float = 120.0,
    max_new_tokens: int = 512,
    max_steps: int = 12,
    temperature: float = 0.0,
) -> Agent:
    """Build an agent from its command-line spec.

    Args:
        spec: ``oracle``, ``heuristic``, ``reference`` (plans from the task's query,
            :mod:`wikigym.eval.reference`), ``openai:URL`` (an OpenAI-compatible endpoint,
            e.g. ``openai:http://127.0.0.1:8000/v1``) or ``hf:PATH`` (a local transformers
            model directory).
        seed: Sampling seed passed to model-driven agents.
        model: Model name sent to an OpenAI-compatible endpoint (default: ``default``).
        timeout_s: The OpenAI agent's deadline per request (connect to last byte).
        max_new_tokens: Generation budget per turn of model-driven agents.
        max_steps: The env's step budget (the heuristic answers before it is spent).
        temperature: Sampling temperature of model-driven agents (0: greedy).

    Raises:
        EvalError: An unknown spec (the message lists the accepted forms).
    """
    if spec == "oracle":
        return OracleAgent()
    if spec == "heuristic":
        from wikigym.eval.heuristic import HeuristicAgent

        return HeuristicAgent(max_steps=max_steps)
    if spec == "reference":
        from wikigym.eval.reference import ReferenceAgent

        return ReferenceAgent(max_steps=max_steps)
    kind, _, target = spec.partition(":")
    if kind == "openai" and target:
        from wikigym.eval.openai_agent import OpenAIAgent

        return OpenAIAgent(
            target, model=model or "default", seed=seed, timeout_s=timeout_s,
            max_tokens=max_new_tokens, temperature=temperature,
        )  # fmt: skip
    if kind == "hf" and target:
        from wikigym.eval.hf_agent import HFAgent

        return HFAgent(target, seed=seed, max_new_tokens=max_new_tokens, temperature=temperature)
    raise EvalError(f"unknown agent {spec!r}; expected one of {', '.join(AGENT_SPECS)}")
