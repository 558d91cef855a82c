"""BOHB's searcher: kernel density models fitted per budget (epochs), through Ray's TuneBOHB (hpbandster).

It only makes sense under BOHB's own HyperBand scheduler, which tells it the budget of every result and
which trials wait between rounds; ``--scheduler bohb`` brings it along. Its ConfigurationSpace is built by
tuner (tuner/searchers/bohb_space.py), a conditional parameter active only in its branch.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.objectives import Objectives, single
from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import ParamPlan, SearchPlan, stepped

if TYPE_CHECKING:
    from ConfigSpace import ConfigurationSpace
    from ray.tune.search import Searcher
    from ray.tune.search.sample import Domain


class BohbKde(SearcherEntry):
    name = "bohb"
    summary = "BOHB's kernel density models per budget (hpbandster); comes with --scheduler bohb"
    model = "kernel density models per budget"
    requires_scheduler = "bohb"
    models_conditionals = True  # one hyperparameter per branch, under a condition on its parent

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        """BOHB's models take no step: a stepped domain is searched without it and rounded to it."""
        from ray.tune.search.sample import Float, Integer, Normal, Quantized

        sampler = value.get_sampler()
        if (
            isinstance(value, (Float, Integer))
            and isinstance(sampler, Quantized)
            and not isinstance(sampler.get_sampler(), Normal)
        ):
            return stepped(name, value, text, self.name)
        return self.plan_native(name, value, text)

    def space_for(self, plan: SearchPlan) -> ConfigurationSpace:
        from tuner.searchers.bohb_space import configuration_space

        return configuration_space(plan)

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from ray.tune.search.bohb import TuneBOHB

        objective = single(objectives)
        return TuneBOHB(space=self.space_for(plan), metric=objective.name, mode=objective.mode, seed=seed)

    def intro(self, num_samples: int, earlier: int = 0) -> str:
        return "search plan (bohb: random configs until a budget has enough results, then kernel density models):"
