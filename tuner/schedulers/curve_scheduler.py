"""Freeze-thaw scheduling: trials paused and continued by a model of their whole learning curves.

ASHA compares trials at fixed rungs by the value they have there; on curves that start slowly or cross, a
trial stopped at an early rung is gone, whatever it would have become. Here every trial's curve so far,
finished or not, trains one model (tuner/schedulers/curve_model.py) that predicts where any config's curve
ends; at each decision a trial goes on only while what it is predicted to add (its expected improvement over
the best value seen, at the last epoch) is at least what the best waiting alternative promises: a paused trial
continued, or a new config. Otherwise it is paused (frozen, its checkpoint kept) and may be continued (thawed)
later when the model thinks better of it; a trial that the model gives almost no chance to beat the best is
stopped. A trainable that keeps no checkpoints cannot be continued, so its trials are stopped, never paused,
and a stop cannot be undone: there a trial whose best value so far is among the better share of every trial's
at that epoch (a half when each check doubles the epochs: a halving rule like ASHA's, on best values so far)
always goes on unless it is hopeless; before the first model that rule alone decides.

The model is fitted off Tune's loop, on a thread of its own, from every result so far; a fit started after
one result is taken up at the next one (waiting at most ``FIT_WAIT_S`` for it), so a sweep and its replay,
given the results in the same order, decide alike. New configs come from the same model (the gate in
tuner/schedulers/curve_gate.py asks it which of many drawn configs promises most) or from another searcher.

Built on Tune's public scheduler interface (``FIFOScheduler``: results, pause, stop, which trial runs next).
A resumed sweep gets its curves back from the experiment's own results.
"""

from __future__ import annotations

import math
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from tuner.folder.fates import THAWED, DecisionLog
from tuner.folder.horizon import LoopEnds
from tuner.folder.pickled import Restored, loop_ends
from tuner.schedulers.better_half import BetterShare, among_better
from tuner.schedulers.config_features import ConfigFeatures
from tuner.schedulers.curve_fitting import (
    MIN_TRIALS,
    Fit,
    PredictionTable,
)
from tuner.schedulers.curve_model import PowerLawEnsemble
from tuner.schedulers.curve_resume import restore_curves
from tuner.schedulers.curve_verdicts import CurveVerdicts
from tuner.schedulers.pausing import pause_keeps
from tuner.schedulers.result_epoch import epoch_of
from tuner.values import number

if TYPE_CHECKING:
    from numpy.typing import NDArray
    from ray.tune.execution.tune_controller import TuneController

    from tuner.value_types import Config, ConfigDraft, Result

EPOCH = "training_iteration"


