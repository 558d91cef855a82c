"""The replay engine: learning curves played through a sweep's own scheduler and searcher on a simulated clock.

A sweep spends real epochs to learn what a scheduler decides; a replay looks the epochs up instead. The
scheduler and searcher are the very objects a sweep builds (tuner's registry entries, Ray's classes), and
``Controller`` stands where Ray's TuneController stands for them: it creates trials from the searcher (at
most ``max_pending`` waiting, as Tune does), starts the one the scheduler chooses and then pending ones in
order while a worker is free, hands each result to the scheduler and then the searcher, and carries out
CONTINUE, PAUSE and STOP, including the stops a scheduler orders for other trials. Results arrive in
simulated-time order: an epoch ends ``seconds`` after it began, one epoch per worker at a time. No Ray
cluster, no process; a thousand trials take seconds.

A curve can be shorter than the epochs the scheduler would grant (a finished sweep's trial that its own
scheduler stopped): the replay then ends that trial where its curve ends and marks it ``cut_short``, so
an answer can say how many trials it rests on. A curve marked ``whole`` (its trial's own loop ended it
there) ends there as the trainable would, cut short by nothing.
"""

from __future__ import annotations

import collections
import heapq
import itertools
import math
from typing import TYPE_CHECKING, cast

from tuner.objectives import Mode
from tuner.replay.outcome import Curve, CurveSource, FateMemory, FixedOrder, ReplayedTrial, ReplayOutcome

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController
    from ray.tune.experiment import Trial
    from ray.tune.schedulers import TrialScheduler
    from ray.tune.search import Searcher

    from tuner.replay.setup import Algorithms
    from tuner.value_types import Value

__all__ = ["Controller", "Curve", "CurveSource", "FixedOrder", "ReplayOutcome", "ReplayedTrial", "replay"]

CONTINUE, PAUSE, STOP = "CONTINUE", "PAUSE", "STOP"


class _SearchAlg:
    """What schedulers reach through ``tune_controller.search_alg`` (BOHB tells its searcher of pauses)."""

    def __init__(self, searcher: Searcher | FixedOrder) -> None:
        self.searcher = searcher


