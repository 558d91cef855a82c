"""Optuna's TPESampler through Ray's OptunaSearch: multivariate, grouped, with a constant liar.

Multivariate TPE models parameters jointly (a learning rate that suits a batch size); ``group`` splits the
space where parameters never appear together; the constant liar gives trials still running a pessimistic
value, so trials started together do not all go to the same promising point. Trials a scheduler stopped
early are told to Optuna as pruned; TPE ranks every trial that reached the furthest epoch enough of them
reached by its value there, and those stopped sooner by how far they got (a loss at epoch 1 is no rival to
one at epoch 8). As tuner runs it (tuner/searchers/optuna_samplers.py), its random start is counted in
proposals and it never proposes a config already tried.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.objectives import Objectives, ray_form
from tuner.searchers.base import QUANTILE, SearcherEntry
from tuner.searchers.plan import ParamPlan, SearchPlan, stepped

if TYPE_CHECKING:
    from optuna.samplers import BaseSampler
    from ray.tune.search import Searcher
    from ray.tune.search.optuna import OptunaSearch
    from ray.tune.search.sample import Domain

    from tuner.searchers.conditional import DefineByRun


class OptunaTPE(SearcherEntry):
    name = "optuna"
    summary = "Optuna's multivariate TPE with a constant liar for trials running at once; no config twice"
    model = "multivariate TPE"
    stopped_as_pruned = True
    takes_earlier_results = True
    # Optuna's define-by-run: a conditional parameter is asked for where it applies
    models_conditionals = True
    multi_objective = True  # with several objectives Optuna's TPE splits its good group by fronts (MOTPE)
    takes_constraints = True  # Optuna keeps infeasible trials out of its good group

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        from ray.tune.search.sample import Float, Integer, LogUniform, Quantized

        sampler = value.get_sampler()
        if (
            isinstance(value, (Float, Integer))
            and isinstance(sampler, Quantized)
            and isinstance(sampler.get_sampler(), LogUniform)
        ):
            # Optuna takes a log domain only without a step
            return stepped(name, value, text, self.name)
        return self.plan_native(name, value, text, normal=QUANTILE)

    def space_for(self, plan: SearchPlan) -> dict[str, Domain] | DefineByRun:
        """The searched domains; with conditional parameters, a define-by-run space that asks for each only in
        the branches where it varies."""
        if not plan.conditionals:
            return self.nested_domains(plan)
        from ray.tune.search.optuna import OptunaSearch

        from tuner.searchers.conditional import DefineByRun

        distributions = OptunaSearch.convert_search_space(self.nested_domains(plan))
        conditionals = [
            (p.name, p.branches, plan.parent_values(p.branches.parent)) for p in plan.conditionals
        ]
        return DefineByRun(distributions, conditionals)

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from tuner.searchers.optuna_samplers import FreshTPE

        return optuna_search(self.space_for(plan), objectives, FreshTPE(warmup, seed=seed, group=True))


def optuna_search(
    space: dict[str, Domain] | DefineByRun,
    objectives: Objectives,
    sampler: BaseSampler,
) -> OptunaSearch:
    """Ray's OptunaSearch around ``sampler``, over Tune domains or a define-by-run function; Optuna quiet."""
    import warnings

    import optuna
    from ray.tune.search.optuna import OptunaSearch

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
    converted = space if callable(space) else OptunaSearch.convert_search_space(space)
    metric, mode = ray_form(objectives)
    return OptunaSearch(space=converted, metric=metric, mode=mode, sampler=sampler)
