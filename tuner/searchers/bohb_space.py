"""The ConfigurationSpace BOHB's kernel density models search, built from the plan by tuner itself.

Each searched domain becomes a ConfigSpace hyperparameter as Ray's own converter makes it (an integer's upper
bound included, quantisation dropped, a normal only with bounds), and each conditional parameter one
hyperparameter per branch, active under an ``EqualsCondition`` on its parent's index: hpbandster models a
branch only from the trials that took it, as BOHB does with a conditional space of its own. Building it here
also keeps BOHB working on Ray versions whose converter passes arguments ConfigSpace no longer takes.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tuner.searchers.plan import SearchPlan
from tuner.values import plain

if TYPE_CHECKING:
    from ConfigSpace import (
        CategoricalHyperparameter,
        ConfigurationSpace,
        NormalFloatHyperparameter,
        UniformFloatHyperparameter,
        UniformIntegerHyperparameter,
    )
    from ray.tune.search.sample import Domain


def configuration_space(plan: SearchPlan) -> ConfigurationSpace:
    import ConfigSpace as CS

    space = CS.ConfigurationSpace()
    for name, domain in plan.searched_space.items():
        space.add(hyperparameter(name, domain))
    for child in plan.conditionals:
        branches = child.branches
        parent_values = plan.parent_values(branches.parent)
        if parent_values is None:
            raise ValueError(
                f"bohb cannot hold the branches of {branches.parent!r}: its values are not indexed"
            )
        for value in parent_values:
            key = repr(plain(value))
            if key in branches.values:
                from ray import tune

                domain = tune.randint(0, len(branches.values[key]))
            elif key in branches.draws:
                domain = branches.draws[key].domain()
            else:
                continue
            branch = hyperparameter(branches.key(child.name, value), domain)
            space.add(branch, CS.EqualsCondition(branch, space[branches.parent], parent_values.index(value)))
    return space


def hyperparameter(
    name: str, domain: Domain
) -> (
    CategoricalHyperparameter
    | UniformIntegerHyperparameter
    | UniformFloatHyperparameter
    | NormalFloatHyperparameter
):
    import ConfigSpace as CS
    from ray.tune.search.sample import Categorical, Float, Integer, LogUniform, Normal, Quantized, Uniform

    sampler = domain.get_sampler()
    if isinstance(
        sampler, Quantized
    ):  # a step is the plan's to round to (tuner/searchers/plan.py ``stepped``)
        sampler = sampler.get_sampler()
    if isinstance(domain, Categorical):
        return CS.CategoricalHyperparameter(name, choices=list(domain.categories))
    if isinstance(domain, Integer) and isinstance(sampler, (Uniform, LogUniform)):
        log = isinstance(sampler, LogUniform)
        return CS.UniformIntegerHyperparameter(name, lower=domain.lower, upper=domain.upper - 1, log=log)
    if isinstance(domain, Float) and isinstance(sampler, (Uniform, LogUniform)):
        log = isinstance(sampler, LogUniform)
        return CS.UniformFloatHyperparameter(name, lower=domain.lower, upper=domain.upper, log=log)
    if isinstance(domain, Float) and isinstance(sampler, Normal):
        if not all(b is not None and math.isfinite(b) for b in (domain.lower, domain.upper)):
            raise ValueError(
                f"bohb takes a normal parameter ({name!r}) only with bounds: Float(lower, upper).normal(mean, sd)"
            )
        return CS.NormalFloatHyperparameter(
            name, mu=sampler.mean, sigma=sampler.sd, lower=domain.lower, upper=domain.upper
        )
    raise ValueError(f"bohb cannot search {name!r}: {type(domain).__name__} with {type(sampler).__name__}")
