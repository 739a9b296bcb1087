"""wikigym.synth: verifiable multi-hop questions with proofs (WebShaper-style formal queries).

A knowledge graph of a snapshot's facts (:mod:`~wikigym.synth.graph`); formal queries
(:mod:`~wikigym.synth.query`) whose node types and question forms are one module each
(:mod:`~wikigym.synth.forms`, on :mod:`~wikigym.synth.node` and :mod:`~wikigym.synth.drafts`),
drafted layer by layer (:mod:`~wikigym.synth.sampler`), proved unique by evaluation
(:mod:`~wikigym.synth.evaluate`), rendered by templates (:mod:`~wikigym.synth.render`), with
evidence, rubric and an oracle trajectory (:mod:`~wikigym.synth.oracle`); levels in
:mod:`~wikigym.synth.levels`.
"""

from wikigym.errors import SynthError
from wikigym.synth.default import default_taskset
from wikigym.synth.generate import GENERATOR, SynthConfig, generate_tasks
from wikigym.synth.verify import verify_taskset

__all__ = [
    "GENERATOR",
    "SynthConfig",
    "SynthError",
    "default_taskset",
    "generate_tasks",
    "verify_taskset",
]
