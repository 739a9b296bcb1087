"""The embedded default corpus: a seeded generator of a fictional encyclopedia.

``generate_world(WorldConfig(articles=..., seed=...), out_dir)`` writes a MediaWiki
XML dump (``world.xml``), the exact facts of every page (``world.facts.jsonl``) and
metadata (``world.json``).
"""

from wikigym.corpora.world.generate import GENERATOR_VERSION, WorldConfig, generate_world

__all__ = ["GENERATOR_VERSION", "WorldConfig", "generate_world"]
