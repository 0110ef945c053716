"""How a piece of work's cost grows with its input, for the tests that promise linear work.

A test never asserts a speed (the machine may be loaded, or slow): it asserts a *growth*.
``growth(work, small, large)`` runs ``work(small)`` and ``work(large)``, timing the CPU this
process spends (``time.process_time``: another process's load does not count), the best of
a few runs each, and returns ``large``'s time divided by ``small``'s. With inputs eight times
apart, linear work grows about 8 times and quadratic work about 64 times, so
``LINEAR_AT_8X`` (24) tells them apart with room for noise either way. The speeds themselves
are measured in bench/.
"""

from __future__ import annotations

import time
from collections.abc import Callable

LINEAR_AT_8X = 24.0  # the most an 8-times-larger input may cost, against the smaller one


def cpu_seconds(work: Callable[[], object], runs: int = 3) -> float:
    """The best CPU time of ``runs`` runs of ``work()`` in this process."""
    best = float("inf")
    for _ in range(runs):
        began = time.process_time()
        work()
        best = min(best, time.process_time() - began)
    return best


def growth(work: Callable[[object], object], small: object, large: object, runs: int = 3) -> float:
    """``work(large)``'s CPU time over ``work(small)``'s (the smaller at least 1 ms, so a
    quick small run cannot make the ratio huge)."""
    cost_small = cpu_seconds(lambda: work(small), runs)
    cost_large = cpu_seconds(lambda: work(large), runs)
    return cost_large / max(cost_small, 0.001)
