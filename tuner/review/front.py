"""The Pareto front of a sweep on several objectives: which trials no other beats on every objective.

Each trial is one point: its values at its last epoch (a point one checkpoint holds; a best value per objective
would mix epochs), none where one of them is not a finite number there. Trials that break a ``--constraint`` there are never
on the front. Read from the experiment's files like every review (no Ray), written to ``pareto.json`` at the
end of a sweep, drawn by the report, and returned by ``exp.pareto`` in Python.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner import pareto
from tuner.folder.names import PARETO_FILE
from tuner.folder.summary import ParetoRecord
from tuner.nesting import flatten, unflatten
from tuner.objectives import Constraint, Objectives, as_point, broken, judged, reported, violations
from tuner.value_types import Value
from tuner.values import jsonable, number, plain

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord, TrialRecord

SHOWN = 8  # front rows printed at the end of a sweep


@dataclass(frozen=True)
class Point:
    trial: TrialRecord
    values: dict[str, float]  # objective -> value, in its own sign
    epoch: int
    broken: tuple[str, ...]  # the constraints it breaks, in words

    @property
    def feasible(self) -> bool:
        return not self.broken

    @property
    def on_a_front(self) -> bool:
        """Whether it may be on the front: feasible, and of a trial that did not fail."""
        return self.feasible and self.trial.status != "ERROR"


def point(trial: TrialRecord, objectives: Objectives, constraints: Sequence[Constraint]) -> Point | None:
    """A trial's point: its last row's objectives, as the live table places it; none where one of them is not a
    finite number there (a trial whose loss went nan at the end is not on the front by an earlier epoch)."""
    if not trial.rows:
        return None
    row = trial.rows[-1]
    values = reported(objectives, row)
    if values is None:
        return None
    epoch = int(float(row.get("training_iteration") or 0))
    return Point(trial, values, epoch, tuple(broken(constraints, judged(constraints, trial.rows))))


def points(experiment: ExperimentRecord) -> list[Point]:
    objectives, constraints = experiment.config.objectives, experiment.config.constraint_list
    return [p for p in (point(t, objectives, constraints) for t in experiment.trials) if p is not None]


def _as_min(found: list[Point], objectives: Objectives) -> list[tuple[float, ...]]:
    return [tuple(o.as_min(p.values[o.name]) for o in objectives) for p in found]


def front(experiment: ExperimentRecord) -> list[Point]:
    """The feasible non-dominated points of the trials that did not fail, by the first objective (best first): a
    config that crashed is never recommended, as it is never the best while one that ran is there."""
    objectives = experiment.config.objectives
    found = points(experiment)
    keep = pareto.front(_as_min(found, objectives), [0.0 if p.on_a_front else 1.0 for p in found])
    first = objectives[0]
    return sorted((found[i] for i in keep), key=lambda p: first.as_min(p.values[first.name]))


def reference(experiment: ExperimentRecord, found: list[Point] | None = None) -> tuple[float, ...] | None:
    """The hypervolume's reference point (less is better): a tenth beyond the worst feasible value seen on each
    objective, so that every feasible trial counts."""
    objectives = experiment.config.objectives
    found = [p for p in (points(experiment) if found is None else found) if p.feasible]
    if not found:
        return None
    mins = _as_min(found, objectives)
    out = []
    for k in range(len(objectives)):
        low, high = min(m[k] for m in mins), max(m[k] for m in mins)
        out.append(high + max((high - low) * 0.1, abs(high) * 1e-3, 1e-9))
    return tuple(out)


def shared_reference(experiments: list[ExperimentRecord]) -> tuple[float, ...] | None:
    """One hypervolume reference point for several sweeps compared: a tenth beyond the worst feasible value any
    of them saw on each objective, so that each sweep's hypervolume is measured in the same box."""
    return reference(experiments[0], [p for e in experiments for p in points(e)])


def shared_reference_named(experiments: list[ExperimentRecord]) -> dict[str, float]:
    """``shared_reference`` by objective, each in its own sign (empty where no sweep has a feasible point)."""
    ref = shared_reference(experiments)
    objectives = experiments[0].config.objectives
    return {} if ref is None else {o.name: o.as_min(v) for o, v in zip(objectives, ref, strict=True)}


def hypervolume(
    experiment: ExperimentRecord, found: list[Point] | None = None, ref: tuple[float, ...] | None = None
) -> float:
    """What the front dominates up to ``ref``: the points of trials that may be on it (feasible, not failed)."""
    objectives = experiment.config.objectives
    found = points(experiment) if found is None else found
    ref = ref if ref is not None else reference(experiment, found)
    kept = [p for p in found if p.on_a_front]
    return 0.0 if ref is None else pareto.hypervolume(_as_min(kept, objectives), ref)


