"""When freeze-thaw makes a new trial: just in time, when a worker is free for it, never ahead.

Tune asks the searcher for a new trial whenever none waits to start, and asks the scheduler which trial runs
next at every step of its loop, whether or not a worker is free. Left to that, a new trial proposed by the
model as it was many epochs ago stood waiting, and a paused trial chosen while every worker trained waited
staged; at 1 trial at once the running trial was weighed against that stale proposal until it ended.

So, once the model exists: asked which trial runs next while no worker is free, the scheduler names none
(nothing is staged ahead). Asked while a worker is free, it names none when a new config promises more than
every waiting trial, and wants a new trial: Tune asks the searcher at its next step (no trial is pending then),
the gate (tuner/schedulers/curve_gate.py) lets one through, and the model's proposal of that moment runs. If
the searcher gives none, the best waiting trial runs. Every step of this follows from the trials' states, not
from how often Tune's loop calls, so a sweep and its replay decide alike.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ray.tune.experiment import Trial

if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

# Asked this many times in a row for a trial with a new one wanted and the searcher never asked (its search
# ended where the scheduler could not see), the scheduler gives up waiting: a guard against a stalled sweep.
NEVER_ASKED = 100


class JustInTime:
    """The timing state a freeze-thaw scheduler keeps; set at class level, so that one pickled before it
    existed starts without a new trial wanted."""

    _wanting = 0  # choices since a new trial was wanted; 0 when none is
    _gate_opened = False  # the searcher was asked since
    _most_running = 0  # the most trials seen running at once
    slots = 0  # trials that can run at once, as the sweep was placed (0: not known); a worker is free below
    # it, or below the most seen running when that is more (a cluster that grew)

    def _worker_free(self, running: int) -> bool:
        self._most_running = max(self._most_running, running)
        return running < max(self.slots, self._most_running, 1)

    def hold(
        self, waiting: Sequence[Trial], running: int, searching: bool, new_promises_more: Callable[[], bool]
    ) -> bool:
        """Whether to name no trial now: none is staged while no worker is free, and while the search goes on
        a new trial is wanted when it promises more than every waiting trial."""
        free = self._worker_free(running)
        if self._wanting:
            if (
                self._gate_opened or self._wanting >= NEVER_ASKED
            ):  # asked, and none came: the best waiting runs
                self._wanting = 0
                return not free
            self._wanting += 1
            return True
        if not free:
            return True
        if not searching:
            return False
        if any(t.status == Trial.PENDING and not self._has_run(t) for t in waiting):
            return False  # a new trial waits already
        if waiting and not new_promises_more():
            return False
        self._wanting, self._gate_opened = 1, False
        return True

    def gate_open(self, idle: bool) -> bool:
        """The gate's answer once the model exists: open when a new trial is wanted, or when no trial is left
        to run or continue (Tune then waits on the searcher alone, never asking the scheduler)."""
        self._gate_opened = self._gate_opened or bool(self._wanting)
        return bool(self._wanting) or idle

    def asks_for_new_trial(self) -> bool:
        """Whether it named no trial on a free worker to have a new one made (the replay engine steps again)."""
        return bool(self._wanting)

    def trial_added(self) -> None:
        self._wanting = 0  # what was wanted came

    def _has_run(self, trial: Trial) -> bool:
        raise NotImplementedError