class Controller:
    """Ray's TuneController as schedulers see it, driving trials on a simulated clock."""

    def __init__(
        self,
        source: CurveSource,
        scheduler: TrialScheduler,
        searcher: Searcher | FixedOrder,
        *,
        workers: int,
        metric: str,
        mode: Mode,
        num_samples: int | None = None,
        max_pending: int = 1,
        max_epochs: int | None = None,
        epoch_budget: int | None = None,
        seconds_budget: float | None = None,
        fate_log: FateMemory | None = None,
    ) -> None:
        from ray.tune.experiment import Trial

        self._Trial = Trial
        self.source, self.scheduler, self.searcher = source, scheduler, searcher
        self.search_alg = _SearchAlg(searcher)
        self.workers, self.metric, self.mode = max(1, workers), metric, mode
        self.num_samples, self.max_pending, self.max_epochs = num_samples, max(1, max_pending), max_epochs
        self.epoch_budget, self.seconds_budget = epoch_budget, seconds_budget
        self.fates = fate_log or FateMemory()
        self.clock = 0.0
        self._trials: list[Trial] = []
        # trials by status, kept as statuses change (only ``_set`` changes one): counted at every step, a walk
        # of every trial would make a replay of thousands quadratic
        self._by_status: collections.Counter[str] = collections.Counter()
        self._records: dict[str, ReplayedTrial] = {}
        self._curves: dict[str, Curve] = {}
        self._queue: list[tuple[float, int, Trial]] = []  # (time an epoch ends, order, trial)
        self._order = itertools.count()
        self._ids = itertools.count(1)
        self._search_finished = False
        self._staged: list[Trial] = []  # paused trials the scheduler chose, waiting as pending for a worker
        self._spent = 0
        self._spent_seconds = 0.0  # trial time, summed over workers

    @property
    def as_tune(self) -> TuneController:
        """This stand-in, handed to schedulers where Tune hands its controller (they call only what it answers:
        tests/unit/test_private_uses.py checks every call Ray's schedulers and tuner's rules make)."""
        return cast("TuneController", self)

    # --- what schedulers call -------------------------------------------------------------------------
    def get_trials(self) -> list[Trial]:
        return self._trials

    def get_live_trials(self) -> list[Trial]:
        return [t for t in self._trials if t.status not in (self._Trial.TERMINATED, self._Trial.ERROR)]

    def stop_trial(self, trial: Trial) -> None:
        """Ray's canonical stop: a waiting trial leaves the scheduler; a running one completes in it."""
        Trial = self._Trial
        if trial.status in (Trial.ERROR, Trial.TERMINATED):
            return
        if trial.status in (Trial.PENDING, Trial.PAUSED):
            self.scheduler.on_trial_remove(self.as_tune, trial)
            self.searcher.on_trial_complete(trial.trial_id)
        else:
            self.scheduler.on_trial_complete(self.as_tune, trial, dict(trial.last_result))
            self.searcher.on_trial_complete(trial.trial_id, result=dict(trial.last_result))
        self._end(trial)

    def pause_trial(self, trial: Trial, should_checkpoint: bool = True) -> None:
        self._set(trial, self._Trial.PAUSED)
        self._drop_from_queue(trial)

    # --- the loop ---------------------------------------------------------------------------------------
    def run(self) -> ReplayOutcome:
        while True:
            self._settle()
            if not self._queue:
                break
            at, _, trial = heapq.heappop(self._queue)
            self.clock = at
            self._result(trial)
            if (self.epoch_budget is not None and self._spent >= self.epoch_budget) or (
                self.seconds_budget is not None and self._spent_seconds >= self.seconds_budget
            ):
                self._search_finished = True
                for t in list(self._trials):
                    self.stop_trial(t)
        waiting = [t for t in self._trials if t.status in (self._Trial.PENDING, self._Trial.PAUSED)]
        for trial in waiting:
            self.stop_trial(trial)
        records = [self._records[t.trial_id] for t in self._trials]
        return ReplayOutcome(records, self.metric, self.mode, self.workers, self.clock, stalled=bool(waiting))

    def _settle(self) -> None:
        """Tune's loop steps between two results, until they change nothing: new trials from the searcher, the
        trial the scheduler wants next staged (a paused one waits as pending from then on, first in line, as
        Tune stages it at once whether or not a worker is free), trials started on free workers."""
        while True:
            before = self._state()
            self._create_trials()
            self._stage()
            self._start_trials()
            if self._state() == before:
                return

    def _state(self) -> tuple[int, int, int]:
        """What a step of Tune's loop can change: the trials, those staged, those running."""
        return len(self._trials), len(self._staged), self._count(self._Trial.RUNNING)

    def _stage(self) -> None:
        trial = self.scheduler.choose_trial_to_run(self.as_tune)
        if trial is not None and trial.status == self._Trial.PAUSED and trial not in self._staged:
            self._set(trial, self._Trial.PENDING)
            self._staged.append(trial)

    def _create_trials(self) -> None:
        Trial = self._Trial
        while not self._search_finished and self._count(Trial.PENDING) < self.max_pending:
            if self.num_samples is not None and len(self._trials) >= self.num_samples:
                self._search_finished = True
                return
            trial_id = f"{next(self._ids):05d}"
            config = self.searcher.suggest(trial_id)
            if config is None:
                return
            if isinstance(config, str):  # ray.tune.search.Searcher.FINISHED
                self._search_finished = True
                return
            trial = Trial("replay", config=dict(config), trial_id=trial_id, stub=True)
            record = ReplayedTrial(trial_id, dict(config))
            curve = self.source.curve(record.config)
            if curve is None:
                record.missing = True
                curve = Curve(record.config, [], [])
            record.available = len(curve.rows)
            self._curves[trial_id], self._records[trial_id] = curve, record
            self._trials.append(trial)
            self._by_status[trial.status] += 1
            self.scheduler.on_trial_add(self.as_tune, trial)

    def _start_trials(self) -> None:
        Trial = self._Trial
        while self._count(Trial.RUNNING) < self.workers:
            self._staged = [t for t in self._staged if t.status == Trial.PENDING]
            trial = self.scheduler.choose_trial_to_run(
                self.as_tune
            )  # Tune gives its choice a free worker first
            if trial is None and self._staged:
                trial = self._staged[0]
            if trial is None:
                trial = next((t for t in self._trials if t.status == Trial.PENDING), None)
            if trial is None:
                return
            self._start(trial)

    def _start(self, trial: Trial) -> None:
        record = self._records[trial.trial_id]
        if record.started is None:
            record.started = self.clock
        if (
            record.epochs >= record.available
        ):  # nothing more to train: it ends as a trial that returned at once
            self._set(trial, self._Trial.RUNNING)
            record.cut_short = (
                not record.missing
                and not self._curves[trial.trial_id].whole
                and self.max_epochs is not None
                and record.epochs < self.max_epochs
            )
            self.stop_trial(trial)
            return
        self._set(trial, self._Trial.RUNNING)
        self._next_epoch(trial)

    def _next_epoch(self, trial: Trial) -> None:
        record = self._records[trial.trial_id]
        took = float(self._curves[trial.trial_id].seconds[record.epochs])
        heapq.heappush(self._queue, (self.clock + max(took, 0.0), next(self._order), trial))

    def _result(self, trial: Trial) -> None:
        record, curve = self._records[trial.trial_id], self._curves[trial.trial_id]
        record.epochs += 1
        self._spent += 1
        epoch = record.epochs
        self._spent_seconds += float(curve.seconds[epoch - 1])
        record.work.append(float(curve.seconds[epoch - 1]))
        result: dict[str, Value] = {
            **curve.rows[epoch - 1],
            "training_iteration": epoch,
            "trial_id": trial.trial_id,
            "time_this_iter_s": curve.seconds[epoch - 1],
            "time_total_s": sum(curve.seconds[:epoch]),
            "done": False,
        }
        value = result.get(self.metric)
        record.values.append(float(value) if isinstance(value, (int, float)) else math.nan)
        record.timeline.append((self.clock, record.values[-1]))
        record.last = result
        decision = self.scheduler.on_trial_result(self.as_tune, trial, result)
        record.decisions.append((epoch, decision))
        if decision != STOP:
            self.searcher.on_trial_result(trial.trial_id, result)
        trial.update_last_result(result)
        if trial.status != self._Trial.RUNNING:
            return  # the scheduler already ended it while deciding
        if decision == STOP:
            self.stop_trial(trial)
        elif decision == PAUSE:
            self.pause_trial(trial)
        elif epoch >= len(curve.rows):
            # The function returned after its last report: Tune completes the trial.
            record.cut_short = not curve.whole and self.max_epochs is not None and epoch < self.max_epochs
            self.stop_trial(trial)
        else:
            self._next_epoch(trial)

    def _end(self, trial: Trial) -> None:
        self._set(trial, self._Trial.TERMINATED)
        self._drop_from_queue(trial)
        record = self._records[trial.trial_id]
        record.ended = self.clock
        record.fate = self.fates.texts.get(trial.trial_id, "")

    def _set(self, trial: Trial, status: str) -> None:
        self._by_status[trial.status] -= 1
        trial.set_status(status)
        self._by_status[trial.status] += 1

    def _drop_from_queue(self, trial: Trial) -> None:
        if any(t is trial for _, _, t in self._queue):
            self._queue = [e for e in self._queue if e[2] is not trial]
            heapq.heapify(self._queue)

    def _count(self, status: str) -> int:
        return self._by_status[status]


