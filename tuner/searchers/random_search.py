"""Random search: independent draws from the space (Ray's BasicVariantGenerator), grids crossed."""

from __future__ import annotations

from typing import Any

from tuner.searchers.base import SearcherEntry
from tuner.searchers.plan import SearchPlan


class RandomSearch(SearcherEntry):
    name = "random"
    summary = "independent random draws; grids are crossed (Ray's BasicVariantGenerator)"
    model_based = False

    def build(
        self,
        plan: SearchPlan,
        metric: str,
        mode: str,
        num_samples: int,
        seed: int,
        max_concurrent: int | None,
        never_wait: bool = False,
    ) -> Any:
        """Tune's own generator over the raw space; with ``max_concurrent`` it creates trials only as slots
        free up (Tune ignores its own concurrency limit for this generator)."""
        from ray.tune.search import BasicVariantGenerator

        return BasicVariantGenerator(random_state=seed, max_concurrent=max_concurrent or 0)

    def intro(self, num_samples: int) -> str:
        return "search plan (random):"
