"""Ray's schedulers, each writing down why it stops or perturbs a trial, the moment it decides.

Each subclass lets Ray's own scheduler decide and then reads the reason from the state that decided it
(the rung's recorded values, the running means, the bracket's halving, PBT's exploit); nothing about the
decision itself changes, but that a resumed ASHA gets back the rungs it had (Tune saves no scheduler state),
and that a HyperBand round on several objectives (or under constraints) keeps its best by fronts, the ranking
tuner/schedulers/pareto_asha.py uses, where Ray's keeps the best by one value. The reads use Ray 2.60's
scheduler internals (part 13 of tuner/ray_compat/__init__.py);
tests/unit/test_ray_compat.py checks each internal is still there, and the replay tests run them on real
schedulers.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import (
    ASHAScheduler,
    HyperBandForBOHB,
    HyperBandScheduler,
    MedianStoppingRule,
    PopulationBasedTraining,
    TrialScheduler,
)
from ray.tune.schedulers.hyperband import _Bracket

from tuner.folder.fates import PERTURBED, RUNG, STOPPED, DecisionLog
from tuner.objectives import Constraint, Objective


def _less_is_better(scheduler: Any) -> bool:
    return getattr(scheduler, "_mode", "min") == "min"


class RecordingASHA(ASHAScheduler):
    """ASHA that writes down every comparison, and that a resumed sweep gives back its rungs.

    Tune saves no scheduler state: a sweep resumed (after a signal, a full disk, or to grow it) starts ASHA
    with empty rungs, so its first trials go on against no cutoff at all. The comparisons written down in the
    fate log are put back in the rungs when the resumed ASHA takes its first trial (one bracket, tuner's)."""

    def __init__(self, *args: Any, fate_log: DecisionLog | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log

    @property
    def _sign(self) -> float:
        """Ray keeps rung values multiplied by this (-1 for a metric to minimise); set with the metric."""
        return float(self._metric_op if self._metric_op is not None else 1.0)

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        super().on_trial_add(tune_controller, trial)
        if not self.__dict__.get("_rungs_restored"):
            self._rungs_restored = True
            self._restore_rungs()

    def _restore_rungs(self) -> None:
        from tuner.folder.fates import recorded

        folder = getattr(self.fate_log, "folder", None) if self.fate_log else None
        if folder is None or len(self._brackets) != 1:
            return
        rungs = dict(self._brackets[0]._rungs)  # milestone -> {trial id: value, as ASHA keeps it}
        for trial_id, decision in recorded(folder).items():
            for seen in decision.get("rungs", []):
                at = rungs.get(seen.get("rung"))
                if at is not None and trial_id not in at and isinstance(seen.get("value"), (int, float)):
                    at[trial_id] = float(seen["value"]) * self._sign

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict) -> str:
        rung = self._rung_for(trial, result)
        action = super().on_trial_result(tune_controller, trial, result)
        epoch = result.get(self._time_attr)
        if rung is not None and self.fate_log:
            milestone, before = rung
            value = float(result[self._metric])
            self.fate_log.record(
                trial.trial_id,
                RUNG,
                "",
                {
                    "rung": milestone,
                    "epoch": epoch,
                    "value": value,
                    "cutoff": before[0],
                    "arrived": before[1],
                    "kept": action != TrialScheduler.STOP,
                },
            )
        if action == TrialScheduler.STOP and self.fate_log and epoch is not None and epoch < self._max_t:
            value = result[self._metric]
            cutoff = self._cutoff(trial, epoch)
            worse = ">" if _less_is_better(self) else "<"
            reason = (
                f"{self._metric} {value:.4g} {worse} rung cutoff {cutoff:.4g}" if cutoff is not None else ""
            )
            self.fate_log.record(trial.trial_id, STOPPED, f"stopped early by ASHA at epoch {epoch}: {reason}")
        return action

    def debug_string(self) -> str:
        """The live table's status line: each rung's cutoff in the metric's own sign (Ray's own line counts
        decisions as stopped trials, shows the cutoffs negated for a metric to minimise, and one at max_t,
        where trials end rather than compare)."""
        if not self._metric or len(self._brackets) != 1:
            return ""
        bracket: Any = self._brackets[0]
        cutoffs = []
        for milestone, recorded in sorted(bracket._rungs):
            if milestone >= self._max_t:
                continue
            cutoff = bracket.cutoff(recorded)
            shown = "-" if cutoff is None else f"{float(cutoff) * self._sign:.4g}"
            cutoffs.append(f"epoch {int(milestone)}: {shown}")
        relation = "at most" if _less_is_better(self) else "at least"
        return f"rung cutoffs ({self._metric} {relation} this to go on): {', '.join(cutoffs)}"

    def _rung_for(self, trial: Any, result: dict) -> tuple[int, tuple[float | None, int]] | None:
        """The rung this result will be compared at (Ray's own search: the highest milestone reached that the
        trial has no value at yet), with that rung's cutoff before it and how many values arrived before."""
        epoch = result.get(self._time_attr)
        bracket = self._trial_info.get(trial.trial_id)
        if bracket is None or epoch is None or self._metric not in result or epoch >= self._max_t:
            return None
        for milestone, recorded in bracket._rungs:
            if epoch < milestone or trial.trial_id in recorded:
                continue
            cutoff = bracket.cutoff(recorded)
            return milestone, (None if cutoff is None else float(cutoff) * self._sign, len(recorded))
        return None

    def _cutoff(self, trial: Any, epoch: int) -> float | None:
        """The cutoff of the rung this result was compared at, in the metric's own sign."""
        bracket = self._trial_info.get(trial.trial_id)
        if bracket is None:
            return None
        for milestone, recorded in bracket._rungs:
            if milestone <= epoch and trial.trial_id in recorded:
                others = {k: v for k, v in recorded.items() if k != trial.trial_id}
                cutoff = bracket.cutoff(others)
                return None if cutoff is None else float(cutoff) * self._sign
        return None


class RecordingMedian(MedianStoppingRule):
    def __init__(self, *args: Any, fate_log: DecisionLog | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log

    def debug_string(self) -> str:
        """Nothing beyond the live table's count of the trials it stopped (Ray's line counts them too)."""
        return ""

    def _on_insufficient_samples(self, tune_controller: Any, trial: Any, time: float) -> str:
        """Never pause a trial while too few others have reported at its epoch: Ray's rule "yields time" to
        waiting trials then, and a trainable without checkpoints starts over, reporting its epochs again from
        the first. (Its ``min_time_slice`` cannot say never: a trial's last pause starts at minus infinity.)"""
        return TrialScheduler.CONTINUE

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict) -> str:
        action = super().on_trial_result(tune_controller, trial, result)
        if action == TrialScheduler.STOP and self.fate_log and self._time_attr in result:
            epoch = result[self._time_attr]
            others = [t for t in self._trials_beyond_time(epoch) if t is not trial]
            means = [m for m in (self._running_mean(t, epoch) for t in others) if np.isfinite(m)]
            median = float(np.median(means)) if means else float("nan")
            best = self._best_result(trial)
            self.fate_log.record(
                trial.trial_id,
                STOPPED,
                f"stopped early by the median rule at epoch {epoch}: best {self._metric} {best:.4g} "
                f"worse than the median {median:.4g} of the other trials",
            )
        return action


class _RecordingBracket(_Bracket):
    """A HyperBand bracket that writes down the trials it drops at each halving, and whose rounds end at
    max epochs (tuner/schedulers/hyperband.py, ``rounds``)."""

    fate_log: DecisionLog | None = None
    label = "HyperBand"
    metric = "loss"
    planned: list[int] = []  # the epochs of each round, the first one this bracket's start
    number = 0  # brackets in the order the scheduler made them, from 1
    objectives: tuple[
        Objective, ...
    ] = ()  # several: the round keeps the best by fronts (pareto_asha's ranking)
    constraints: tuple[Constraint, ...] = ()

    def successive_halving(self, metric: str, metric_op: float) -> tuple[list, list]:
        compared_at = self._cumul_r
        good, bad = super().successive_halving(metric, metric_op)
        if len(self.objectives) > 1 or self.constraints:
            good, bad = self._by_fronts([*good, *bad], len(good))
        if self.planned:  # Ray multiplied by eta; the next round is the planned one
            self._r = self._cumul_r = self.planned[len(self.planned) - 1 - self._halves]
        if self.fate_log:
            for trial in [*good, *bad]:
                result = self._live_trials.get(trial) or {}
                value = result.get(metric)
                data = {
                    "rung": compared_at,
                    "epoch": result.get(self._time_attr),
                    "bracket": self.number,
                    "value": float(value) if isinstance(value, (int, float)) else None,
                    "kept": trial in good,
                    "keep": len(good),
                    "of": len(good) + len(bad),
                }
                if len(self.objectives) > 1:
                    data["values"] = {o.name: result.get(o.name) for o in self.objectives}
                self.fate_log.record(trial.trial_id, RUNG, "", data)
            for trial in bad:
                result = self._live_trials.get(trial) or {}
                epoch, value = result.get(self._time_attr), result.get(metric)
                shown = f"{metric} {value:.4g}" if isinstance(value, (int, float)) else metric
                if len(self.objectives) > 1 or self.constraints:
                    shown = self._why_not(trial, [*good, *bad])
                self.fate_log.record(
                    trial.trial_id,
                    STOPPED,
                    f"stopped early by {self.label} at epoch {epoch}: {shown} not among the best "
                    f"{len(good)} of {len(good) + len(bad)} in its bracket",
                )
        return good, bad

    def _points(self, trials: list) -> tuple[list[tuple[float, ...]], list[float]]:
        """Each trial's result as a point (less is better) and how far it breaks the constraints."""
        from tuner.objectives import violations
        from tuner.values import number

        # with constraints on one metric: that one (tuner/schedulers/hyperband.py)
        objectives = self.objectives
        points, broken = [], []
        for trial in trials:
            result = self._live_trials.get(trial) or {}
            values = [number(result.get(o.name)) for o in objectives]
            points.append(
                tuple(math.inf if v is None else o.as_min(v) for o, v in zip(objectives, values, strict=True))
            )
            broken.append(sum(violations(self.constraints, result)))
        return points, broken

    def _by_fronts(self, trials: list, keep: int) -> tuple[list, list]:
        """The round's ``keep`` best by fronts (then crowding distance), feasible ones first."""
        from tuner import pareto

        points, broken = self._points(trials)
        order = pareto.order(points, broken)
        return [trials[i] for i in order[:keep]], [trials[i] for i in order[keep:]]

    def _why_not(self, trial: Any, trials: list) -> str:
        from tuner import pareto
        from tuner.objectives import broken

        result = self._live_trials.get(trial) or {}
        breaks = broken(self.constraints, result)
        if breaks:
            return f"infeasible ({'; '.join(breaks)}),"
        points, violation = self._points(trials)
        feasible = [i for i, v in enumerate(violation) if v <= 0]
        beaten = pareto.dominated_by(feasible.index(trials.index(trial)), [points[i] for i in feasible])
        if beaten:
            return f"dominated by {beaten} trial{'s' if beaten != 1 else ''},"
        return f"on the front but ranked behind (by crowding distance, then {self.objectives[0].name}),"


class _RecordingBrackets:
    """HyperBand's and BOHB's brackets, recording each round, and leaving out the trials a resumed sweep had
    already finished: Tune adds every restored trial to the scheduler, finished ones too, and a bracket then waits
    for ever on trials that will never report (a grown sweep's new trial stayed PAUSED until the stall guard
    ended the sweep)."""

    label = "HyperBand"
    made = 0

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        if trial.status in (Trial.TERMINATED, Trial.ERROR):
            return  # finished before this run: no bracket has a place for it
        super().on_trial_add(tune_controller, trial)  # type: ignore[misc]

    def on_trial_remove(self, tune_controller: Any, trial: Any) -> None:
        """Ray processes a bracket when a trial leaves it only while the bracket is not finished; when the last
        other trial ends by itself (its function returned at max epochs) after one was paused there, the bracket
        is finished and nobody stops the paused one, which then waits for ever. Stop it, as Ray does when the
        bracket finishes on a result."""
        info = self._trial_info.get(trial)  # type: ignore[attr-defined]
        if info is None:
            return  # a trial finished before this run (left out of the brackets)
        super().on_trial_remove(tune_controller, trial)  # type: ignore[misc]
        bracket = info[0]
        if bracket.finished():
            bracket.cleanup_full(tune_controller)

    def debug_string(self) -> str:
        """The live table's status lines: each bracket's trials by status and the epoch of its next halving
        (Ray's first line counts decisions as stopped trials)."""
        lines: list[str] = []
        for band in self._hyperbands:  # type: ignore[attr-defined]
            for bracket in band:
                if not bracket:
                    continue
                statuses: dict[str, int] = {}
                for trial in bracket._all_trials:
                    statuses[trial.status] = statuses.get(trial.status, 0) + 1
                at = bracket._cumul_r
                waits = f" until the others reach epoch {at}" if statuses.get("PAUSED") else ""
                counts = ", ".join(
                    f"{n} {status}{waits if status == 'PAUSED' else ''}"
                    for status, n in sorted(statuses.items())
                )
                number = getattr(bracket, "number", 0) or len(lines) + 1
                done = bracket.completion_percentage()
                if done >= 1:
                    state = "finished"
                elif at >= self._max_t_attr:  # type: ignore[attr-defined]
                    state = f"its trials run to epoch {at}, {done:.0%} done"
                else:
                    state = f"compared next at epoch {at}, {done:.0%} done"
                lines.append(
                    f"bracket {number}: {len(bracket._all_trials)} trial(s) ({counts or 'none yet'}); {state}"
                )
        return "\n".join(lines)

    def _create_bracket(self, s: int) -> _Bracket:
        from tuner.schedulers.brackets import rounds

        bracket = super()._create_bracket(s)  # type: ignore[misc]
        bracket.__class__ = _RecordingBracket
        bracket.fate_log = self.fate_log  # type: ignore[attr-defined]
        bracket.objectives = self.__dict__.get("objectives", ())
        bracket.constraints = self.__dict__.get("constraints", ())
        bracket.label = self.label
        bracket.planned = rounds(self._max_t_attr, self._eta, s)  # type: ignore[attr-defined]
        self.made += 1
        bracket.number = self.made
        bracket._r = bracket._r0 = bracket._cumul_r = bracket.planned[0]
        return bracket


class RecordingHyperBand(_RecordingBrackets, HyperBandScheduler):
    def __init__(
        self,
        *args: Any,
        fate_log: DecisionLog | None = None,
        objectives: tuple[Objective, ...] = (),
        constraints: tuple[Constraint, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log
        self.objectives, self.constraints = tuple(objectives), tuple(constraints)


class RecordingBOHB(_RecordingBrackets, HyperBandForBOHB):
    label = "BOHB"

    def __init__(self, *args: Any, fate_log: DecisionLog | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log


class RecordingPBT(PopulationBasedTraining):
    def __init__(self, *args: Any, fate_log: DecisionLog | None = None, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fate_log = fate_log

    def _exploit(self, tune_controller: Any, trial: Any, trial_to_clone: Any) -> None:
        before = dict(trial_to_clone.config)
        epoch = self._trial_state[trial].last_train_time
        donor_epoch = self._trial_state[trial_to_clone].last_train_time
        super()._exploit(tune_controller, trial, trial_to_clone)
        if self.fate_log:
            changes = ", ".join(
                f"{k} {_short(before.get(k))} -> {_short(v)}"
                for k, v in trial.config.items()
                if k in self._hyperparam_mutations and v != before.get(k)
            )
            self.fate_log.record(
                trial.trial_id,
                PERTURBED,
                f"perturbed by PBT at epoch {epoch}: continued from trial {trial_to_clone.trial_id}'s "
                f"epoch-{donor_epoch} checkpoint with {changes or 'its settings'}",
            )


def _short(value: Any) -> str:
    return f"{value:.4g}" if isinstance(value, float) else str(value)
