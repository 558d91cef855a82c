"""HyperOpt's Tree-structured Parzen Estimator, through Ray's HyperOptSearch."""

from __future__ import annotations

from typing import Any

from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import NATIVE, ParamPlan


class HyperOpt(SearcherEntry):
    name = "hyperopt"
    summary = "HyperOpt's TPE: one density model per parameter"
    model = "TPE"

    def plan_domain(self, name: str, value: Any, text: str) -> ParamPlan:
        from ray.tune.search.sample import Categorical, LogUniform, Normal, Quantized

        sampler = value.get_sampler()
        sampler = sampler.get_sampler() if isinstance(sampler, Quantized) else sampler
        if isinstance(value, Categorical):
            how = "searched by hyperopt as a categorical"
        elif isinstance(sampler, LogUniform):
            how = "searched by hyperopt in log space"
        elif isinstance(sampler, Normal):
            how = "searched by hyperopt with a normal prior"
        else:
            how = "searched by hyperopt"
        return ParamPlan(name, text, how, NATIVE, value)

    def build_inner(self, space: dict[str, Any], metric: str, mode: str, warmup: int, seed: int) -> Any:
        from ray.tune.search.hyperopt import HyperOptSearch

        return HyperOptSearch(space=HyperOptSearch.convert_search_space(space), metric=metric, mode=mode,
                              n_initial_points=warmup, random_state_seed=seed)  # fmt: skip
