"""What makes a sweep end on its own and say why trials ended: stalls, hung trials, deaths, the budget, signals, a full storage, the epoch limit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner import storage
from tuner.folder.fates import DecisionLog
from tuner.settings import SweepConfig

if TYPE_CHECKING:
    from ray.tune import Callback, Stopper

    from tuner.launch.guards.ending import EndingWatch


def all_guards(cfg: SweepConfig, folder: str, fate_log: DecisionLog) -> list[Callback]:
    """What makes a sweep end on its own and say why trials ended: hung trials stopped, deaths named, the
    budget counted, a full storage met with an orderly stop."""
    from tuner.launch.guards import disk
    from tuner.launch.guards.budget import BudgetWatch
    from tuner.launch.guards.crashes import CrashNamer
    from tuner.launch.guards.watchdog import HungTrialWatch
    from tuner.limits import TrialTimeout

    return [
        HungTrialWatch(TrialTimeout.parse(cfg.trial_timeout), fate_log, folder=folder),
        CrashNamer(storage.local_path(folder), fate_log),
        BudgetWatch(folder, cfg.budget, fate_log),
        disk.StorageWatch(storage.local_path(folder), folder, fate_log),
    ]


def sweep_stopper(stall: EndingWatch, budget: EndingWatch, max_epochs: int | None = None) -> Stopper:
    """Ends the whole sweep when it stalls or its budget is spent, and with ``max_epochs`` each trial there (for
    schedulers that never end one: ``SchedulerEntry.ends_at_max_epochs``)."""
    from ray.tune.stopper import CombinedStopper

    from tuner.launch.guards.budget import BudgetStopper
    from tuner.launch.guards.epoch_limit import EpochLimit
    from tuner.launch.guards.stall import StallStopper

    stoppers: list[Stopper] = [StallStopper(stall), BudgetStopper(budget)]
    if max_epochs is not None:
        stoppers.append(EpochLimit(max_epochs))
    return CombinedStopper(*stoppers)