def hypervolume_over_time(
    experiment: ExperimentRecord, ref: tuple[float, ...] | None = None
) -> list[tuple[float, float]]:
    """(seconds into the sweep, the hypervolume of the trials' points as they stood then), one pair per result
    in the order they arrived, up to ``ref`` (default: the end's reference; ``tuner compare`` gives several
    sweeps one). Each trial counts with its latest point, as the front does, so the line can dip when a later
    epoch is worse."""
    objectives, constraints = experiment.config.objectives, experiment.config.constraint_list
    ref = ref if ref is not None else reference(experiment)
    if ref is None:
        return []
    events = sorted(  # a trial that failed is never on the front: its points never counted
        (
            (when, t.trial_id, row)
            for t in experiment.trials
            if t.status != "ERROR"
            for when, row in t.times()
        ),
        key=lambda event: (event[0], event[1]),
    )
    if not events:
        return []
    clock = experiment.clock()  # the time between a stop and its resume left out
    latest: dict[str, tuple[float, ...]] = {}
    out = []
    for when, trial_id, row in events:
        values = reported(objectives, row)
        if values is None:
            pass  # not a point: the trial's last one stands, as on the front
        elif any(v > 0 for v in violations(constraints, row)):
            latest.pop(trial_id, None)  # its point is not a feasible one any more
        else:
            latest[trial_id] = as_point(objectives, values)
        out.append((clock(when), pareto.hypervolume(list(latest.values()), ref)))
    return out


def rows(experiment: ExperimentRecord, found: list[Point] | None = None) -> list[dict[str, Value]]:
    """The front as rows: trial, each objective, the epoch, the config as the trainable reads it, its fate."""
    return [
        {
            "trial_id": p.trial.trial_id,
            **p.values,
            "epoch": p.epoch,
            "config": unflatten(p.trial.config),
            "fate": p.trial.fate,
        }
        for p in (front(experiment) if found is None else found)
    ]


def summary(experiment: ExperimentRecord) -> ParetoRecord:
    """What ``pareto.json`` holds: the objectives, the constraints, the front and its hypervolume."""
    found = front(experiment)
    every = points(experiment)
    ref = reference(experiment, every)
    objectives = experiment.config.objectives
    return {
        "objectives": [{"metric": o.name, "mode": o.mode} for o in experiment.config.objectives],
        "constraints": [str(c) for c in experiment.config.constraint_list],
        "front": rows(experiment, found),
        "infeasible": sum(1 for p in every if not p.feasible),
        "hypervolume": hypervolume(experiment, every, ref),
        # in each objective's own sign (the hypervolume is measured with every objective minimised)
        "reference": None
        if ref is None
        else {o.name: o.as_min(v) for o, v in zip(objectives, ref, strict=True)},
    }


def write(experiment: ExperimentRecord) -> ParetoRecord:
    from tuner.storage import write_text

    out = summary(experiment)
    write_text(experiment.path, PARETO_FILE, json.dumps(jsonable(out), indent=2) + "\n")
    return out


def format_front(out: ParetoRecord, folder: str) -> list[str]:
    """The lines printed at the end of a sweep: the front, a few rows, each trial's values and config."""
    names = [o["metric"] for o in out["objectives"]]
    objectives = ", ".join(f"{o['metric']} ({o['mode']})" for o in out["objectives"])
    lines = [f"Pareto front: {len(out['front'])} trial(s) no other beats on every objective ({objectives})"]
    for row in out["front"][:SHOWN]:
        shown = ", ".join(f"{n} {row[n]:.4g}" for n in names)
        lines.append(f"  {row['trial_id']}  {shown}  (epoch {row['epoch']})  {_brief(row['config'])}")
    if len(out["front"]) > SHOWN:
        lines.append(f"  ... and {len(out['front']) - SHOWN} more")
    if out["constraints"]:
        broke = (
            f"{out['infeasible']} trial(s) broke one and are"
            if out["infeasible"]
            else "no trial broke one; one that does is"
        )
        lines.append(f"constraints: {', '.join(out['constraints'])}; {broke} never on the front")
    hv = out["hypervolume"]
    if isinstance(hv, float) and math.isfinite(hv) and out["front"]:
        reference = out["reference"] or {}
        up_to = ", ".join(f"{name} {value:.4g}" for name, value in reference.items())
        # its scale: the box from the best value the front has on each objective to the reference point
        box = 1.0
        for name, value in reference.items():
            values = [v for row in out["front"] if (v := number(row.get(name))) is not None]
            box *= max(abs(value - v) for v in values) if values else 0.0  # the best is the farthest from it
        share = (
            f", {hv / box:.0%} of the box from the front's best on each objective to there" if box > 0 else ""
        )
        lines.append(
            f"hypervolume {hv:.4g} (the region the front dominates up to {up_to}{share}); saved "
            f"{folder}/{PARETO_FILE}"
        )
    return lines


def _brief(config: Value) -> str:
    """A config on one line, numbers to 4 significant figures as everywhere else on the terminal."""
    if not isinstance(config, Mapping):
        return json.dumps(jsonable(config))

    def shown(value: Value) -> str:
        value = plain(value)
        if isinstance(value, float):
            return f"{value:.4g}"
        return json.dumps(jsonable(value))

    return ", ".join(f"{name}={shown(value)}" for name, value in sorted(flatten(config).items()))
