"""The search plan: how each parameter will really be searched, decided before any trial starts.

A searcher must never mis-search silently. Every parameter is searched natively, searched through a faithful
encoding (log space for log-scale domains, an index for categorical ones, an ordered index for a
``sample_from`` whose values were probed), drawn at random (a ``sample_from`` with too many values), a
constant, or impossible, which stops the sweep with an error naming the parameter and the searchers that can.
Tune domains are planned by tuner/searchers/plan.py, ``sample_from`` functions by function_plan.py.

Ray is imported inside functions: the registry that names searchers must stay cheap to import.
"""

from __future__ import annotations

from tuner.searchers.plan import (
    CONSTANT,
    NATIVE,
    SEARCHED,
    NothingToSearch,
    ParamPlan,
    Planner,
    SearchPlan,
    describe_domain,
    domain_plan,
    is_grid,
    unsupported,
)
from tuner.value_types import Space


def plan_search(params: Space, entry: Planner, seed: int = 0) -> SearchPlan:
    """Decide, before anything runs, how ``entry`` treats each parameter; raise for impossible pairs."""
    from ray.tune.search.sample import Domain, Function

    plans: list[ParamPlan] = []
    for name, value in params.items():
        text = describe_domain(value)
        if is_grid(value):
            if entry.model_based:
                raise unsupported(name, value, entry.name, ["random"])
            plans.append(ParamPlan(name, text, "every value, crossed with the other grids", NATIVE, value))
        elif not isinstance(value, Domain):
            plans.append(ParamPlan(name, text, "constant", CONSTANT, value))
        elif not entry.model_based:
            plans.append(ParamPlan(name, text, "drawn at random", NATIVE, value))
        elif isinstance(value, Function):
            from tuner.searchers.function_plan import function_plan

            plans.append(function_plan(name, value, text, entry, seed, params))
        else:
            plans.append(domain_plan(name, value, text, entry))
    if entry.model_based and not any(p.treatment in SEARCHED for p in plans):
        raise NothingToSearch(
            f"{entry.name} has nothing to search in this space: every parameter is a constant or a "
            "sample_from with too many values; use --searcher random"
        )
    return SearchPlan(entry.name, tuple(plans), dict(params))
