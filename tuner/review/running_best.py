"""The best value so far over a sweep's trials, as every best-so-far figure draws it (the report, ``tuner plot``,
``tuner compare``): a trial that breaks a constraint is never the best, so the line passes it by."""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import TYPE_CHECKING

from tuner.objectives import pick

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord, TrialRecord


def running_best(experiment: ExperimentRecord, trials: Sequence[TrialRecord]) -> list[float | None]:
    """For each trial in the order given, the best of the metric so far among those within the constraints;
    None before the first of them."""
    metric, mode = experiment.metric, experiment.mode
    better = pick(mode)
    out: list[float | None] = []
    for t in trials:
        kept = out[-1] if out else None
        value = None if experiment.breaks(t) else t.scored(metric, mode)
        out.append(kept if value is None else value if kept is None else better(kept, value))
    return out


def improvements(values: Sequence[float | None]) -> list[int]:
    """Where a best-so-far line steps to a better value (its first value included): marked, so that a line of
    one point, such as a sweep whose only trial within its bounds came last, still shows."""
    return [
        i
        for i, v in enumerate(values)
        if v is not None and not math.isnan(v) and (i == 0 or v != values[i - 1])
    ]
