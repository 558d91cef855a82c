"""HyperBand (synchronous brackets) and BOHB (HyperBand with BOHB's model-based searcher)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.schedulers.base import SchedulerContext, SchedulerEntry, comparison
from tuner.schedulers.brackets import bracket_epochs, fill

if TYPE_CHECKING:  # the rules import Ray; --help and the plan do not need it
    from tuner.schedulers.hyperband_rule import BohbRule, HyperBandRule


class _Brackets(SchedulerEntry):
    pauses_trials = True
    runs_epochs_again = True
    needs_checkpoints = True  # a paused trial continues from its checkpoint; without one it would start over
    label = ""
    largest_first = False  # the order trials fill a band's brackets in, as the rule fills them
    reads = ("reduction_factor",)  # each bracket's first round is set by its place in the band

    def stopped_label(self, ctx: SchedulerContext) -> str | None:
        return self.label

    def describe(self, ctx: SchedulerContext) -> list[str]:
        lines = [
            f"{self.label}: synchronous brackets up to {ctx.max_epochs} epochs, reduction factor "
            f"{ctx.reduction_factor}; trials wait (PAUSED) until their bracket reaches each budget"
        ]
        eta = ctx.reduction_factor
        for i, (n, n0, rounds) in enumerate(
            fill(ctx.num_samples, ctx.max_epochs, eta, self.largest_first), 1
        ):
            steps = " -> ".join(f"epoch {r}" for r in rounds)
            lines.append(f"  bracket {i}: {n} trial(s), {steps}; {bracket_epochs(n, n0, rounds, eta)} epochs")
        return lines

    def worst_case_epochs(self, ctx: SchedulerContext) -> int:
        eta = ctx.reduction_factor
        filled = fill(ctx.num_samples, ctx.max_epochs, eta, self.largest_first)
        return sum(bracket_epochs(n, n0, r, eta) for n, n0, r in filled)


class HyperBand(_Brackets):
    name = "hyperband"
    summary = (
        "synchronous HyperBand brackets: trials wait for their bracket, whose worse trials each round stops"
    )
    label = "HyperBand"
    multi_objective = True  # several objectives: each round keeps the best by fronts
    ranks_constraints = True

    def build(self, ctx: SchedulerContext) -> HyperBandRule:
        from tuner.schedulers.hyperband_rule import HyperBandRule

        return HyperBandRule(ctx.max_epochs, ctx.reduction_factor, comparison(ctx), fate_log=ctx.fate_log)

    def describe(self, ctx: SchedulerContext) -> list[str]:
        lines = super().describe(ctx)
        by = comparison(ctx).ranked_by()
        if by is not None:
            lines.insert(1, f"  each round keeps the best by {by}")
        return lines


class Bohb(_Brackets):
    name = "bohb"
    summary = "BOHB: HyperBand brackets with kernel density models per budget (brings --searcher bohb)"
    label = "BOHB"
    requires_searcher = "bohb"
    largest_first = True

    def build(self, ctx: SchedulerContext) -> BohbRule:
        from tuner.schedulers.hyperband_rule import BohbRule

        return BohbRule(ctx.max_epochs, ctx.reduction_factor, comparison(ctx), fate_log=ctx.fate_log)
