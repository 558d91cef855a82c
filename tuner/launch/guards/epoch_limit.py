"""--max-epochs kept by every trainable: a trial is ended at its last epoch whatever its own loop would do."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune import Stopper

from tuner.values import number

if TYPE_CHECKING:
    from tuner.value_types import Result


class EpochLimit(Stopper):
    """Ends a trial at its ``max_epochs``-th result (read from the result, so a resumed trial, or one PBT restarted
    from another's checkpoint, counts right). Given to schedulers that never end a trial themselves (FIFO,
    PBT): a class trainable, or a function that does not take ``max_epochs``, would otherwise run past it."""

    def __init__(self, max_epochs: int) -> None:
        self.max_epochs = max_epochs

    def __call__(self, trial_id: str, result: Result) -> bool:
        return int(number(result.get("training_iteration")) or 0) >= self.max_epochs

    def stop_all(self) -> bool:
        return False
