"""Bayesian optimisation with a Gaussian process (bayesian-optimization 1.x, through Ray's BayesOptSearch).

BayesOpt models bounded floats only, so everything else is encoded faithfully: log-scale domains are
searched in log space, integers as a floored float, choices through an index, normals through their quantile.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import TYPE_CHECKING

from tuner.objectives import Objectives, single
from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import ENCODED, NATIVE, ParamPlan, SearchPlan, normal_quantile, unsupported
from tuner.value_types import Value

if TYPE_CHECKING:
    from ray.tune.search import Searcher
    from ray.tune.search.sample import Domain, Float

    from tuner.searchers.plan import SearchPlan


class BayesOpt(SearcherEntry):
    name = "bayesopt"
    summary = "a Gaussian process over bounded floats (bayesian-optimization)"
    model = "a Gaussian process"
    takes_earlier_results = True

    def ordered(self, n: int) -> tuple[Float, Callable[[float], int], Callable[[int], float]]:
        """A position in [0, n) floored to an index: a Gaussian process models bounded floats only."""
        from tuner.searchers.plan import floor_index

        return floor_index(n)

    def plan_domain(self, name: str, value: Domain, text: str) -> ParamPlan:
        from ray import tune
        from ray.tune.search.sample import Categorical, Float, Integer, LogUniform, Normal, Quantized, Uniform

        if isinstance(value, Categorical):
            categories = list(value.categories)
            n = len(categories)

            def pick(x: float, categories: list[Value] = categories) -> Value:
                return copy.deepcopy(categories[min(int(math.floor(x)), n - 1)])

            def place(value: Value, categories: list[Value] = categories) -> float:
                from tuner.searchers.plan import index_of

                return index_of(categories, value) + 0.5

            how = f"searched by bayesopt through an index over its {n} choices"
            return ParamPlan(name, text, how, ENCODED, tune.uniform(0, n), pick, place)
        sampler = value.get_sampler()
        q = None
        if isinstance(sampler, Quantized):
            q, sampler = sampler.q, sampler.get_sampler()
        if isinstance(sampler, Normal):
            return normal_quantile(name, value, text, self.name)
        if not isinstance(sampler, (Uniform, LogUniform)) or not isinstance(value, (Float, Integer)):
            raise unsupported(name, value, self.name)
        integer = isinstance(value, Integer)
        log_scale = isinstance(sampler, LogUniform)
        # Integers are searched as a continuous value and floored, so each integer keeps its share of the
        # range (Tune's integer upper bounds are exclusive); log-scale domains are searched in log space.
        top = value.upper - 1 if integer else value.upper

        def decode(x: float) -> float:
            v = math.exp(x) if log_scale else x
            if q is not None:
                v = round(v / q) * q
            elif integer:
                v = math.floor(v)
            v = min(max(v, value.lower), top)
            return int(v) if integer else float(v)

        bounds = (math.log(value.lower), math.log(value.upper)) if log_scale else (value.lower, value.upper)
        how = "searched by bayesopt" + (" in log space" if log_scale else "")
        if integer:
            how += ", floored to an integer"
        if q is not None:
            how += f", rounded to multiples of {q:g}"
        if not (log_scale or integer or q is not None):
            return ParamPlan(name, text, how, NATIVE, value)

        def encode(v: float) -> float:
            if not value.lower <= v <= top:
                raise ValueError(f"{v!r} is outside [{value.lower}, {top}]")
            x = float(v) + (0.5 if integer and q is None else 0.0)  # the middle of the integer's floor range
            return math.log(x) if log_scale else x

        return ParamPlan(name, text, how, ENCODED, tune.uniform(*bounds), decode, encode)

    def build_inner(self, plan: SearchPlan, objectives: Objectives, warmup: int, seed: int) -> Searcher:
        from ray.tune.search.bayesopt import BayesOptSearch

        from tuner.searchers.bayesopt_points import BayesOptTakingPoints

        return BayesOptTakingPoints(
            space=BayesOptSearch.convert_search_space(self.nested_domains(plan)),
            metric=single(objectives).name,
            mode=single(objectives).mode,
            random_state=seed,
            random_search_steps=warmup,
            verbose=0,
        )
