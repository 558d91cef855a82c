"""HyperBand's bracket arithmetic, with no Ray: how many trials each bracket takes and the epochs of its rounds.

Shared by the scheduler entries (the plan's lines, the most epochs a sweep can train) and the recording
brackets (tuner/schedulers/hyperband_rule.py), which run on these rounds.
"""

from __future__ import annotations

import math

from tuner.schedulers.base import REDUCTION_FACTOR


def rounds(max_epochs: int, eta: float, s: int) -> list[int]:
    """The epochs at which a bracket with ``s`` halvings compares its trials, the last one ``max_epochs``.

    Ray's brackets start at ``int(max_t / eta**s)`` and multiply by eta, so unless max_t is a power of eta
    they stop short of it (27 epochs, eta 2: 16, 24 and 26); here each round is max_t / eta**k rounded
    (27, eta 2: 2, 3, 7, 14, 27), so every bracket's survivors train all their epochs.
    """
    out: list[int] = []
    for k in range(s, -1, -1):
        r = max(1, int(round(max_epochs / eta**k)))
        out.append(max(r, out[-1] + 1) if out else r)
    out[-1] = max_epochs
    return out


def brackets(max_epochs: int, eta: int = REDUCTION_FACTOR) -> list[tuple[int, list[int]]]:
    """HyperBand's brackets in the order trials fill them: (trials, epochs at each round); Ray's sizes and
    bracket count, with ``rounds`` that reach ``max_epochs``."""
    s_max_1 = int(round(math.log(max_epochs) / math.log(eta))) + 1 if max_epochs > 1 else 1
    out = []
    for s in range(s_max_1):
        if int(max_epochs * eta ** (-s)) == 0:  # Ray leaves out a bracket too small to start
            continue
        n0 = int(math.ceil(s_max_1 / (s + 1) * eta**s))
        out.append((n0, rounds(max_epochs, eta, s)))
    return out


def fill(
    num_samples: int, max_epochs: int, eta: int = REDUCTION_FACTOR, largest_first: bool = False
) -> list[tuple[int, int, list[int]]]:
    """The brackets ``num_samples`` trials fill, as (trials, bracket size, rounds); bands repeat, each from its
    largest bracket down where ``largest_first`` (BOHB's order)."""
    out, left = [], num_samples
    plan = brackets(max_epochs, eta)
    while left > 0:
        for n0, rounds in reversed(plan) if largest_first else plan:
            take = min(n0, left)
            out.append((take, n0, rounds))
            left -= take
            if left == 0:
                break
    return out


def bracket_epochs(n: int, n0: int, rounds: list[int], eta: int = REDUCTION_FACTOR) -> int:
    """Epochs a bracket trains: each round keeps ceil(size / eta) of its size, as Ray's halving does."""
    total, alive, keep, start = 0, n, n0, 0
    for r in rounds:
        total += alive * (r - start)
        keep = int(math.ceil(keep / eta))
        start, alive = r, min(alive, keep)
    return total
