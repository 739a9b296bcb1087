"""The question forms and node types of synth's formal queries: one module each.

Each module holds one node type (:class:`wikigym.synth.node.Node`, registered by its JSON op)
with everything about it (evaluation, witnesses, minimisation, wording, answers) and, where
the node makes a kind of question, that question form (:class:`wikigym.synth.drafts.
QuestionForm`, registered by name: how it is drafted). Importing this package imports every
module in it, in name order, so a new form is its module (and its test): nothing else lists
it.
"""

from __future__ import annotations

import importlib
import pkgutil

for _module in sorted(m.name for m in pkgutil.iter_modules(__path__)):
    importlib.import_module(f"{__name__}.{_module}")
