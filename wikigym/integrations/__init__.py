"""wikigym.integrations: thin adapters for other trainers and frameworks (rank 6).

Each module imports its framework only when it is imported itself, and is an optional
extra of the package: ``skyrl`` (:mod:`wikigym.integrations.skyrl`), ``gem``
(:mod:`wikigym.integrations.gem`), ``verifiers`` (:mod:`wikigym.integrations.verifiers`),
``verl`` (:mod:`wikigym.integrations.verl`). Nothing in wikigym imports this package.
"""
