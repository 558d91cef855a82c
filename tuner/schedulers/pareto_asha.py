"""ASHA on several objectives (MO-ASHA) and under constraints: at each rung, trials are ranked by fronts.

A trial reaching a rung is placed among every result recorded there so far: feasible trials first, by
non-dominated sorting (the trials no other beats on every objective, then those only they beat, ...), ties
within a front broken by crowding distance (a trial alone in its part of the front is worth more than one
among many); infeasible trials last, by how far they break their bounds. It goes on if it is in the best
1/reduction_factor, as ASHA's cutoff keeps the best 1/eta of one value. With one objective and no constraint
this is ASHA itself; tuner then runs Ray's (tuner/schedulers/asha.py).

Built on Tune's public scheduler interface only (``FIFOScheduler``): the rungs are its own, written down in
the fate log as it decides, and given back from there when a sweep is resumed.
"""

from __future__ import annotations

import math
from typing import Any

from ray.tune.schedulers import FIFOScheduler, TrialScheduler

from tuner import pareto
from tuner.folder.fates import RUNG, STOPPED, DecisionLog
from tuner.objectives import Constraint, Objective, broken, violations
from tuner.values import number

EPOCH = "training_iteration"


class ParetoASHA(FIFOScheduler):
    """ASHA by fronts with rungs at ``milestones`` (tuner/schedulers/asha.py ``rungs``), up to ``max_t`` epochs."""

    def __init__(
        self,
        max_t: int,
        milestones: list[int],
        reduction_factor: int,
        objectives: tuple[Objective, ...],
        constraints: tuple[Constraint, ...] = (),
        fate_log: DecisionLog | None = None,
    ) -> None:
        super().__init__()
        self.max_t = max_t
        self.eta = reduction_factor
        self.objectives = tuple(objectives)
        self.constraints = tuple(constraints)
        self.fate_log = fate_log
        # milestone -> trial id -> (point, violation, values as reported), highest milestone first as ASHA looks
        self.rungs: dict[int, dict[str, tuple[tuple[float, ...], float, dict[str, float]]]] = {
            m: {} for m in sorted(milestones, reverse=True)
        }
        self._restored = False

    def on_trial_add(self, tune_controller: Any, trial: Any) -> None:
        super().on_trial_add(tune_controller, trial)
        if not self._restored:
            self._restored = True
            self._restore_rungs()

    def on_trial_result(self, tune_controller: Any, trial: Any, result: dict) -> str:
        epoch = result.get(EPOCH)
        if epoch is None:
            return TrialScheduler.CONTINUE
        if epoch >= self.max_t:
            return TrialScheduler.STOP
        milestone = next((m for m, at in self.rungs.items() if epoch >= m and trial.trial_id not in at), None)
        if milestone is None:
            return TrialScheduler.CONTINUE
        values = {o.name: v for o in self.objectives if (v := number(result.get(o.name))) is not None}
        point = tuple(o.as_min(values[o.name]) if o.name in values else math.inf for o in self.objectives)
        violation = sum(violations(self.constraints, result))
        at = self.rungs[milestone]
        at[trial.trial_id] = (point, violation, values)
        kept, decision = self._decide(trial.trial_id, at)
        if self.fate_log:
            first = self.objectives[0].name
            self.fate_log.record(
                trial.trial_id,
                RUNG,
                "",
                {
                    "rung": milestone,
                    "epoch": epoch,
                    "value": values.get(first),
                    "values": values,
                    "violation": violation if math.isfinite(violation) else None,
                    "arrived": len(at) - 1,
                    "place": decision["place"],
                    "of": len(at),
                    "kept": kept,
                },
            )
            if not kept:
                self.fate_log.record(trial.trial_id, STOPPED, self._why(epoch, milestone, result, decision))
        if not kept:
            self.stopped = self.__dict__.get("stopped", 0) + 1
        return TrialScheduler.CONTINUE if kept else TrialScheduler.STOP

    def _decide(
        self, trial_id: str, at: dict[str, tuple[tuple[float, ...], float, dict[str, float]]]
    ) -> tuple[bool, dict[str, Any]]:
        """Whether ``trial_id`` is in the best 1/eta at its rung, and where it stands there."""
        ids = list(at)
        points = [at[i][0] for i in ids]
        violation = [at[i][1] for i in ids]
        place = pareto.order(points, violation).index(ids.index(trial_id))
        keep = max(1, math.ceil(len(ids) / self.eta))
        mine = ids.index(trial_id)
        feasible = [j for j in range(len(ids)) if violation[j] <= 0]
        beaten = (
            pareto.dominated_by(feasible.index(mine), [points[j] for j in feasible])
            if violation[mine] <= 0
            else 0
        )
        return place < keep, {"place": place + 1, "keep": keep, "dominated_by": beaten, "of": len(ids)}

    def _why(self, epoch: int, milestone: int, result: dict, decision: dict[str, Any]) -> str:
        head = f"stopped early by ASHA at epoch {epoch}"
        broke = broken(self.constraints, result)
        if broke:
            return f"{head}: infeasible ({'; '.join(broke)})"
        if len(self.objectives) == 1:
            keep = decision["keep"]
            return f"{head}: ranked {decision['place']} of {decision['of']} at the rung; only the best {keep} go{'es' if keep == 1 else ''} on"
        if decision["dominated_by"]:
            n = decision["dominated_by"]
            return f"{head}: dominated by {n} trial{'s' if n > 1 else ''} at the epoch-{milestone} rung"
        keep = decision["keep"]
        goes, them = ("go", "them") if keep > 1 else ("goes", "that one")
        return (
            f"{head}: on the front at the epoch-{milestone} rung, but only the best {keep} of "
            f"{decision['of']} {goes} on and it ranked behind {them} there (by crowding distance, then "
            f"{self.objectives[0].name})"
        )

    def _restore_rungs(self) -> None:
        """A resumed sweep's rungs as they were (Tune saves no scheduler state): from the fate log."""
        from tuner.folder.fates import recorded

        folder = getattr(self.fate_log, "folder", None) if self.fate_log else None
        if folder is None:
            return
        for trial_id, decision in recorded(folder).items():
            for seen in decision.get("rungs", []):
                at = self.rungs.get(seen.get("rung"))
                values = seen.get("values")
                if at is None or trial_id in at or not isinstance(values, dict):
                    continue
                point = tuple(
                    o.as_min(float(values[o.name])) if o.name in values else math.inf for o in self.objectives
                )
                violation = seen.get("violation")
                at[trial_id] = (point, math.inf if violation is None else float(violation), values)

    def debug_string(self) -> str:
        """The status line of the live table."""
        shown = ", ".join(f"epoch {m}: {len(at)}" for m, at in sorted(self.rungs.items()))
        return f"ASHA by fronts: {self.__dict__.get('stopped', 0)} trial(s) stopped early so far; results compared at {shown}"
