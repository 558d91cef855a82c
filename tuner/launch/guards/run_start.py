"""What the guards share as Tune callbacks: being told when each run starts, a new sweep's or a resumed one's."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune import Callback

if TYPE_CHECKING:
    from ray.tune import Stopper


class RunStartCallback(Callback):
    """A Tune callback with ``at_run_start``: Tune's ``setup``, its signature written once for every guard."""

    def setup(
        self,
        stop: Stopper | None = None,
        num_samples: int | None = None,
        total_num_samples: int | None = None,
        **info: object,
    ) -> None:
        self.at_run_start()

    def at_run_start(self) -> None:
        """At the start of every run (a resumed sweep runs an unpickled copy of the guard)."""
