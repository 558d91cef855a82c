"""The median stopping rule on several objectives (and under constraints): the worse half by fronts stops.

From the epoch the grace period ends at on (where Ray's one-value rule and ASHA first compare), a trial's result
is placed among every trial's result at the same epoch (as the one-value rule compares with the other trials at
that epoch): feasible ones first, by non-dominated sorting, ties on a front by crowding distance, then by the
first objective; infeasible ones last. Once enough other trials reported that epoch, a trial in the worse half
stops. Tune's public scheduler interface only (``FIFOScheduler``); like Ray's median rule it keeps its results
in memory, so a resumed sweep compares again from the results that arrive.
"""

from __future__ import annotations

import math
from typing import Any

from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from tuner import pareto
from tuner.folder.fates import STOPPED, DecisionLog
from tuner.objectives import Constraint, Objective, broken, violations
from tuner.values import number

EPOCH = "training_iteration"


class ParetoMedian(FIFOScheduler):
    def __init__(
        self,
        grace_period: int,
        min_samples: int,
        objectives: tuple[Objective, ...],
        constraints: tuple[Constraint, ...] = (),
        fate_log: DecisionLog | None = None,
    ) -> None:
        super().__init__()
        self.grace_period, self.min_samples = grace_period, min_samples
        self.objectives, self.constraints = tuple(objectives), tuple(constraints)
        self.fate_log = fate_log
        self.at_epoch: dict[int, dict[str, tuple[tuple[float, ...], float]]] = {}  # epoch -> trial -> point

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict) -> str:
        epoch = result.get(EPOCH)
        if epoch is None:
            return TrialScheduler.CONTINUE
        values = [number(result.get(o.name)) for o in self.objectives]
        point = tuple(
            math.inf if v is None else o.as_min(v) for o, v in zip(self.objectives, values, strict=True)
        )
        here = self.at_epoch.setdefault(int(epoch), {})
        here[trial.trial_id] = (point, sum(violations(self.constraints, result)))
        if epoch < self.grace_period or len(here) - 1 < self.min_samples:
            return TrialScheduler.CONTINUE
        ids = list(here)
        order = pareto.order([here[i][0] for i in ids], [here[i][1] for i in ids])
        place = order.index(ids.index(trial.trial_id))
        if place < math.ceil(len(ids) / 2):
            return TrialScheduler.CONTINUE
        if self.fate_log:
            self.fate_log.record(trial.trial_id, STOPPED, self._why(trial.trial_id, int(epoch), result, ids))
        return TrialScheduler.STOP

    def _why(self, trial_id: str, epoch: int, result: dict, ids: list[str]) -> str:
        head = f"stopped early by the median rule at epoch {epoch}"
        breaks = broken(self.constraints, result)
        if breaks:
            return f"{head}: infeasible ({'; '.join(breaks)})"
        here = self.at_epoch[epoch]
        feasible = [i for i in ids if here[i][1] <= 0]
        beaten = pareto.dominated_by(feasible.index(trial_id), [here[i][0] for i in feasible])
        where = (
            f"dominated by {beaten} trial{'s' if beaten != 1 else ''}"
            if beaten
            else f"on the front but ranked behind, by crowding distance, then {self.objectives[0].name}"
        )
        return f"{head}: in the worse half of the {len(ids)} trials at that epoch by fronts ({where})"

    def debug_string(self) -> str:
        return f"median rule by fronts: {sum(len(at) for at in self.at_epoch.values())} results compared"
