"""BOHB's searcher: kernel density models fitted per budget (epochs), through Ray's TuneBOHB (hpbandster).

It only makes sense under BOHB's own HyperBand scheduler, which tells it the budget of every result and
which trials wait between rounds; ``--scheduler bohb`` brings it along.
"""

from __future__ import annotations

from typing import Any

from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import NATIVE, ParamPlan


class BohbKde(SearcherEntry):
    name = "bohb"
    summary = "BOHB's kernel density models per budget (hpbandster); comes with --scheduler bohb"
    model = "kernel density models per budget"
    requires_scheduler = "bohb"

    def plan_domain(self, name: str, value: Any, text: str) -> ParamPlan:
        from ray.tune.search.sample import Categorical, LogUniform, Quantized

        sampler = value.get_sampler()
        sampler = sampler.get_sampler() if isinstance(sampler, Quantized) else sampler
        if isinstance(value, Categorical):
            how = "searched by bohb as a categorical"
        elif isinstance(sampler, LogUniform):
            how = "searched by bohb in log space"
        else:
            how = "searched by bohb"
        return ParamPlan(name, text, how, NATIVE, value)

    def build_inner(self, space: dict[str, Any], metric: str, mode: str, warmup: int, seed: int) -> Any:
        from ray.tune.search.bohb import TuneBOHB

        return TuneBOHB(space=TuneBOHB.convert_search_space(space), metric=metric, mode=mode, seed=seed)

    def intro(self, num_samples: int) -> str:
        return "search plan (bohb: random configs until a budget has enough results, then kernel density models):"
