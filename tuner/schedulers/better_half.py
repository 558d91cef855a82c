"""Where a trial stands among every trial's best value so far at one epoch: the halving rule freeze-thaw keeps
for a trainable without checkpoints, where a stop cannot be undone (tuner/schedulers/curve_scheduler.py)."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class BetterShare:
    """A trial's place among every trial's best value so far at one epoch, and whether that is within the better
    ``1 / growth`` of them (a halving rule like ASHA's, on best values so far)."""

    kept: bool
    place: int
    of: int
    epoch: int
    growth: float
    metric: str
    value: float  # the trial's best so far there, and the last value within the share, in the metric's units
    cutoff: float

    def __str__(self) -> str:
        where = "within" if self.kept else "outside"
        if not math.isfinite(self.value):
            return f"it has reported no finite {self.metric} by epoch {self.epoch}"
        return (
            f"its best {self.metric} so far, {self.value:.4g}, ranks {self.place} of {self.of} at epoch "
            f"{self.epoch}, {where} the better {share_said(self.growth)} (cutoff {self.cutoff:.4g})"
        )


def share_said(growth: float) -> str:
    """The better ``1 / growth`` in words: "half" when each check doubles a trial's epochs."""
    return {2.0: "half", 3.0: "third", 4.0: "quarter"}.get(growth, f"1/{growth:g}")


def among_better(
    curves: Mapping[str, Sequence[float]], trial_id: str, epoch: int, growth: float, metric: str, sign: float
) -> BetterShare:
    """Where ``trial_id``'s best value so far stands among every trial's (its own included) at ``epoch``: within
    the better ``1 / growth`` of them when fewer than ``max(1, n / growth)`` are strictly better. ``curves`` hold
    best values so far with higher better; ``sign`` turns them back into the metric's own."""
    mine = curves.get(trial_id) or []
    own = mine[epoch - 1] if len(mine) >= epoch else -math.inf
    there = sorted(
        (c[epoch - 1] for c in curves.values() if len(c) >= epoch and math.isfinite(c[epoch - 1])),
        reverse=True,
    )
    share = max(1.0, len(there) / growth)
    ahead_of_it = sum(v > own for v in there)
    cutoff = there[min(math.ceil(share), len(there)) - 1] if there else own
    return BetterShare(
        math.isfinite(own) and ahead_of_it < share,
        ahead_of_it + 1,
        len(there),
        epoch,
        growth,
        metric,
        sign * own,
        sign * cutoff,
    )
