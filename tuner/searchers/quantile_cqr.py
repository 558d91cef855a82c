"""Conformalised quantile regression through Ray's OptunaSearch (tuner/searchers/quantile_sampler.py).

A model for early stopping: it learns from every trial at the epoch it reached, not only from those that ran
to the end, and proposes by a quantile drawn at random from its calibrated predictions, so it keeps
exploring where it knows little. It takes floats, integers and choices; a conditional parameter is searched
at random within its branch. Stopped trials are told to it as pruned with each epoch's value.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.objectives import Objectives
from tuner.searchers.optuna_tpe import OptunaTPE

if TYPE_CHECKING:
    from ray.tune.search import Searcher

    from tuner.searchers.plan import SearchPlan


class QuantileCQR(OptunaTPE):
    name = "cqr"
    summary = (
        "conformalised quantile regression (boosted trees) on every trial at the epoch it reached; made for "
        "early stopping; no config twice"
    )
    model = "quantile regression on every trial, ranked among those that got as far"
    models_conditionals = False  # it models the parameters every trial has; the others are drawn at random
    multi_objective = False
    takes_constraints = False

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from tuner.searchers.optuna_tpe import optuna_search
        from tuner.searchers.quantile_sampler import QuantileSampler

        return optuna_search(self.space_for(plan), objectives, QuantileSampler(warmup, seed=seed))
