"""How much the graph keeps, and when it reads facts instead of building a set.

Read at call time (``limits.CACHE_MIN``), so a test or a benchmark can set them.
"""

from __future__ import annotations

# A range is tested on the entities the other constraints leave when it covers this many
# times more facts than they are entities (an entity has a handful of facts to read, a
# built range is sorted once); a range built before and kept is bisected into instead.
# 4 and 16 measured within noise of each other on the 1M world (16 slightly ahead).
PROBE_RATIO = 16
CACHE_MIN = 512  # subject sets at least this large are kept once built
CACHE_CAP = 4_000_000  # members of the kept sets at most (then the cache starts afresh)
