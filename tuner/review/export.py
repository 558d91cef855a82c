"""What ``tuner export`` (and ``tuner.Experiment.best``) gives a training run: the best trial's config, metric and
checkpoint, a trial picked by id, or the front's trial that weights on the objectives prefer."""

from __future__ import annotations

from typing import TYPE_CHECKING, NotRequired, TypedDict

from tuner.nesting import unflatten
from tuner.objectives import Mode
from tuner.value_types import ConfigDraft
from tuner.values import number

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord, TrialRecord
    from tuner.review.front import Point


class BestExport(TypedDict):
    """What ``tuner export`` writes (and ``tuner.Experiment.best`` reads): the chosen trial, its config and
    checkpoint; its values and place on the front with several objectives, the constraints it breaks."""

    config: ConfigDraft  # as the trainable reads it
    metric: str
    mode: Mode
    value: float | None  # its best value of the metric (None: a trial --pick chose never reported it)
    epoch: int
    trial_id: str
    checkpoint: str | None
    experiment: str
    checkpoint_note: NotRequired[str]  # why the checkpoint is not the best epoch's own
    # several objectives: each one's value at the trial's point (its last epoch), or at ``epoch`` where one was
    # not a finite number at its last
    values: NotRequired[dict[str, float]]
    on_front: NotRequired[bool]
    breaks: NotRequired[list[str]]


def best_export(
    experiment: ExperimentRecord, pick: str | None = None, weights: str | None = None
) -> BestExport:
    """What a training run needs from the sweep: the best config, its metric and checkpoint; or the trial
    ``pick`` names, or the front's trial that ``weights`` (``loss=1,latency_ms=0.02``) prefer."""
    from tuner.errors import UsageError

    if pick is not None and weights is not None:
        raise UsageError("--pick and --weights both choose the trial; give one")
    chosen: TrialRecord | None
    if weights is not None:
        chosen = weighted_pick(experiment, weights)
    elif pick is not None:
        chosen = experiment.trial(pick)
    else:
        chosen = experiment.best_trial()
    if chosen is None:
        reported = [t for t in experiment.trials if t.best(experiment.metric, experiment.mode) is not None]
        if reported and all(experiment.breaks(t) for t in reported):
            raise UsageError(
                f"{experiment.path}: every trial that reported {experiment.metric!r} broke a constraint "
                f"({', '.join(experiment.config.constraints or [])}); none is exported"
            )
        raise UsageError(f"{experiment.path} has no trial that reported {experiment.metric!r}")
    row = chosen.best_row(experiment.metric, experiment.mode) or {}
    checkpoint, note = experiment.checkpoint_choice(chosen)
    out: BestExport = {
        "config": unflatten(chosen.config),  # as the trainable reads it
        "metric": experiment.metric,
        "mode": experiment.mode,
        "value": chosen.best(experiment.metric, experiment.mode),
        "epoch": int(float(row.get("training_iteration") or 0)),
        "trial_id": chosen.trial_id,
        "checkpoint": checkpoint,
        "experiment": str(experiment.path),
    }
    if note is not None:
        out["checkpoint_note"] = note
    from tuner.review import findings
    from tuner.review.front import point

    ids = findings.of(experiment).on_front()
    if ids is not None:
        at = point(chosen, experiment.config.objectives, experiment.config.constraint_list)
        out["values"] = (
            at.values
            if at
            else {
                o.name: v for o in experiment.config.objectives if (v := number(row.get(o.name))) is not None
            }
        )
        out["on_front"] = chosen.trial_id in ids
    if experiment.breaks(chosen):
        out["breaks"] = experiment.breaks(chosen)
    return out


def weighted_pick(experiment: ExperimentRecord, weights: str) -> TrialRecord:
    """The front's trial with the least weighted sum of its objectives, each scaled to 0-1 across the front
    (0 its best there): ``loss=1,latency_ms=0.5`` weighs loss twice as much as latency."""
    from tuner.errors import UsageError
    from tuner.review import findings

    found = findings.of(experiment).weighed()  # one objective: refused
    names = [o.name for o in experiment.config.objectives]
    given: dict[str, float] = {}
    for part in weights.split(","):
        name, _, text = part.partition("=")
        name = name.strip()
        if name not in names:
            raise UsageError(
                f"--weights {weights!r}: {name!r} is not an objective of this sweep ({', '.join(names)})"
            )
        try:
            given[name] = float(text)
        except ValueError:
            raise UsageError(f"--weights {weights!r}: {text!r} is not a number (NAME=WEIGHT,...)") from None
        if given[name] < 0:
            raise UsageError(f"--weights {weights!r}: weights are 0 or more")
    if not any(given.values()):
        raise UsageError(f"--weights {weights!r}: give at least one objective a weight above 0")
    if not found:
        raise UsageError(f"{experiment.path} has no trial on its front yet")
    objectives = experiment.config.objectives
    span = {o.name: [o.as_min(p.values[o.name]) for p in found] for o in objectives}

    def score(p: Point) -> float:
        total = 0.0
        for o in objectives:
            low, high = min(span[o.name]), max(span[o.name])
            scaled = (o.as_min(p.values[o.name]) - low) / (high - low) if high > low else 0.0
            total += given.get(o.name, 0.0) * scaled
        return total

    return min(found, key=score).trial
