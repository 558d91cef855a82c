"""What a sweep's early stopping saved, against every trial running to its end, and where the trainable's own
loop ended trials: the lines the report's scheduler panel opens with."""

from __future__ import annotations

from tuner.experiment import ExperimentRecord


def loop_ends_line(experiment: ExperimentRecord) -> str:
    """Where the trainable's own loop ended trials before max epochs, as the record shows it ("" where it ended
    none): what the plan, printed before the first trial, could not say."""
    from collections import Counter

    ends = Counter(t.loop_end for t in experiment.trials if t.loop_end is not None)
    if not ends:
        return ""
    at = ", ".join(f"{n} at epoch {epoch}" for epoch, n in sorted(ends.items()))
    return f"trials ended by their own loop before max epochs {experiment.config.max_epochs}: {at}"


def savings_line(experiment: ExperimentRecord) -> str:
    """Epochs and trial time the scheduler saved against every trial running to max epochs."""
    from tuner.durations import format_seconds

    max_epochs = experiment.config.max_epochs
    trials = [t for t in experiment.trials if t.rows]
    if not trials:
        return "No trial has reported yet."
    ran = sum(t.epochs for t in trials)
    saved = sum(experiment.epochs_cut(t) for t in trials)  # only what a scheduler cut counts
    full = ran + saved
    seconds = [
        float(r["time_this_iter_s"]) for t in trials for r in t.rows if _number(r.get("time_this_iter_s"))
    ]
    per_epoch = sum(seconds) / len(seconds) if seconds else 0.0
    # epochs run again: a trial continued (after a pause, a restart) from a checkpoint older than its last epoch,
    # or from its start without one
    again = experiment.epochs_trained() - ran
    trained = (
        f"{ran + again} trained, {again} of them run again, from an earlier checkpoint or from the start"
        if again > 0
        else ""
    )
    # the schedulers that stop no trial (their entries' ends_at_max_epochs; the review imports no Ray to ask)
    never = {
        "fifo": "FIFO runs every trial to its end",
        "pbt": "PBT runs every trial to its end, a worse one on from a better one's checkpoint and perturbed config",
    }
    if experiment.config.scheduler in never:
        also = f"; {trained}" if trained else ""
        return f"No early stopping: {never[experiment.config.scheduler]} ({ran} epochs in all{also})."
    horizon = experiment.horizon
    end = "max epochs" if horizon >= max_epochs else f"epoch {horizon}, where the trainable's own loop ends"
    # a loop whose length differs by config: a stopped trial's own loop may have ended it sooner than the horizon
    ends = {t.loop_end for t in trials if t.loop_end is not None}
    varying = bool(ends) and (len(ends) > 1 or max(t.epochs for t in trials) > min(ends))
    up_to = "up to " if varying and saved else ""
    line = (
        f"Trials ran {ran} epochs{f' ({trained})' if trained else ''}, and would have run {'up to ' if varying else ''}{full} had the scheduler "
        f"stopped none (each trial it stopped run on to {end}): early stopping saved {up_to}{saved} epoch{'' if saved == 1 else 's'} ({saved / full if full else 0:.0%})"
    )
    if per_epoch:
        line += f", about {format_seconds(saved * per_epoch)} of trial time at {format_seconds(per_epoch)} an epoch"
    line += "."
    if varying and saved:  # a caveat on what was saved: none where nothing was
        span = f"epochs {min(ends)} to {max(ends)}" if len(ends) > 1 else f"epoch {min(ends)}"
        longest = max(t.epochs for t in trials)
        others = f" and others ran to {longest}" if longest > max(ends) else ""
        line += (
            f" The trainable's own loop ended trials at {span}{others}, so a stopped trial's own loop may have "
            "ended it sooner: the saving is at most this."
        )
    if experiment.config.scheduler == "asha":
        line += (
            " ASHA runs more than ideal halving would: the first trials to reach a rung go on before it has a "
            "cutoff, and a trial that arrives while few have goes on against few."
        )
    return line


def _number(value: str | None) -> bool:
    if value is None:  # no cell: float() would refuse it
        return False
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True
