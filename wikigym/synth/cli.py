"""The ``synth`` command line (query synthesis)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``synth``; the synthesizer has not landed yet."""
    parser = argparse.ArgumentParser(
        prog="synth",
        description="Synthesize verifiable multi-hop questions from a wikigym snapshot.",
    )
    parser.add_argument("command", nargs="?", choices=["generate", "verify", "stats"])
    parser.parse_known_args(argv)
    print("synth: not yet available in this version of wikigym", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
