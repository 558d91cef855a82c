"""FIFO: every trial trains all its epochs; nothing is stopped early."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.schedulers.base import SchedulerContext, SchedulerEntry

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler


class Fifo(SchedulerEntry):
    name = "fifo"
    reads = ()
    summary = "every trial runs all its epochs"
    ends_at_max_epochs = True
    multi_objective = True  # it decides nothing

    def build(self, ctx: SchedulerContext) -> TrialScheduler:
        from tuner.schedulers.rule_base import OpenFirstFIFO

        return OpenFirstFIFO()

    def describe(self, ctx: SchedulerContext) -> list[str]:
        return [f"FIFO: every trial runs all {ctx.max_epochs} epochs"]
