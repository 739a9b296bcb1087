"""wikigym.eval: run agents on WikiSearch-v1 tasks and report success by level.

- :mod:`wikigym.eval.agents`: the :class:`Agent` protocol, the oracle agent and
  :func:`make_agent` (``oracle``, ``heuristic``, ``openai:URL``, ``hf:PATH``).
- :mod:`wikigym.eval.heuristic`: a no-LLM search baseline that calibrates difficulty.
- :mod:`wikigym.eval.openai_agent`, :mod:`wikigym.eval.hf_agent`: model-driven agents.
- :mod:`wikigym.eval.runner`: episodes with recorded, replayable trajectories.
- :mod:`wikigym.eval.report`: ``summary.json``, ``report.md`` and plots.
- :mod:`wikigym.eval.cli`: the ``wikigym eval`` subcommand.
"""
