"""Median stopping: a trial whose best so far is worse than the median of the others' running means stops."""

from __future__ import annotations

from typing import Any

from tuner.objectives import Objective
from tuner.schedulers.base import SchedulerContext, SchedulerEntry, ranking

MIN_SAMPLES = 3


class Median(SchedulerEntry):
    name = "median"
    summary = "median stopping rule: stop a trial worse than the median of the others at the same epoch"
    # several objectives: the worse half by fronts stops (tuner/schedulers/pareto_median.py)
    multi_objective = True
    stops_as = "median rule"

    def stopped_label(self, ctx: SchedulerContext) -> str | None:
        return None if ctx.ranked_by_front else self.stops_as  # ranked by fronts: its status line counts them

    def build(self, ctx: SchedulerContext) -> Any:
        from tuner.ray_compat.schedulers import RecordingMedian

        if ctx.ranked_by_front:
            from tuner.schedulers.pareto_median import ParetoMedian

            return ParetoMedian(
                ctx.grace_period,
                MIN_SAMPLES,
                ctx.objectives or (Objective(ctx.metric, ctx.mode),),
                ctx.constraints,
                fate_log=ctx.fate_log,
            )

        # It never pauses a trial while too few others have reported (tuner/ray_compat/schedulers.py).
        return RecordingMedian(
            time_attr="training_iteration",
            grace_period=ctx.grace_period,
            fate_log=ctx.fate_log,
            min_samples_required=MIN_SAMPLES,
        )

    def describe(self, ctx: SchedulerContext) -> list[str]:
        if ctx.ranked_by_front:
            return [
                f"median stopping by fronts: from epoch {ctx.grace_period} on, once {MIN_SAMPLES} other trials "
                f"have reported an epoch, a trial whose result is in the worse half there stops; the rest run to "
                f"{ctx.max_epochs} epochs. Ranked by {ranking(ctx)}"
            ]
        return [
            f"median stopping: from epoch {ctx.grace_period} on, a trial whose best {ctx.metric} so far is worse "
            f"than the median of the other trials' running means at that epoch stops (once {MIN_SAMPLES} "
            f"trials have reported); the rest run to {ctx.max_epochs} epochs"
        ]
