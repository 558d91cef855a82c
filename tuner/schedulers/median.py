"""Median stopping: a trial whose best so far is worse than the median of the others' running means stops."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.schedulers.base import SchedulerContext, SchedulerEntry, comparison

if TYPE_CHECKING:  # the rules import Ray; --help and the plan do not need it
    from tuner.schedulers.median_rule import MedianRule

MIN_SAMPLES = 3


class Median(SchedulerEntry):
    name = "median"
    reads = ("grace_period",)
    summary = "median stopping rule: stop a trial worse than the median of the others at the same epoch"
    # several objectives: the worse half by fronts stops (tuner/schedulers/median_rule.py)
    multi_objective = True
    ranks_constraints = True
    stops_as = "median rule"

    def build(self, ctx: SchedulerContext) -> MedianRule:
        from tuner.schedulers.median_rule import MedianRule

        return MedianRule(
            ctx.grace_period, MIN_SAMPLES, comparison(ctx), fate_log=ctx.fate_log, max_t=ctx.max_epochs
        )

    def describe(self, ctx: SchedulerContext) -> list[str]:
        by = comparison(ctx).ranked_by()
        if by is not None:  # another rule than Ray's: the worse half by fronts at each epoch
            return [
                f"median stopping by fronts: from epoch {ctx.grace_period} on, once {MIN_SAMPLES} other trials "
                f"have reported an epoch, a trial whose result is in the worse half there stops; the rest run to "
                f"{ctx.max_epochs} epochs. Ranked by {by}"
            ]
        return [
            f"median stopping: from epoch {ctx.grace_period} on, a trial whose best {ctx.objective.name} so far is worse "
            f"than the median of the other trials' running means at that epoch stops (once {MIN_SAMPLES} "
            f"trials have reported); the rest run to {ctx.max_epochs} epochs"
        ]
