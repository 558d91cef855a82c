"""Trial schedulers: which trials keep running. Ray's own ASHA and HyperBand, configured from a sweep."""

from __future__ import annotations

from ray.tune.schedulers import ASHAScheduler, FIFOScheduler, HyperBandScheduler, TrialScheduler

from tuner.config import SCHEDULERS
from tuner.errors import UsageError

# The seed tutorial's ASHA: stop the worse half of trials at every rung, the first rung after one epoch.
ASHA_GRACE_PERIOD = 1
REDUCTION_FACTOR = 2


def build_scheduler(name: str, max_epochs: int) -> TrialScheduler:
    """A scheduler whose time unit is one reported epoch (``training_iteration``)."""
    if name == "fifo":
        return FIFOScheduler()
    if name == "asha":
        return ASHAScheduler(
            time_attr="training_iteration",
            max_t=max_epochs,
            grace_period=min(ASHA_GRACE_PERIOD, max_epochs),
            reduction_factor=REDUCTION_FACTOR,
        )
    if name == "hyperband":
        return HyperBandScheduler(
            time_attr="training_iteration", max_t=max_epochs, reduction_factor=REDUCTION_FACTOR
        )
    raise UsageError(f"unknown scheduler {name!r}; valid: {', '.join(SCHEDULERS)}")


def describe_scheduler(name: str, max_epochs: int) -> str:
    if name == "asha":
        return (
            f"ASHA: rungs from epoch {min(ASHA_GRACE_PERIOD, max_epochs)} to {max_epochs}, "
            f"the worse 1/{REDUCTION_FACTOR} stopped at each"
        )
    if name == "hyperband":
        return f"HyperBand: brackets up to {max_epochs} epochs, reduction factor {REDUCTION_FACTOR}"
    return f"FIFO: every trial runs all {max_epochs} epochs"
