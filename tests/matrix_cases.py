"""The scheduler x searcher matrix the tests run: every pair that can run together, at sample counts 1 to 6.

tests/unit/test_matrix_decisions.py plays every case on the replay engine's simulated clock (the decisions:
every trial ends, no bracket waits for ever); tests/integration/test_matrix.py runs them on a real Ray, each
algorithm once in the fast tier and the other cases of the schedulers that pause trials in the slow tier.
"""

from __future__ import annotations

from tuner import schedulers, searchers

PAIRS = [
    (scheduler, searcher)
    for scheduler in schedulers.NAMES
    for searcher in searchers.NAMES
    if schedulers.REGISTRY[scheduler].requires_searcher in (None, searcher)
    and searchers.REGISTRY[searcher].requires_scheduler in (None, scheduler)
]


def _counts(index: int) -> tuple[int, ...]:
    """Sample counts per pair, together covering 1 to 6: three for schedulers that hold trials in brackets
    (where a count that leaves a bracket short used to hang), one for the others."""
    if schedulers.REGISTRY[PAIRS[index][0]].pauses_trials:
        return (1 + index % 2, 3 + index % 2, 5 + index % 2)
    return (1 + index % 6,)


CASES = [(s, r, n) for i, (s, r) in enumerate(PAIRS) for n in _counts(i)]


def _once() -> list[tuple[str, str, int]]:
    """Every scheduler and every searcher in at least one case: for each algorithm not yet in one, its case
    with the fewest trials above one (two trials give a scheduler something to compare; the simulated cover
    runs every count)."""
    out: list[tuple[str, str, int]] = []
    for name in [*schedulers.NAMES, *searchers.NAMES]:
        if any(name in case[:2] for case in out):
            continue
        out.append(min((c for c in CASES if name in c[:2]), key=lambda c: (c[2] < 2, c[2])))
    return out


ONCE = _once()
