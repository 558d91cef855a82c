"""Hung trials end and the sweep goes on: a running trial silent for too long is stopped as failed.

A stuck data loader, a deadlocked collective or a hung network read leaves a trial RUNNING for ever while
the other trials finish; the stall guard (tuner/launch/guards/stall.py) cannot see it, as something still runs. The
watch times every running trial's silence: since its start (or restore) until its first report, then
between reports. Past the limit (tuner/limits.py: fixed by ``--trial-timeout``, else from the slowest epoch
the sweep has seen) it records the trial's fate, ``hung: no report for N s after epoch k``, and ends the
trial's process: a blocked process cannot be asked to stop. Tune then sees a failed trial, so the
scheduler and the searcher learn of it as of any failure, and ``--max-failures`` retries it from its last
checkpoint. The watch runs on the driver, so it works the same on a cluster. While the experiment's storage
cannot be reached (tuner/storage_outage.py) the trials wait for it at their next checkpoint: no silence is
counted then.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict

from tuner import storage_outage
from tuner.durations import format_seconds
from tuner.folder.fates import DecisionLog
from tuner.launch.guards.run_start import RunStartCallback
from tuner.limits import TrialTimeout
from tuner.open_trials import view_of
from tuner.storage import here
from tuner.values import number

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.value_types import Result

log = logging.getLogger(__name__)
HUNG = "hung"


class _WatchState(TypedDict):
    """What a pickled watch keeps (its clocks start afresh)."""

    timeout: TrialTimeout
    fate_log: DecisionLog | None
    clock: Callable[[], float]
    folder: str | None


class HungTrialWatch(RunStartCallback):
    """Times each running trial's silence and stops the ones past the limit."""

    def __init__(
        self,
        timeout: TrialTimeout,
        fate_log: DecisionLog | None = None,
        clock: Callable[[], float] = time.monotonic,
        folder: str | None = None,
    ) -> None:
        self.timeout = timeout
        self.fate_log = fate_log
        self.clock = clock
        self.folder = folder  # where the saved settings say the timeout (``tuner resume --trial-timeout``)
        self._reset()

    def _reset(self) -> None:
        self._since: dict[str, tuple[float, int, bool]] = {}  # trial id -> (last sign of life, epoch, first?)
        self._ended: set[str] = set()  # stopped as hung, until Tune has handled it
        self.slowest_epoch: float | None = None
        self.slowest_first: float | None = None

    def __getstate__(self) -> _WatchState:
        # Ray pickles callbacks with the sweep; a resumed sweep starts its clocks afresh.
        return {
            "timeout": self.timeout,
            "fate_log": self.fate_log,
            "clock": self.clock,
            "folder": self.folder,
        }

    def __setstate__(self, state: _WatchState) -> None:
        self.__dict__.update(state)
        self._reset()

    def at_run_start(self) -> None:
        """At the start of every run: the timeout as saved now (``tuner resume --trial-timeout`` changes it)."""
        from tuner.settings import load_saved_config

        if self.folder is not None:
            try:
                self.timeout = TrialTimeout.parse(load_saved_config(here(self.folder)).trial_timeout)
            except Exception:  # noqa: BLE001 - the timeout given at construction stands
                log.debug("trial timeout: saved settings unreadable", exc_info=True)
        self._reset()

    def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        self._start(trial)

    def on_trial_recover(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        self._since.pop(trial.trial_id, None)  # its restart is timed from when it runs again
        self._ended.discard(trial.trial_id)

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        now = self.clock()
        epoch = int(number(result.get("training_iteration")) or 0)
        since, last_epoch, first = self._since.get(trial.trial_id, (now, epoch, True))
        took = (now - since) / max(epoch - last_epoch, 1)
        if first:
            self.slowest_first = max(self.slowest_first or 0.0, now - since)
        else:
            self.slowest_epoch = max(self.slowest_epoch or 0.0, took)
        self._since[trial.trial_id] = (now, epoch, False)

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        running_trials = [t for t in view_of(self).update(trials) if t.status == "RUNNING"]
        running = {t.trial_id for t in running_trials}
        for trial_id in set(self._since) - running:
            del self._since[trial_id]
        self._ended &= running
        outage = storage_outage.waiting()  # the trials wait for the storage too: that silence is not theirs
        for trial in running_trials:
            if trial.trial_id in self._ended:
                continue
            if outage and trial.trial_id in self._since:
                _, epoch, first = self._since[trial.trial_id]
                self._since[trial.trial_id] = (self.clock(), epoch, first)
                continue
            if trial.trial_id not in self._since:
                self._start(trial)  # resumed from a pause without a start event
                continue
            since, epoch, first = self._since[trial.trial_id]
            silent = self.clock() - since
            limit = self.timeout.limit(first, self.slowest_epoch, self.slowest_first)
            if silent >= limit:
                self._end(trial, silent, epoch, limit)

    def _start(self, trial: Trial) -> None:
        # a trial that never reported has no last result yet: asking Tune for it waits on the trial's actor
        reported = trial.last_result if trial.has_reported_at_least_once else {}
        epoch = int(reported.get("training_iteration") or 0)
        self._since[trial.trial_id] = (self.clock(), epoch, True)
        self._ended.discard(trial.trial_id)

    def _end(self, trial: Trial, silent: float, epoch: int, limit: float) -> None:
        from tuner.ray_compat import end_trial_process

        after = f"after epoch {epoch}" if epoch else "since it started"
        text = f"hung: no report for {silent:.0f} s {after} (limit {format_seconds(limit)})"
        if self.fate_log is not None:
            self.fate_log.record(trial.trial_id, HUNG, text)
        log.warning("trial %s %s; stopping it", trial.trial_id, text)
        self._ended.add(trial.trial_id)
        end_trial_process(trial)
