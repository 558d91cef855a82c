"""BOHB's searcher: kernel density models fitted per budget (epochs), through Ray's TuneBOHB (hpbandster).

It only makes sense under BOHB's own HyperBand scheduler, which tells it the budget of every result and
which trials wait between rounds; ``--scheduler bohb`` brings it along.
"""

from __future__ import annotations

from typing import Any

from tuner.objectives import Mode
from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import ParamPlan


class BohbKde(SearcherEntry):
    name = "bohb"
    summary = "BOHB's kernel density models per budget (hpbandster); comes with --scheduler bohb"
    model = "kernel density models per budget"
    requires_scheduler = "bohb"

    def plan_domain(self, name: str, value: Any, text: str) -> ParamPlan:
        return self.plan_native(name, value, text)

    def build_inner(self, space: dict[str, Any], metric: str, mode: Mode, warmup: int, seed: int) -> Any:
        from ray.tune.search.bohb import TuneBOHB

        return TuneBOHB(space=TuneBOHB.convert_search_space(space), metric=metric, mode=mode, seed=seed)

    def intro(self, num_samples: int, earlier: int = 0) -> str:
        return "search plan (bohb: random configs until a budget has enough results, then kernel density models):"
