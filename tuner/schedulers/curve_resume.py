"""A resumed freeze-thaw sweep's curves as they were: Tune saves no scheduler state it can use, so they are
read back from the experiment's own results (tuner/schedulers/curve_scheduler.py asks at the first trial)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.schedulers.curve_fitting import CurveFitting


@dataclass
class SavedTrials:
    """What a resumed sweep's scheduler takes back besides the curves."""

    trials_cap: int | None
    ended: set[str] = field(default_factory=set)  # trials that ran to their end or failed
    frozen: set[str] = field(default_factory=set)  # trials paused when the sweep stopped
    paused: int = 0  # the pauses and stops it had decided, as its status line counts them
    stopped: int = 0


def restore_curves(model: CurveFitting, folder: str | None) -> SavedTrials | None:
    """Each trial's curve and config into ``model``, from the experiment in ``folder``; None on a sweep's first
    start (nothing saved yet)."""
    if folder is None:
        return None
    from tuner.experiment import load

    try:
        experiment = load(folder, running=False)
    except Exception:  # a sweep's first start: nothing saved yet
        return None
    out = SavedTrials(experiment.config.trials_cap)  # tuner resume --num-samples may grow it
    for record in experiment.trials:
        for epoch, value in record.curve(model._metric or experiment.metric):
            model._take(record.trial_id, epoch, value)
        if record.config:
            model.configs.setdefault(record.trial_id, dict(record.config))
            model.rows.setdefault(record.trial_id, model.features.encode(record.config))
        verdicts = [rung.get("verdict") for rung in record.rungs]
        out.paused += verdicts.count("paused")
        out.stopped += verdicts.count("stopped")
        if record.status in ("TERMINATED", "ERROR"):
            out.ended.add(record.trial_id)
        elif record.status == "PAUSED":
            out.frozen.add(record.trial_id)
    # the loop's end, as the sweep had learnt it, comes from LoopWatch.at_run_start (tuner/launch/guards/)
    return out
