"""The trials a controller step can still change, so that a callback's work at each step follows the trials
still open, not every trial the sweep has had.

Tune hands its callbacks the list of every trial at every step; a sweep of thousands of short trials has
thousands of finished ones in it, and a callback that walks them all at each step costs more per trial the
longer the sweep runs. Within one run a finished trial (TERMINATED or ERROR) stays finished and the list only
grows (a retried trial is taken out and put back at its end, still open, which moves the trials after it back
by one), so ``OpenTrials`` looks again only at the trials open at the last step and at the end of the list from
where it stopped, less one place for each trial open then. A resumed run hands a new list: the view starts
again from it.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

FINISHED = frozenset({"TERMINATED", "ERROR"})


class OpenTrials:
    """Follows Tune's list of trials from step to step; ``update`` returns the trials not finished."""

    def __init__(self) -> None:
        self._start_again(None)

    def _start_again(self, trials: list[Trial] | None) -> None:
        self._list = trials
        self._taken = 0  # how many of the list's trials have been looked at
        self._open: list[Trial] = []
        self._open_statuses: list[str] = []
        self._finished: Counter[str] = Counter()
        self.statuses: dict[str, str] = {}  # every trial's status at the last update, by id
        self.added: list[Trial] = []  # the trials the last update saw first, in the list's order
        self.finished_now: list[Trial] = []  # the trials the last update found finished (once each)

    def __getstate__(self) -> dict[str, object]:
        return {}  # a pickled copy (a resumed run's) starts from the list it is handed then

    def __setstate__(self, state: dict[str, object]) -> None:
        self._start_again(None)

    def update(self, trials: list[Trial]) -> list[Trial]:
        """The trials of ``trials`` still open (pending, running or paused), in the list's order."""
        if trials is not self._list or len(trials) < self._taken:
            self._start_again(trials)
        start = max(0, self._taken - len(self._open) - 1)  # a retried open trial moves the ones after it back
        added = [t for t in trials[start:] if t.trial_id not in self.statuses]
        looked_at = self._open + added
        self._taken = len(trials)
        self.added, self.finished_now = added, []
        still_open, open_statuses = [], []
        for trial in looked_at:
            status = trial.status
            self.statuses[trial.trial_id] = status
            if status in FINISHED:
                self._finished[status] += 1
                self.finished_now.append(trial)
            else:
                still_open.append(trial)
                open_statuses.append(status)
        self._open, self._open_statuses = still_open, open_statuses
        return still_open

    def open_now(self) -> list[Trial]:
        """The trials open at the last update (pending, running or paused), in the list's order."""
        return list(self._open)

    def counts(self) -> Counter[str]:
        """How many trials are in each status at the last update (kept as they finish: the cost is the open ones')."""
        return self._finished + Counter(self._open_statuses)


def view_of(callback: object) -> OpenTrials:
    """A callback's view of the trials, made at its first step (one unpickled from an older sweep has none)."""
    view = vars(callback).get("_open_trials")
    if view is None:
        view = vars(callback)["_open_trials"] = OpenTrials()
    return view
