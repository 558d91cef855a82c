"""ASHA: asynchronous successive halving; a trial continues past a rung only if it is among the best there."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.schedulers.base import (
    GRACE_PERIOD,
    REDUCTION_FACTOR,
    SchedulerContext,
    SchedulerEntry,
    comparison,
)

if TYPE_CHECKING:  # the rules import Ray; --help and the plan do not need it
    from tuner.schedulers.asha_rule import AshaRule


def rungs(max_epochs: int, grace: int = GRACE_PERIOD, eta: int = REDUCTION_FACTOR) -> list[int]:
    """The epochs at which ASHA compares trials (Ray's milestones below ``max_t``)."""
    out, epoch = [], min(grace, max_epochs)
    while epoch < max_epochs:
        out.append(epoch)
        epoch *= eta
    return out


class Asha(SchedulerEntry):
    name = "asha"
    summary = (
        "asynchronous successive halving: all but the best 1/N stopped at each rung (N: --reduction-factor)"
    )
    # several objectives: ranked by fronts at each rung (tuner/schedulers/comparing.py)
    multi_objective = True
    ranks_constraints = True
    stops_as = "ASHA"

    def build(self, ctx: SchedulerContext) -> AshaRule:
        from tuner.schedulers.asha_rule import AshaRule

        return AshaRule(
            ctx.max_epochs,
            rungs(ctx.max_epochs, ctx.grace_period, ctx.reduction_factor),
            ctx.reduction_factor,
            comparison(ctx),
            fate_log=ctx.fate_log,
        )

    def describe(self, ctx: SchedulerContext) -> list[str]:
        at = rungs(ctx.max_epochs, ctx.grace_period, ctx.reduction_factor)
        if not at:
            return [f"ASHA: no rung below {ctx.max_epochs} epoch(s), so every trial runs to the end"]
        expected = expected_epochs(ctx.num_samples, ctx.max_epochs, ctx.grace_period, ctx.reduction_factor)
        by = comparison(ctx).ranked_by()
        return [
            f"ASHA: rungs at epoch {', '.join(map(str, at))} (max {ctx.max_epochs}); at each, a trial goes on only "
            f"if it is in the best 1/{ctx.reduction_factor} of results reported there so far"
            + (f", ranked by {by}" if by else ""),
            f"  about {expected} epochs in all if results arrive in no particular order",
        ]


def expected_epochs(
    num_samples: int, max_epochs: int, grace: int = GRACE_PERIOD, eta: int = REDUCTION_FACTOR
) -> int:
    """Epochs when each rung passes 1/eta of the trials that reach it."""
    total, alive, start = 0.0, float(num_samples), 0
    for stop in [*rungs(max_epochs, grace, eta), max_epochs]:
        total += alive * (stop - start)
        alive, start = alive / eta, stop
    return int(round(total))
