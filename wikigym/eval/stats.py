"""Intervals for success rates: one proportion (Wilson) and the change between two runs on the
same tasks (Newcombe's interval for a paired difference)."""

from __future__ import annotations

import math

# The Wilson interval's one home is the tasks room (synth's calibration reports it too).
from wikigym.tasks.stats import Z95, wilson


def paired_difference(
    both: int, only_a: int, only_b: int, neither: int, z: float = Z95
) -> tuple[float, float, float]:
    """The change in success rate from run A to run B on the same tasks, with its interval.

    Newcombe's (1998) method 10: Wilson intervals of each run's rate, combined with the
    correlation of the paired outcomes (phi of the 2x2 table, continuity-corrected when
    positive).

    Args:
        both: Tasks both runs solved.
        only_a: Tasks only A solved (broken by B).
        only_b: Tasks only B solved (fixed by B).
        neither: Tasks neither solved.

    Returns:
        ``(difference, low, high)`` of ``rate_B - rate_A`` (all 0 for no tasks).
    """
    n = both + only_a + only_b + neither
    if n == 0:
        return (0.0, 0.0, 0.0)
    p_a, p_b = (both + only_a) / n, (both + only_b) / n
    l_a, u_a = wilson(both + only_a, n, z)
    l_b, u_b = wilson(both + only_b, n, z)
    margins = (both + only_a) * (only_b + neither) * (both + only_b) * (only_a + neither)
    cross: float = both * neither - only_a * only_b
    if cross > 0:  # Newcombe's correction: without it no discordant pair gives a zero width
        cross = max(cross - n / 2, 0.0)
    phi = cross / math.sqrt(margins) if margins else 0.0
    diff = p_b - p_a
    low = diff - math.sqrt(
        max(0.0, (p_b - l_b) ** 2 - 2 * phi * (p_b - l_b) * (u_a - p_a) + (u_a - p_a) ** 2)
    )
    high = diff + math.sqrt(
        max(0.0, (u_b - p_b) ** 2 - 2 * phi * (u_b - p_b) * (p_a - l_a) + (p_a - l_a) ** 2)
    )
    return (diff, max(-1.0, low), min(1.0, high))


__all__ = ["Z95", "paired_difference", "wilson"]
