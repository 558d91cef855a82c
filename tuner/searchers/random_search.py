"""Random search: independent draws from the space (Ray's BasicVariantGenerator), grids crossed."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.searchers.base import SearcherContext, SearcherEntry
from tuner.searchers.plan import SearchPlan

if TYPE_CHECKING:
    from ray.tune.search import SearchAlgorithm, Searcher


class RandomSearch(SearcherEntry):
    name = "random"
    summary = "independent random draws; grids are crossed (Ray's BasicVariantGenerator)"
    model_based = False
    multi_objective = True  # it models nothing

    def build(self, plan: SearchPlan, ctx: SearcherContext) -> Searcher | SearchAlgorithm:
        """Seeded draws as a Searcher (a sweep that can grow later); Tune's own variant generator where the
        space has grids to cross or the scheduler (PBT) takes no searcher, with ``max_concurrent`` creating
        trials only as slots free up (Tune ignores its own limit for that generator)."""
        from ray.tune.search import BasicVariantGenerator

        from tuner.searchers.random_draws import RandomSearcher

        if self.runs_as_generator(plan, ctx.generator_only):
            return BasicVariantGenerator(random_state=ctx.seed, max_concurrent=ctx.max_concurrent or 0)
        return RandomSearcher(dict(plan.raw_space), ctx.seed, ctx.objective.name, ctx.objective.mode)

    @classmethod
    def runs_as_generator(cls, plan: SearchPlan, generator_only: bool) -> bool:
        from tuner.searchers.plan import is_grid

        return generator_only or any(is_grid(v) for v in plan.raw_space.values())

    def intro(self, num_samples: int, earlier: int = 0) -> str:
        return "search plan (random):"
