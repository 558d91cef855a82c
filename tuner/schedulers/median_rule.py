"""The median stopping rule, one implementation for one objective or several.

From the epoch the grace period ends at on, once enough other trials have reported that far, a trial is compared
with them (tuner/schedulers/comparing.py). With one objective it stops when its best value so far is worse than
the median of the others' running means up to that epoch, as Ray's ``MedianStoppingRule`` decides (with a hard
stop; tuner never pauses a trial for want of others: a trainable without checkpoints would start over). With
several objectives or constraints, a trial whose result is in the worse half by fronts among the results at the
same epoch stops. Like Ray's rule it keeps its results in memory, so a resumed sweep compares again from the
results that arrive. Built on Tune's public scheduler interface (``FIFOScheduler``). It decides as Ray 2.60's rule
on every tested Ray: before 2.60, a trial whose running mean is nan counted among the others and made the median
nan, which stopped every trial compared after it.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from ray.tune.experiment import Trial
from ray.tune.schedulers import TrialScheduler

from tuner.folder.fates import DecisionLog
from tuner.folder.pickled import none
from tuner.schedulers.comparing import ByFronts, Comparison, Standing
from tuner.schedulers.result_epoch import epoch_of
from tuner.schedulers.rule_base import Rule
from tuner.schedulers.stopping import stopped

if TYPE_CHECKING:
    from ray.tune.execution.tune_controller import TuneController

    from tuner.value_types import Result


class MedianRule(Rule):
    # A stop at the last epoch cuts nothing: it is decided as Ray decides it, but neither told as an early stop
    # nor counted as one. None: the last epoch is not known.
    max_t: int | None
    SINCE = {"max_t": none}

    def __init__(
        self,
        grace_period: int,
        min_samples: int,
        comparison: Comparison,
        fate_log: DecisionLog | None = None,
        max_t: int | None = None,
    ) -> None:
        super().__init__()
        self.grace_period, self.min_samples, self.max_t = grace_period, min_samples, max_t
        self.comparison = comparison
        self.fate_log = fate_log
        self.history: dict[str, list[tuple[float, Standing]]] = {}  # by one value: trial id -> its results
        self.at_epoch: dict[int, dict[str, Standing]] = {}  # by fronts: epoch -> trial id -> standing
        self.stopped = 0

    def on_trial_result(self, tune_controller: TuneController, trial: Trial, result: Result) -> str:
        epoch = epoch_of(result)
        if epoch is None or not self.comparison.reported(result):
            return TrialScheduler.CONTINUE
        why = self._judge.result(self, trial.trial_id, epoch, self.comparison.standing(result))
        if self.max_t is not None and epoch >= self.max_t:
            return (
                TrialScheduler.STOP
            )  # --max-epochs reached, whatever the rule says: a loop of its own would go on
        if why is None:
            return TrialScheduler.CONTINUE
        self.stopped += 1
        return stopped(self.fate_log, trial.trial_id, "the median rule", epoch, why)

    def on_trial_complete(self, tune_controller: TuneController, trial: Trial, result: Result) -> None:
        """A trial's last result counts once more in its running mean, as in Ray's rule."""
        if (epoch := epoch_of(result)) is not None and self.comparison.reported(result):
            self._judge.complete(self, trial.trial_id, epoch, self.comparison.standing(result))

    @property
    def _judge(self) -> type[RunningMedian] | type[WorseHalf]:
        """How this sweep's results are judged: the one place the rule asks how its comparison ranks."""
        return WorseHalf if self.comparison.by_fronts else RunningMedian

    def debug_string(self) -> str:
        """The live table's status line."""
        return self._judge.status(self)


class RunningMedian:
    """One objective, as Ray's rule: a trial's best value so far against the median of the others' running
    means up to its epoch."""

    @staticmethod
    def result(rule: MedianRule, trial_id: str, epoch: int, standing: Standing) -> str | None:
        rule.history.setdefault(trial_id, []).append((epoch, standing))
        if epoch < rule.grace_period:
            return None
        signed = rule.comparison.signed
        means = []
        for other, seen in rule.history.items():
            if other == trial_id or seen[-1][0] < epoch:
                continue
            scoped = [signed(s) for at, s in seen if rule.grace_period <= at <= epoch]
            mean = float(np.mean(scoped)) if scoped else math.nan
            if np.isfinite(mean):
                means.append(mean)
        if len(means) < rule.min_samples:
            return None
        median = float(np.median(means))
        best = max(signed(s) for _, s in rule.history[trial_id])
        if max(median, best) == best:  # Ray's test: not strictly worse than the median (a nan best is)
            return None
        first = rule.comparison.first
        shown = (lambda v: v) if first.mode == "max" else (lambda v: -v)
        return f"best {first.name} {shown(best):.4g} worse than the median {shown(median):.4g} of the other trials"

    @staticmethod
    def complete(rule: MedianRule, trial_id: str, epoch: int, standing: Standing) -> None:
        rule.history.setdefault(trial_id, []).append((epoch, standing))

    @staticmethod
    def status(rule: MedianRule) -> str:
        """None: the live table's count of stopped trials says it all."""
        return ""


class WorseHalf:
    """Several objectives or constraints: a result in the worse half by fronts among those at its epoch."""

    @staticmethod
    def result(rule: MedianRule, trial_id: str, epoch: int, standing: Standing) -> str | None:
        here = rule.at_epoch.setdefault(epoch, {})
        here[trial_id] = standing
        if epoch < rule.grace_period or len(here) - 1 < rule.min_samples:
            return None
        fronts = rule.comparison
        assert isinstance(fronts, ByFronts)  # the judge of a comparison by fronts
        return fronts.worse_half_why(trial_id, here) if fronts.in_worse_half(trial_id, here) else None

    @staticmethod
    def complete(rule: MedianRule, trial_id: str, epoch: int, standing: Standing) -> None:
        """A last result was judged as it came."""

    @staticmethod
    def status(rule: MedianRule) -> str:
        return f"median rule by fronts: {sum(len(at) for at in rule.at_epoch.values())} results compared"
