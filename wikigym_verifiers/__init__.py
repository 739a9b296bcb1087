"""The verifiers taskset id ``wikigym-verifiers``: ``vf-eval wikigym-verifiers ...``.

verifiers imports a taskset by a top-level module name (a dotted id is looked up under its
own ``verifiers.v1.tasksets`` package first, which fails), so this one-line package
re-exports :mod:`wikigym.integrations.verifiers`, where the code lives.
"""

from wikigym.integrations.verifiers import *  # noqa: F403
from wikigym.integrations.verifiers import __all__ as __all__