class FreezeThawScheduler(Restored, CurveVerdicts, FIFOScheduler):
    """Freeze-thaw by a learning-curve model; decisions at epochs ``grace``, then each ``growth`` times on."""

    SINCE = {"loop": loop_ends, "own_loop": lambda state: True}

    def __init__(
        self,
        max_t: int,
        features: ConfigFeatures,
        *,
        can_pause: bool = True,
        own_loop: bool = True,
        seed: int = 0,
        grace: int = 1,
        growth: float = 2.0,
        trials_cap: int | None = None,
        fate_log: DecisionLog | None = None,
        metric: str | None = None,
        mode: str | None = None,
    ) -> None:
        super().__init__()
        self.max_t, self.features, self.can_pause, self.seed = max_t, features, can_pause, seed
        self.own_loop = (
            own_loop  # False: a trial that ends before max_t teaches no loop length (SchedulerContext)
        )
        self.grace, self.growth, self.trials_cap, self.fate_log = grace, growth, trials_cap, fate_log
        self._metric, self._mode = metric, mode
        self.curves: dict[str, list[float]] = {}  # trial id -> its best value so far per epoch, higher better
        self.rows: dict[str, NDArray[np.float64]] = {}  # trial id -> its config's features
        self.configs: dict[str, Config] = {}
        self.next_check: dict[str, int] = {}
        self.loop = LoopEnds(max_t)  # where the trainable's own loop ends trials, when before max_t
        self.ended: set[str] = set()
        self.frozen: set[str] = set()  # trials it paused that have not run since
        self._last: dict[str, float] = {}  # each trial's last reported value, as reported
        self.searching = True  # new trials may still come
        self.results = 0
        self.stopped = self.paused = 0
        self.model: PowerLawEnsemble | None = None
        # (low, high) of the values the model was fitted on, in "higher is better" sign
        self.scale = (0.0, 1.0)
        self.fitted_points = 0
        # trial id -> members x epochs, for the adopted model
        self._predicted: dict[str, NDArray[np.float64]] = {}
        self._pool: list[ConfigDraft] = []  # configs drawn for proposals under the adopted model
        self._pool_rows: NDArray[np.float64] = np.zeros((0, 0))
        self._pool_means: NDArray[np.float64] = np.zeros((0, 0))
        self._proposed: list[NDArray[np.float64]] = []  # features proposed since the model was adopted
        self._restored = False
        self._version = 0  # counts changes of what predictions rest on (results, trials, the model)
        self._best = -math.inf  # the best value seen, on the model's axis (higher is better)
        # whether the model reads the metric on a log scale (a loss that was always positive)
        self._log = False
        self._cache: tuple[int, PredictionTable] | None = None
        self._pool_cache: tuple[tuple[int, int], NDArray[np.float64]] | None = None
        self._fitting: Future[Fit] | None = None
        self._executor: ThreadPoolExecutor | None = None

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state["_fitting"], state["_executor"] = (
            None,
            None,
        )  # a thread does not travel; a pending fit is redone
        return state

    # --- Tune's hooks ---------------------------------------------------------------------------------
    def _restore(self) -> None:
        """A resumed sweep's curves and trials as they were (tuner/schedulers/curve_resume.py)."""
        saved = restore_curves(self, getattr(self.fate_log, "folder", None) if self.fate_log else None)
        if saved is not None:
            self.trials_cap = saved.trials_cap
            self.ended |= saved.ended
            self.frozen |= saved.frozen
            self.paused, self.stopped = self.paused + saved.paused, self.stopped + saved.stopped
            # the model of the curves so far, before the first choice: a resumed sweep does not start over
            # from a random start, whose trials would run as if nothing were known
            self._maybe_fit()
            if self._fitting is not None:
                self._fitting.result()
                self._adopt()

    def set_search_properties(self, metric: str | None, mode: str | None, **spec: object) -> bool:
        if self._metric and metric and metric != self._metric:
            return False
        self._metric = self._metric or metric
        self._mode = self._mode or mode
        return True

    def on_trial_add(self, tune_controller: TuneController, trial: Trial) -> None:
        if not self._restored:
            self._restored = True
            self._restore()
        self.configs.setdefault(trial.trial_id, dict(trial.config))
        if trial.trial_id not in self.rows:
            self.rows[trial.trial_id] = self.features.encode(trial.config)
            self._version += 1
        self.curves.setdefault(trial.trial_id, [])
        if self.trials_cap is not None and len(self.rows) >= self.trials_cap:
            self.searching = False

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: Result) -> str:
        epoch = epoch_of(result)
        value = number(result.get(self._metric)) if self._metric else None
        if epoch is None:
            return TrialScheduler.CONTINUE
        self._take(trial.trial_id, int(epoch), value)
        self.results += 1
        self._adopt()

        if value is not None:
            self._last[trial.trial_id] = value
        # hopeless paused trials first: a trial is never weighed against one stopped at the same check
        self._stop_hopeless(tune_controller, trial)
        action = self._decide(
            tune_controller, trial, int(epoch), value, pause_keeps=pause_keeps(trial, result)
        )
        self._maybe_fit()
        return action

    def on_trial_complete(self, tune_controller: TuneController, trial: Trial, result: Result) -> None:
        # a result marked done (a class's step returning done) reaches Tune's scheduler here only: its epoch
        # joins the trial's curve as any other (a function's last result, seen already, changes nothing)
        if (epoch := epoch_of(result)) is not None:
            self._take(trial.trial_id, int(epoch), number(result.get(self._metric)) if self._metric else None)
        if self.own_loop and trial.trial_id not in self.ended:  # not stopped here: its own loop ended it
            epochs = len(self.curves.get(trial.trial_id) or [])
            if 0 < epochs and self.loop_ends.ended(epochs):
                self._horizon_moved()
        self._end(trial.trial_id)

    def follow_loop(self, epochs: int) -> str | None:
        """The sweep learnt that the trainable's own loop ends trials at ``epochs``, before ``max_t``, with no
        trial past it (tuner/launch/guards/loop_end.py): the model predicts each trial's value there. A trial
        that reports past it raises the horizon again (``_take``) and is weighed as any other. What it
        predicts, in words, when the horizon is ``epochs``; else None."""
        if 0 < epochs < self.max_t and self.loop_ends.ended(epochs):
            self._horizon_moved()
        if self.horizon != epochs or epochs >= self.max_t:
            return None
        return f"freeze-thaw predicts each trial's {self._metric or 'metric'} at epoch {epochs}"

    def on_trial_remove(self, tune_controller: TuneController, trial: Trial) -> None:
        self._end(trial.trial_id)

    def on_trial_error(self, tune_controller: TuneController, trial: Trial) -> None:
        self._end(trial.trial_id)

    def _end(self, trial_id: str) -> None:
        self.ended.add(trial_id)
        self.frozen.discard(trial_id)

    def choose_trial_to_run(self, tune_controller: TuneController) -> Trial | None:
        waiting = [
            t
            for t in tune_controller.get_trials()
            if t.status in (Trial.PENDING, Trial.PAUSED) and not getattr(t, "is_saving", False)
        ]
        if not waiting:
            return None
        if self.model is None:  # a new trial first, in Tune's order
            best = next((t for t in waiting if t.status == Trial.PENDING), waiting[0])
        else:
            best = max(waiting, key=lambda t: self.predict(t.trial_id).gain)
        if best.trial_id in self.frozen:  # continued: its pause no longer stands (a resumed sweep's too)
            self.frozen.discard(best.trial_id)
            if self.fate_log:
                self.fate_log.record(best.trial_id, THAWED, "")
        return best

    def debug_string(self) -> str:
        fitted = f"model fitted on {self.fitted_points} epochs" if self.model is not None else "random start"
        if self.horizon < self.max_t:
            fitted += f", predicting epoch {self.horizon} (the trainable's own loop ends there)"
        return (
            f"freeze-thaw: {f'{self.paused} pause(s), ' if self.can_pause else ''}{self.stopped} trial(s) stopped "
            f"early so far; {fitted}; "
            f"best {self._metric} so far {f'{self._shown(self._best_scaled()):.4g}' if self._any() else '-'}"
        )

    # --- what the gate asks (tuner/schedulers/curve_gate.py) -------------------------------------------
    def wants_new_trial(self) -> bool:
        """The gate's question: always before a model or with no trial paused; else only when a new config
        promises at least what every paused trial does."""
        if self.model is None or not self.frozen:
            return True
        return self._new_gain() >= max(self.predict(tid).gain for tid in self.frozen)

    def propose(self) -> ConfigDraft | None:
        """The drawn config that promises most under the model, kept away from those proposed since it was
        fitted (each one weighed down near them, as if its trial had already shown the model's mean there);
        None before a model: the caller draws at random."""
        if self.model is None or not self._pool:
            return None
        gains = self._pool_gains()
        pick = int(np.argmax(gains))
        if gains[pick] <= 0 and self._pool_rows[pick].tobytes() in {r.tobytes() for r in self.rows.values()}:
            return None  # every config drawn was tried already: the caller draws at random
        self._proposed.append(self._pool_rows[pick])
        return dict(self._pool[pick])

    # --- decisions ------------------------------------------------------------------------------------
    def _decide(
        self,
        tune_controller: TuneController,
        trial: Trial,
        epoch: int,
        value: float | None,
        pause_keeps: bool = True,
    ) -> str:
        """``pause_keeps``: a pause now would keep every epoch (see ``pause_keeps``); when it would not, a
        decision to pause waits for the trial's next result."""
        trial_id = trial.trial_id
        if epoch >= self.max_t:
            self.ended.add(trial_id)
            return TrialScheduler.STOP  # its last epoch (a trainable with a loop of its own would go on)
        if epoch == self.horizon:  # its loop's last epoch: a pause or a stop would cut nothing (a trial
            return TrialScheduler.CONTINUE  # that reported past it raised the horizon in ``_take``)
        if epoch < self.next_check.get(trial_id, self.grace):
            return TrialScheduler.CONTINUE
        self.next_check[trial_id] = max(epoch + 1, math.ceil(epoch * self.growth))
        ahead = None if self.can_pause else self._among_better(trial_id, epoch)
        if self.model is None:
            # the random start: each of its trials waits here for the first model, if there is room for more
            if self.can_pause and self.searching and not pause_keeps:
                return self._pause_later(trial_id, epoch)
            if self.can_pause and self.searching:
                seen = sum(1 for c in self.curves.values() if any(math.isfinite(v) for v in c))
                why = (
                    f"waits until all {self.trials_cap} trials have started (too few for a model of the curves, "
                    f"which needs {MIN_TRIALS} with results)"
                    if self.trials_cap is not None and self.trials_cap < MIN_TRIALS
                    else f"waits for the first model of the curves (fitted once {MIN_TRIALS} trials have results; "
                    f"{seen} {'has' if seen == 1 else 'have'})"
                )
                return self._pause(trial_id, epoch, value, None, why)
            if ahead is None or ahead.kept:  # it cannot wait paused: the halving rule judges it meanwhile
                return TrialScheduler.CONTINUE
            why = f"{ahead}, and the first model of the curves is not fitted yet"
            return self._stop(trial_id, epoch, value, None, why)
        mine = self.predict(trial_id)
        if self._hopeless(mine, epoch):
            return self._stop(trial_id, epoch, value, mine)
        if ahead is not None and ahead.kept:
            why = f"{ahead}, and a trial without checkpoints cannot be continued once stopped"
            self._record(trial_id, epoch, value, mine, "goes on", why)
            return TrialScheduler.CONTINUE
        rival_gain, rival = 0.0, ""
        waiting = [  # trials that would take its place: paused ones, and those waiting to start
            t.trial_id
            for t in tune_controller.get_trials()
            if t.trial_id != trial_id
            and t.status in (Trial.PENDING, Trial.PAUSED)
            and t.trial_id not in self.ended
        ]
        if waiting:
            best_waiting = max(waiting, key=lambda tid: self.predict(tid).gain)
            rival_gain, rival = self.predict(best_waiting).gain, f"trial {best_waiting}"
        new_waiting = any(not self.curves.get(tid) for tid in waiting)  # the searcher makes one at a time
        if self.searching and not new_waiting and self._new_gain() > rival_gain:
            rival_gain, rival = self._new_gain(), "a new config"
        own, theirs = self._gains_said(mine.gain, rival_gain)
        neither = f"neither it nor {rival} is expected to beat the best so far"  # both gains about 0
        if mine.gain >= rival_gain:
            kept = (
                neither
                if own == theirs == "about 0"
                else f"its expected gain {own} against {rival}'s {theirs}"
            )
            self._record(trial_id, epoch, value, mine, "goes on", kept if rival else "")
            return TrialScheduler.CONTINUE
        lost = f"{rival} promises more: an expected gain of {theirs} against this trial's {own}"
        if own == theirs == "about 0":
            lost = f"{neither} (each is expected to gain about 0, {rival} a hair more)"
        elif own == theirs:  # apart only below the digits shown
            lost = (
                f"{rival} promises a little more: both are expected to gain about {own} over the best so far"
            )
        if not self.can_pause:
            return self._stop(trial_id, epoch, value, mine, f"{lost}, and a trial without checkpoints cannot "
                              "be continued later")  # fmt: skip
        if not pause_keeps:
            return self._pause_later(trial_id, epoch)
        return self._pause(trial_id, epoch, value, mine, lost)

    def _among_better(self, trial_id: str, epoch: int) -> BetterShare:
        """Where the trial stands by its best value so far at ``epoch`` (tuner/schedulers/better_half.py)."""
        sign = -1.0 if self._mode == "min" else 1.0  # curves hold values with higher better
        return among_better(self.curves, trial_id, epoch, self.growth, self._metric or "metric", sign)

    def _pause_later(self, trial_id: str, epoch: int) -> str:
        """A trial that has not saved this epoch would be continued from its last checkpoint, running again
        what came after it (from its first epoch, without one): it goes on, and is weighed at its next result."""
        self.next_check[trial_id] = epoch + 1
        return TrialScheduler.CONTINUE

    def _stop_hopeless(self, tune_controller: TuneController, current: Trial) -> None:
        """Paused trials the model now gives almost no chance are stopped, so a sweep's waiting list holds only
        trials worth continuing, and a sweep with all its trials made ends."""
        if self.model is None:
            return
        for trial in tune_controller.get_trials():
            if trial is current or trial.status != Trial.PAUSED or getattr(trial, "is_saving", False):
                continue
            mine, epochs = self.predict(trial.trial_id), len(self.curves.get(trial.trial_id) or [])
            if epochs < self.horizon and self._hopeless(mine, epochs):  # at its loop's end it cuts nothing
                self._stop(trial.trial_id, epochs, self._last.get(trial.trial_id), mine)
                tune_controller.stop_trial(trial)
