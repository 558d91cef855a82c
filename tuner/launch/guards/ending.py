"""A stopper that ends the whole sweep when a watch says so (the stall and budget guards each have one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from ray.tune import Stopper

if TYPE_CHECKING:
    from tuner.value_types import Result


class EndingWatch(Protocol):
    """A callback that decides the sweep is over: ``ended``, under the name it is live by (``live_key``)."""

    @property
    def live_key(self) -> str | None: ...

    @property
    def ended(self) -> bool: ...


class WatchStopper(Stopper):
    """Ends the whole sweep once ``watch`` says it is over; never stops a trial on its own.

    Ray consults the stopper it saved in the experiment, not the watch this process made, on resume: the live
    watch is looked up by its key (ray_compat part 10, tuner/ray_compat/live.py).
    """

    def __init__(self, watch: EndingWatch) -> None:
        self.watch = watch

    def __call__(self, trial_id: str, result: Result) -> bool:
        return False

    def stop_all(self) -> bool:
        from tuner.ray_compat import live

        key = self.watch.live_key
        return bool((live(key, self.watch) if key else self.watch).ended)