def replay(
    source: CurveSource,
    algorithms: Algorithms,
    *,
    workers: int,
    metric: str,
    mode: Mode,
    num_samples: int | None = None,
    max_epochs: int | None = None,
    epoch_budget: int | None = None,
    seconds_budget: float | None = None,
) -> ReplayOutcome:
    """Play ``source``'s curves through ``algorithms`` (tuner/replay/setup.py) with ``workers`` trials at once.

    A searcher with a concurrency limit (model-based ones, as a sweep runs them) is wrapped in Ray's
    ConcurrencyLimiter with as many trials waiting; a searcher that learns nothing has a trial waiting per
    worker, as a sweep sets it; any other has one trial waiting at a time, as Tune does; a recorded order
    queues up a trial per worker, as a sweep's variant generator does.
    """
    import logging

    searcher, pending = algorithms.searcher, algorithms.waiting or 1
    assert searcher is not None, "a recorded order's searcher (FixedOrder) is set by the caller of build()"
    if algorithms.max_concurrent:
        from ray.tune.search import ConcurrencyLimiter

        # a concurrency limit comes only with a searcher that build() made (tuner/replay/setup.py): a Searcher
        searcher = ConcurrencyLimiter(cast("Searcher", searcher), max_concurrent=algorithms.max_concurrent)
        pending = algorithms.max_concurrent
    if isinstance(searcher, FixedOrder):
        pending = max(pending, workers)
    controller = Controller(
        source,
        algorithms.scheduler,
        searcher,
        workers=workers,
        metric=metric,
        mode=mode,
        num_samples=num_samples,
        max_pending=pending,
        max_epochs=max_epochs,
        epoch_budget=epoch_budget,
        seconds_budget=seconds_budget,
        fate_log=algorithms.fate_log,
    )
    chatty = logging.getLogger("ray.tune.schedulers")  # "Bracket too small - Retrying..." at every new band
    level = chatty.level
    chatty.setLevel(logging.WARNING)
    try:
        return controller.run()
    finally:
        chatty.setLevel(level)
