"""HyperOpt's Tree-structured Parzen Estimator, through Ray's HyperOptSearch."""

from __future__ import annotations

from typing import Any

from tuner.objectives import Mode
from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import ParamPlan


class HyperOpt(SearcherEntry):
    name = "hyperopt"
    summary = "HyperOpt's TPE: one density model per parameter"
    model = "TPE"

    def plan_domain(self, name: str, value: Any, text: str) -> ParamPlan:
        return self.plan_native(name, value, text, normal="with a normal prior")

    def build_inner(self, space: dict[str, Any], metric: str, mode: Mode, warmup: int, seed: int) -> Any:
        from ray.tune.search.hyperopt import HyperOptSearch

        return HyperOptSearch(
            space=HyperOptSearch.convert_search_space(space),
            metric=metric,
            mode=mode,
            n_initial_points=warmup,
            random_state_seed=seed,
        )
