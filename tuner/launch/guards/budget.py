"""A sweep ends on its budget: wall time from the first trial's start, epochs in all, or GPU-hours.

``BudgetWatch`` counts what the sweep spends at every controller step and result: wall time while trials
exist to run (from the first trial's start; time between a stop and a ``tuner resume`` is not counted),
epochs as results arrive, GPU-hours as the GPUs held by running trials. Once the budget is spent it
records the fate of every trial still open (``ended by the budget``), and ``BudgetStopper`` ends the sweep:
running trials stop with their last checkpoint, the searcher proposes no more. An epoch budget is checked
at every result, so it is exceeded by at most the epochs that were already on their way, one per trial
running at once.

What was spent is kept beside the experiment during the sweep (a file the driver writes, so a kill -9
loses seconds, not the count) and in ``spent.json`` inside it at the end, so ``tuner resume`` continues
with what is left and ``tuner resume --budget +1h`` extends a finished sweep.
"""

from __future__ import annotations

import dataclasses
import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, TypedDict, cast

from tuner import storage
from tuner.folder import spent as spent_record
from tuner.folder.fates import DecisionLog
from tuner.folder.spent import Spent
from tuner.launch.guards.ending import WatchStopper
from tuner.launch.guards.run_start import RunStartCallback
from tuner.limits import Budget
from tuner.open_trials import view_of
from tuner.ray_compat.state_file import OPEN_STATUSES

if TYPE_CHECKING:
    from ray.tune import PlacementGroupFactory
    from ray.tune.experiment import Trial

    from tuner.experiment import ExperimentRecord
    from tuner.value_types import Result

log = logging.getLogger(__name__)
SAVE_EVERY_S = 2.0


class _BudgetState(TypedDict):
    """What a pickled watch keeps (it reads what was spent afresh)."""

    folder: str
    budget_text: str | None
    fate_log: DecisionLog | None
    clock: Callable[[], float]


def load_spent(folder: str, record: ExperimentRecord | None = None) -> Spent:
    """What the experiment has spent in earlier runs; its epochs are at least those its results hold (a kill
    -9 loses the driver's last count, never a result). ``record``: the experiment as just read, if it was."""
    spent = spent_record.read(folder)
    spent.epochs = max(spent.epochs, _epochs_reported(folder, record))
    return spent


def _epochs_reported(folder: str, record: ExperimentRecord | None) -> int:
    from tuner import experiment
    from tuner.errors import UsageError

    try:
        return sum(len(trial.rows) for trial in (record or experiment.load(folder)).trials)
    except (UsageError, OSError):  # no experiment there yet
        return 0


def persist_spent(folder: str, record: ExperimentRecord | None = None) -> Spent:
    """Write what was spent into the experiment (after Ray's last sync) and forget the driver's copy."""
    spent = load_spent(folder, record)
    spent_record.write(folder, spent)
    return spent


def forget_ended(folder: str) -> None:
    """Before a run that extends the budget: the last run's end by the budget is not this one's."""
    spent = load_spent(folder)
    spent.ended_by_budget = False
    spent_record.write(folder, spent)


class BudgetWatch(RunStartCallback):
    """Counts the sweep's spending; decides when its budget is spent (``ended``)."""

    def __init__(
        self,
        folder: str,
        budget: str | None,
        fate_log: DecisionLog | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.folder = folder
        self.budget_text = budget
        self.fate_log = fate_log
        self.clock = clock
        self._reset(read=False)

    @property
    def live_key(self) -> str:
        return f"budget:{self.folder}"

    def _reset(self, read: bool = True) -> None:
        """``read``: what earlier runs spent, read from the experiment, which at 8,000 trials takes seconds: only
        at a run's start (Tune's ``setup``), not again when Ray builds or unpickles the watch."""
        from tuner.ray_compat import register_live

        register_live(self.live_key, self)
        self.budget = Budget.parse(self.budget_text) if self.budget_text else None
        self.before = load_spent(storage.here(self.folder)) if self.folder and read else Spent()
        self.now_spent = Spent(at_once=self.before.at_once)
        self.ended = False
        self._started = False
        self._run_from: float | None = None  # seconds since the epoch at this run's first trial start
        self._last_step: float | None = None
        self._last_save = 0.0

    def __getstate__(self) -> _BudgetState:
        return {
            "folder": self.folder,
            "budget_text": self.budget_text,
            "fate_log": self.fate_log,
            "clock": self.clock,
        }

    def __setstate__(self, state: _BudgetState) -> None:
        self.__dict__.update(state)
        self._reset(read=False)

    def at_run_start(self) -> None:
        """At the start of every run: the budget as saved now (``tuner resume --budget`` changes it)."""
        from tuner.settings import load_saved_config

        try:
            self.budget_text = load_saved_config(storage.here(self.folder)).budget
        except Exception:  # noqa: BLE001 - the budget given at construction stands
            log.debug("budget: saved settings unreadable; keeping %s", self.budget_text, exc_info=True)
        self._reset()
        log.debug("budget %s; spent before this run: %s", self.budget_text, self.before)

    def spent(self) -> Spent:
        """In all: before this run, and in it."""
        return self.before.plus(dataclasses.replace(self.now_spent, ended_by_budget=self.ended))

    def on_trial_start(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        if not self._started:
            self._started = True
            self._last_step = self.clock()
            self._run_from = time.time()

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        self.now_spent.epochs += 1
        self._check(trials)

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        now = self.clock()
        running = [t for t in view_of(self).update(trials) if t.status == "RUNNING"]
        if self._started and self._last_step is not None:
            step = now - self._last_step
            self.now_spent.wall += step
            gpus = sum(_gpus(t) for t in running)
            self.now_spent.gpu_hours += step * gpus / 3600.0
        self._last_step = now
        if self._run_from is not None:
            self.now_spent.runs = [[self._run_from, time.time()]]
        self.now_spent.at_once = max(self.now_spent.at_once, len(running))
        self._check(trials)
        if now - self._last_save >= SAVE_EVERY_S:
            self._save()

    def on_experiment_end(self, trials: list[Trial], **info: object) -> None:
        self._save()

    def _check(self, trials: list[Trial]) -> None:
        if self.ended or self.budget is None or self.budget.spent_of(self.spent()) < self.budget.amount:
            return
        self.ended = True
        from tuner.folder.fates import BUDGET

        open_trials = [t for t in trials if t.status in OPEN_STATUSES]
        for trial in open_trials:
            if self.fate_log is not None:
                self.fate_log.record(trial.trial_id, BUDGET, "ended by the budget")
        log.info(
            "the budget (%s) is spent; stopping %d open trial(s) with their last checkpoints",
            self.budget.describe(),
            len(open_trials),
        )
        self._save()

    def _save(self) -> None:
        if not self.folder:
            return
        self._last_save = self.clock()
        spent_record.write_running(self.folder, self.spent(), self.budget_text)


def _gpus(trial: Trial) -> float:
    try:
        # None until Tune places the trial (Ray's __init__, all that mypy reads of it, sets only that)
        factory = cast("PlacementGroupFactory | None", trial.placement_group_factory)
        if factory is None:
            return 0.0
        return float(factory.required_resources.get("GPU", 0.0))
    except Exception:  # noqa: BLE001 - a trial without resources yet holds no GPU
        return 0.0


class BudgetStopper(WatchStopper):
    """Ends the whole sweep once its budget is spent."""
