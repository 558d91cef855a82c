"""No sweep waits for ever: end one in which nothing runs or waits to run, and nothing new comes, for a while.

A sweep can stall when a scheduler holds trials for results that only more trials would give and the
searcher proposes none (each waits for the other), or when a searcher waits for results that never come.
``StallWatch`` sees every trial's status at each controller step; once no trial has been RUNNING or
PENDING for ``timeout`` seconds while the sweep is not done, it records why, and the fate of every trial still
open (``ended by the stall``: Ray stops them with no word of its own, and a trial stopped below
``--max-epochs`` with no decision would read as one its own loop ended). Two ways end the sweep then,
because Tune runs no controller step while it waits on the searcher (it asks it again every second):
``StallStopper`` ends it between steps, and ``StallAwareSearcher`` tells Tune the search is over. Either
way trials checkpoint, the best so far is reported, and the CLI exits with code 3.
"""

from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from ray.tune.search import Searcher

from tuner.folder.fates import STALL, DecisionLog
from tuner.folder.names import STALL_SIDECAR as STALL_FILE
from tuner.folder.pickled import Restored, none
from tuner.launch.guards.ending import WatchStopper
from tuner.launch.guards.run_start import RunStartCallback
from tuner.open_trials import view_of
from tuner.searchers.wrapping import WrappingSearcher

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.value_types import Value

ACTIVE = ("RUNNING", "PENDING")


class StallWatch(Restored, RunStartCallback):
    """Decides a sweep has stalled; says why in ``reason`` and in a file beside the experiment (a
    resumed sweep runs the copy Ray restores, which the driver does not hold)."""

    SINCE = {"fate_log": none}  # a watch saved before it kept one records no fates

    def __init__(
        self,
        timeout: float,
        folder: str | None = None,
        clock: Callable[[], float] = time.monotonic,
        fate_log: DecisionLog | None = None,
    ) -> None:
        self.timeout = timeout
        self.clock = clock
        self.folder = folder
        self.fate_log = fate_log
        self.reason: str | None = None
        self._quiet_since: float | None = None
        self._statuses: Counter[str] | None = None
        self._register()

    @property
    def path(self) -> str | None:
        """The stall file beside the experiment where it lies now (a moved one's follows it)."""
        from tuner.storage import sidecar_of

        return sidecar_of(self.__dict__, STALL_FILE)

    @property
    def live_key(self) -> str | None:
        return f"stall:{self.path}" if self.path else None

    @property
    def ended(self) -> bool:
        return self.reason is not None

    def _register(self) -> None:
        from tuner.ray_compat import register_live

        if self.live_key:
            register_live(self.live_key, self)

    def at_run_start(self) -> None:
        self._register()  # a resumed sweep runs an unpickled copy: this one decides now

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        view = view_of(self)
        view.update(trials)
        self.observe(view.counts())

    def stalled_now(self) -> bool:
        """Whether the sweep has stalled, judged now from the last step's statuses (none yet: no)."""
        if self._statuses is not None:
            self.observe(self._statuses)
        return self.reason is not None

    def observe(self, statuses: Iterable[str] | Mapping[str, int]) -> None:
        """One controller step's statuses (the trials Tune knows of), each trial's or counted by status."""
        self._statuses = counts = Counter(statuses)
        if any(counts[s] for s in ACTIVE):
            self._quiet_since = None
            return
        now = self.clock()
        if self._quiet_since is None:
            self._quiet_since = now
        elif now - self._quiet_since >= self.timeout and self.reason is None:
            described = ", ".join(f"{n} {s}" for s, n in sorted(counts.items()) if n) or "no trials"
            self.reason = (
                f"for {self.timeout:g} s no trial ran or waited to run ({described}) and no new trial came; "
                "the sweep was ended with what it had"
            )
            if self.path:
                Path(self.path).parent.mkdir(parents=True, exist_ok=True)
                Path(self.path).write_text(json.dumps({"reason": self.reason}), encoding="utf-8")
            self._record_open()

    def _record_open(self) -> None:
        """The fate of each trial still open at the last step: the sweep's end stops it."""
        fate_log = self.fate_log
        if fate_log is None:
            return
        for trial in view_of(self).open_now():
            fate_log.record(trial.trial_id, STALL, "ended by the stall")


class StallStopper(WatchStopper):
    """Ends the whole sweep once its watch has seen a stall."""


class StallAwareSearcher(WrappingSearcher):
    """Wraps a searcher: when it has nothing to propose and the sweep has stalled, the search is over."""

    def __init__(self, inner: Searcher, watch: StallWatch) -> None:
        super().__init__(inner)
        self.watch = watch

    def suggest(self, trial_id: str) -> dict[str, Value] | str | None:  # type: ignore[override]  # Searcher.FINISHED is a str
        suggestion = self.inner.suggest(trial_id)
        if suggestion is None and self.watch.stalled_now():
            return Searcher.FINISHED
        return suggestion


def forget_stall(folder: str) -> None:
    """Before a run: an earlier run's stall is not this one's."""
    from tuner.storage import sidecar

    sidecar(folder, STALL_FILE).unlink(missing_ok=True)


def stall_reason(folder: str) -> str | None:
    """Why the sweep in ``folder`` was ended as stalled, if it was (the last run's watch wrote it)."""
    from tuner.storage import sidecar

    try:
        return json.loads(sidecar(folder, STALL_FILE).read_text(encoding="utf-8"))["reason"]
    except (OSError, ValueError, KeyError):
        return None
