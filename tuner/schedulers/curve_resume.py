"""A resumed freeze-thaw sweep's curves as they were: Tune saves no scheduler state it can use, so they are
read back from the experiment's own results (tuner/schedulers/curve_scheduler.py calls it at the first trial)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tuner.schedulers.curve_scheduler import FreezeThawScheduler


def restore_curves(scheduler: FreezeThawScheduler) -> None:
    """Each trial's curve, config and state from the experiment the scheduler's fate log writes into; nothing
    on a sweep's first start (nothing saved yet)."""
    folder = getattr(scheduler.fate_log, "folder", None) if scheduler.fate_log else None
    if folder is None:
        return
    from tuner.experiment import load

    try:
        experiment = load(folder, running=False)
    except Exception:  # a sweep's first start: nothing saved yet
        return
    scheduler.trials_cap = experiment.config.trials_cap  # tuner resume --num-samples may grow it
    for record in experiment.trials:
        for epoch, value in record.curve(scheduler._metric or experiment.metric):
            scheduler._take(record.trial_id, epoch, value)
        if record.config:
            scheduler.configs.setdefault(record.trial_id, dict(record.config))
            scheduler.rows.setdefault(record.trial_id, scheduler.features.encode(record.config))
        if record.status in ("TERMINATED", "ERROR"):
            scheduler.ended.add(record.trial_id)
        elif record.status == "PAUSED":
            scheduler.frozen.add(record.trial_id)
    # the loop's end, as the sweep had learnt it, comes from LoopWatch.at_run_start (tuner/launch/guards/)
