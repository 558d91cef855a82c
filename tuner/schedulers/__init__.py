"""Trial schedulers: one registry entry per algorithm (Ray's own schedulers, configured for a sweep).

Adding a scheduler is one ``SchedulerEntry`` subclass listed in ``ENTRIES``, plus its tests.
"""

from __future__ import annotations

from tuner.errors import UsageError
from tuner.schedulers.asha import Asha
from tuner.schedulers.base import SchedulerContext, SchedulerEntry
from tuner.schedulers.fifo import Fifo
from tuner.schedulers.freeze_thaw import FreezeThaw
from tuner.schedulers.hyperband import Bohb, HyperBand
from tuner.schedulers.median import Median
from tuner.schedulers.pbt import Pbt

ENTRIES: tuple[type[SchedulerEntry], ...] = (Asha, Fifo, HyperBand, Bohb, Median, Pbt, FreezeThaw)
REGISTRY: dict[str, type[SchedulerEntry]] = {e.name: e for e in ENTRIES}
NAMES: tuple[str, ...] = tuple(REGISTRY)
AUTO = "auto"  # not an algorithm: the one measured ahead for the sweep in hand (tuner/algorithms.py)
CHOICES: tuple[str, ...] = (AUTO, *NAMES)
DEFAULT = AUTO

__all__ = ["AUTO", "CHOICES", "DEFAULT", "NAMES", "REGISTRY", "SchedulerContext", "SchedulerEntry", "entry"]


def entry(name: str) -> SchedulerEntry:
    if name not in REGISTRY:
        raise UsageError(f"unknown scheduler {name!r}; valid: {', '.join(NAMES)}")
    return REGISTRY[name]()
