"""Optuna's GPSampler through Ray's OptunaSearch: a Gaussian process with log expected improvement.

A GP models every pair of points through its kernel, so on a small budget it places trials better than TPE (on
HPOLib's numbers and on NAS-Bench-201's choices of operations alike); for trials running at once it fantasises
their outcomes (a kriging believer, batch log EI), so trials started together spread out. It takes floats, integers
and choices (ordered choices as integers), and a normal through its quantile. As tuner runs it
(tuner/searchers/warped_gp.py) it sees the results through a power transform, counts its random start in proposals
and never proposes a config already tried (BENCHMARKS.md, "Search that beats Optuna", compares it with Optuna's
TPESampler). Trials a scheduler stopped early are told to it as pruned, which a GP leaves out of its model; multi-
fidelity searches suit the models that learn from stopped trials better.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.objectives import Objectives
from tuner.searchers.optuna_tpe import OptunaTPE

if TYPE_CHECKING:
    from ray.tune.search import Searcher

    from tuner.searchers.plan import SearchPlan


class OptunaGP(OptunaTPE):
    name = "gp"
    summary = "Optuna's Gaussian process on power-transformed results (log EI; fantasised running trials); no config twice"
    model = "a Gaussian process"
    models_conditionals = False  # Optuna's GPSampler draws a parameter outside every trial's space at random
    multi_objective = False  # its power transform warps one value
    takes_constraints = False

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from tuner.searchers.optuna_tpe import optuna_search
        from tuner.searchers.warped_gp import WarpedGP

        return optuna_search(self.space_for(plan), objectives, WarpedGP(warmup, seed=seed))
