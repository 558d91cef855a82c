"""New configs from freeze-thaw's own model of the learning curves (tuner/schedulers/curve_gate.py).

The scheduler fits one model to every epoch of every trial; the same model scores a few hundred configs
drawn from the space and near the best trials, and the one with the largest expected improvement at the last
epoch is the next trial, for every other new trial (the rest are drawn at random: a hedge against a model that
misleads). One model for both decisions: which trial to continue and which config to try.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.searchers.base import SearcherContext, SearcherEntry
from tuner.searchers.plan import ParamPlan, SearchPlan

if TYPE_CHECKING:
    from ray.tune.search import SearchAlgorithm, Searcher
    from ray.tune.search.sample import Domain


class CurveProposals(SearcherEntry):
    name = "curves"
    summary = (
        "the freeze-thaw scheduler's learning-curve model proposes every other config, the rest drawn at random "
        "(comes with --scheduler freeze-thaw)"
    )
    model = "the learning-curve model's expected improvement at the last epoch"
    requires_scheduler = "freeze-thaw"

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        return self.plan_native(name, value, text)

    def build(self, plan: SearchPlan, ctx: SearcherContext) -> Searcher | SearchAlgorithm:
        from tuner.schedulers.curve_gate import ModelProposals

        return ModelProposals(dict(plan.raw_space), ctx.seed, ctx.objective.name, ctx.objective.mode)

    def intro(self, num_samples: int, earlier: int = 0) -> str:
        from tuner.schedulers.curve_fitting import MIN_TRIALS
        from tuner.schedulers.curve_gate import RANDOM_EVERY

        share = "every other one" if RANDOM_EVERY == 2 else f"{RANDOM_EVERY - 1} in {RANDOM_EVERY}"
        then = {0: f"each from {self.model}", 1: "every one at random"}.get(
            RANDOM_EVERY, f"{share} from {self.model}, the rest at random"
        )
        if num_samples <= MIN_TRIALS:  # the plan said the model would propose where it never could
            return f"search plan (curves: all {num_samples} configs at random; the model proposes past the first {MIN_TRIALS}):"
        return f"search plan (curves: {MIN_TRIALS} random configs first, then {then}):"
