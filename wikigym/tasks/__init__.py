"""wikigym.tasks: questions to run episodes on (below envs and synth, above corpora).

- :mod:`~wikigym.tasks.taskset`: :class:`Task`, :class:`TaskSet` (content-addressed files).
- :mod:`~wikigym.tasks.importers`: HotpotQA, NQ-open and generic JSONL as TaskSets.
- :mod:`~wikigym.tasks.one_hop`: one-hop questions of any snapshot with facts.
- :mod:`~wikigym.tasks.defaults`: the defaults resolver (which snapshot and TaskSet a run
  uses, shared per process); :mod:`~wikigym.tasks.hooks`: the one slot through which the
  package root (:mod:`wikigym.defaults`) serves the rooms below it.
- :mod:`~wikigym.tasks.refs`, :mod:`~wikigym.tasks.limits`, :mod:`~wikigym.tasks.layout`:
  citation ids, tool-argument bounds and the page layout that tools and task sources share.
- :mod:`~wikigym.tasks.stats`, :mod:`~wikigym.tasks.cli`: counts and ``wikigym tasks``.

Nothing is imported here, so that light users (the hooks slot) stay light.
"""
