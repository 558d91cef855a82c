"""One base for searchers that wrap another: what the wrapper does not change goes to the one inside.

The plan's applier (tuner/searchers/planned.py) decodes a model's suggestions; the stall-aware wrapper
(tuner/launch/guards/stall.py) ends a search that has stalled. Both pass everything else straight through: Tune's setup
calls, results and completions, BOHB's pause notices, and saving and restoring the model's state.
"""

from __future__ import annotations

from typing import Any, TypeVar

from ray.tune.search import SearchAlgorithm, Searcher

from tuner.value_types import ConfigDraft, SpaceEntry, Value

W = TypeVar("W", bound=Searcher)


class WrappingSearcher(Searcher):
    def __init__(self, inner: Searcher) -> None:
        Searcher.__init__(self, metric=inner.metric, mode=inner.mode)
        self.inner = inner

    # ``spec``: Tune's own settings for the search (Ray leaves them untyped), passed on untouched
    def set_search_properties(
        self, metric: str | None, mode: str | None, config: dict[str, SpaceEntry], **spec: Any
    ) -> bool:
        return self.inner.set_search_properties(metric, mode, config, **spec)

    def set_max_concurrency(self, max_concurrent: int) -> bool:
        return self.inner.set_max_concurrency(max_concurrent)

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        return self.inner.suggest(trial_id)

    def on_trial_result(self, trial_id: str, result: dict[str, Value]) -> None:
        self.inner.on_trial_result(trial_id, result)

    def on_trial_complete(
        self, trial_id: str, result: dict[str, Value] | None = None, error: bool = False
    ) -> None:
        self.inner.on_trial_complete(trial_id, result=result, error=error)

    # BOHB's scheduler tells its searcher which trials wait at a budget.
    def on_pause(self, trial_id: str) -> None:
        if hasattr(self.inner, "on_pause"):
            self.inner.on_pause(trial_id)

    def on_unpause(self, trial_id: str) -> None:
        if hasattr(self.inner, "on_unpause"):
            self.inner.on_unpause(trial_id)

    def save(self, checkpoint_path: str) -> None:
        self.inner.save(checkpoint_path)

    def restore(self, checkpoint_path: str) -> None:
        self.inner.restore(checkpoint_path)


def wrapped(searcher: Searcher | SearchAlgorithm, kind: type[W]) -> W | None:
    """The searcher of ``kind`` inside the wrappers around it (freeze-thaw's gate, the stall watch), or None."""
    current: Searcher | SearchAlgorithm = searcher
    while not isinstance(current, kind):
        if not isinstance(current, WrappingSearcher):
            return None
        current = current.inner
    return current
