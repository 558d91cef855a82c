"""Where freeze-thaw's new trials come from, and when.

Tune asks the searcher for a new trial whenever none waits to start, and starts a waiting trial as soon as a
worker is free: left alone, a searcher would fill every free worker with new configs and no paused trial
would ever be continued. ``NewTrialGate`` asks the scheduler first and makes a new trial only when a new
config promises at least what the best paused trial does (tuner/schedulers/curve_scheduler.py); otherwise
the scheduler continues that trial when a worker frees up.

``ModelProposals`` is the searcher that takes its configs from the scheduler's own model (``--searcher
curves``): the drawn config with the largest expected improvement at the last epoch, for every other new
trial; the rest, and every one before the first model, are drawn at random from the space, seeded.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, cast

from ray.tune.search import Searcher

from tuner.nesting import unflatten
from tuner.objectives import Mode
from tuner.searchers.random_draws import RandomSearcher
from tuner.searchers.wrapping import WrappingSearcher

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler

    from tuner.value_types import ConfigDraft, SpaceEntry


class GatesNewTrials(Protocol):
    """A scheduler whose entry ``gates_new_trials`` (tuner/schedulers/base.py): freeze-thaw's."""

    def wants_new_trial(self) -> bool: ...


class Proposes(Protocol):
    """A scheduler whose model proposes new configs (freeze-thaw's); None: the caller draws at random."""

    def propose(self) -> ConfigDraft | None: ...


class NewTrialGate(WrappingSearcher):
    """A searcher whose new trials the freeze-thaw scheduler lets through only when it wants one."""

    def __init__(self, inner: Searcher, scheduler: TrialScheduler) -> None:
        super().__init__(inner)
        # tuner/algorithms.py gates only a scheduler whose entry gates_new_trials, which has wants_new_trial
        self.scheduler = cast("GatesNewTrials", scheduler)

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        if not self.scheduler.wants_new_trial():
            return None  # Tune asks again later; the scheduler continues a paused trial meanwhile
        return self.inner.suggest(trial_id)


# Every this many new configs, one is drawn at random instead of proposed (0: never). A model that proposes
# every config keeps trying near its first good ones. Half the configs at random ranked ahead on the development
# tasks and seeds (beyond chance one trial at a time) and, held out, put the default ahead of BOHB at half the
# budget (BENCHMARKS.md, 2026-11-29 (seventh)). Whether a new trial is wanted at all is still the model's call
# (``NewTrialGate``), on a random turn too.
RANDOM_EVERY = 2


class ModelProposals(RandomSearcher):
    """New configs from the freeze-thaw scheduler's model, every other one (``RANDOM_EVERY``); random draws
    (seeded, as random search draws them) for the rest and before it has a model."""

    def __init__(
        self, params: dict[str, SpaceEntry], seed: int, metric: str | None = None, mode: Mode | None = None
    ) -> None:
        super().__init__(params, seed, metric, mode)
        self.scheduler: Proposes | None = None

    def attach(self, scheduler: Proposes) -> None:
        """The scheduler whose model proposes (tuner/algorithms.py joins them when it builds the pair)."""
        self.scheduler = scheduler

    def suggest(self, trial_id: str) -> ConfigDraft | None:
        random_turn = RANDOM_EVERY > 0 and (self.draws + 1) % RANDOM_EVERY == 0
        config = self.scheduler.propose() if self.scheduler is not None and not random_turn else None
        if config is None:
            return super().suggest(trial_id)
        self.draws += 1
        return unflatten(config)
