"""Whether a pause keeps every epoch a trial ran: what a scheduler that pauses trials must know of the trainable.

A class trainable saves when it is paused. A function trainable keeps only the checkpoints it reports, so a
pause at an epoch without one continues it later from its last checkpoint (or its first epoch), running the
epochs since again. Ray's docs often checkpoint every few epochs; freeze-thaw then waits for a result with a
checkpoint, and HyperBand and BOHB, whose rounds end at set epochs, say once what it costs.
"""

from __future__ import annotations

import functools
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.value_types import Result

log = logging.getLogger(__name__)
_warned: set[str] = set()  # the trainables told of it in this process


def pause_keeps(trial: Trial, result: Result) -> bool:
    """Whether pausing ``trial`` at ``result`` keeps every epoch it ran: a class trainable saves when paused; a
    function trainable must have reported a checkpoint with this result (Ray marks it ``should_checkpoint``)."""
    name = getattr(trial, "trainable_name", None)  # a replay's or a test's stand-in has none
    return bool(result.get("should_checkpoint")) or not (name and _reports_its_checkpoints(name))


def warn_once_if_lost(trial: Trial, result: Result, scheduler: str, max_t: int) -> None:
    """A pause at ``result`` that will run epochs again: said once a trainable, with what to do. A trial paused
    at ``max_t`` only waits for its round's verdict: it is never continued, so nothing is run again."""
    name = getattr(trial, "trainable_name", "")
    epoch = result.get("training_iteration")
    if name in _warned or pause_keeps(trial, result) or (isinstance(epoch, int) and epoch >= max_t):
        return
    _warned.add(name)
    log.warning(
        "%s pauses trial %s at epoch %s, where it reported no checkpoint: continued, it goes on from its last "
        "checkpoint and runs the epochs since again; report a checkpoint with every result to lose none",
        scheduler,
        trial.trial_id,
        result.get("training_iteration"),
    )


@functools.lru_cache(maxsize=64)
def _reports_its_checkpoints(trainable_name: str) -> bool:
    """A function trainable's (its checkpoints are the ones it reports); False where the name is not registered
    (a replay's trials). Read once a name: Ray's registry unpickles the class at every read."""
    from ray.tune.registry import get_trainable_cls
    from ray.tune.trainable.function_trainable import FunctionTrainable

    try:
        return issubclass(get_trainable_cls(trainable_name), FunctionTrainable)
    except Exception:  # noqa: BLE001 - Ray's registry raises several types for a name it does not hold
        return False
