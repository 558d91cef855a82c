"""What a scheduler entry is: how it is built, what it says before a sweep, and what it needs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from tuner.folder.fates import DecisionLog
from tuner.objectives import Constraint, Objective, Objectives
from tuner.objectives import check as check_objectives
from tuner.schedulers.comparing import Comparison

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler

    from tuner.value_types import Space

# The seed tutorial's ASHA: the worse half stopped at every rung, the first rung after one epoch.
GRACE_PERIOD = 1
REDUCTION_FACTOR = 2
RUNG_SETTINGS = ("grace_period", "reduction_factor")


@dataclass(frozen=True)
class SchedulerContext:
    """What a scheduler is built from; its time unit is one reported epoch (``training_iteration``)."""

    max_epochs: int
    objectives: Objectives  # what the sweep optimises (tuner/objectives.py), in order: one is a tuple of one
    params: Space
    num_samples: int
    seed: int = 0
    # tuner.folder.fates.FateLog: where the scheduler writes why it stops or perturbs trials
    fate_log: DecisionLog | None = None
    grace_period: int = GRACE_PERIOD  # epochs before the first rung (ASHA) or comparison (median)
    reduction_factor: int = REDUCTION_FACTOR  # 1/eta of the trials at a rung go on (ASHA, HyperBand, BOHB)
    constraints: tuple[Constraint, ...] = ()  # bounds a trial must meet to count
    can_pause: bool = True  # the trainable continues from a checkpoint, so a paused trial loses nothing
    # the trainable's own loop may end trials before max_epochs (a function that is not given max_epochs); False:
    # it runs to max_epochs, and a trial that ended sooner ended for a reason of its own (a return, a nan)
    own_loop: bool = True
    trials_cap: int | None = None  # trials the sweep may create at most; None: a budget ends it

    def __post_init__(self) -> None:
        check_objectives(self.objectives)

    @property
    def objective(self) -> Objective:
        """The first objective: what a rule of one value (Ray's own, freeze-thaw's model) ranks by."""
        return self.objectives[0]


def comparison(ctx: SchedulerContext) -> Comparison:
    """How the sweep's rules compare trials: its objectives (one: the metric and mode) and constraints."""
    return Comparison.of(ctx.objectives, ctx.constraints)


class SchedulerEntry:
    """One trial scheduler: which trials keep running."""

    name: ClassVar[str]
    summary: ClassVar[str]
    requires_searcher: ClassVar[str | None] = None  # e.g. BOHB's scheduler brings its own searcher
    # Sync brackets pause trials until the whole bracket reaches a budget: a searcher waiting for results
    # (or a concurrency limit counting paused trials) would wait for ever, so neither may block it.
    pauses_trials: ClassVar[bool] = False
    takes_no_searcher: ClassVar[bool] = False  # Ray runs it over its variant generator only (PBT)
    needs_checkpoints: ClassVar[bool] = False  # trials must continue from another trial's checkpoint
    # It pauses or copies trials at epochs it sets (HyperBand's rounds, PBT's perturbations), where a function
    # trainable that saves every few epochs may have saved nothing: continued, such a trial runs epochs again.
    runs_epochs_again: ClassVar[bool] = False
    # Checkpoints kept per trial besides its latest: the best by the metric. Two, so that a damaged latest
    # always has a whole one behind it from the second epoch on (tuner resume goes on from it). None keeps all,
    # for schedulers that hand a trial's latest checkpoint to another trial at any time.
    checkpoints_to_keep: ClassVar[int | None] = 2
    # Whether tuner ends each trial at --max-epochs itself: schedulers without a max_t never end one, and a
    # trainable with a loop of its own (a class, a function that takes no max_epochs) would run past it.
    # Those with a max_t (ASHA, HyperBand, BOHB, freeze-thaw, the median rule) end it as they decide: the median
    # rule must see a trial's last result before it completes, as Ray's does, so a stopper may not end it first.
    ends_at_max_epochs: ClassVar[bool] = False
    multi_objective: ClassVar[bool] = False  # decides on several objectives (by fronts) as well as on one
    ranks_constraints: ClassVar[bool] = False  # compares trials with those that break a constraint last
    # The live table's count of trials stopped early names the scheduler so; None: it stops none.
    stops_as: ClassVar[str | None] = None
    # Its searcher makes a new trial only when the scheduler wants one (freeze-thaw: a paused trial may be
    # worth more); the scheduler then has a ``wants_new_trial`` that the pair's gate asks.
    gates_new_trials: ClassVar[bool] = False
    # Which of --grace-period and --reduction-factor it reads; the dry run marks the others as not used.
    reads: ClassVar[tuple[str, ...]] = RUNG_SETTINGS

    def stopped_label(self, ctx: SchedulerContext) -> str | None:
        """The name the live table counts this scheduler's early stops under; None where it stops none or
        counts them in its own status line (a rule ranking by fronts does)."""
        return self.stops_as if comparison(ctx).ranked_by() is None else None

    def build(self, ctx: SchedulerContext) -> TrialScheduler:
        raise NotImplementedError

    def settings_said(self, ctx: SchedulerContext) -> dict[str, str]:
        """Words the dry run's settings list puts beside a rung setting: why it does not act as given."""
        return {name: f"not used by {self.name}" for name in RUNG_SETTINGS if name not in self.reads}

    def describe(self, ctx: SchedulerContext) -> list[str]:
        """The plan's lines: rungs or brackets with the epochs at each."""
        raise NotImplementedError

    def worst_case_epochs(self, ctx: SchedulerContext) -> int:
        """Epochs the sweep can train at most (every trial that could run to the end does)."""
        return ctx.num_samples * ctx.max_epochs
