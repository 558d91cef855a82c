"""``tuner resume``: a stopped sweep continued, or a finished one grown, by the one process that claims it.

Settings come from the saved ``tuner_config.yaml``; everything is read and checked before Ray touches the
folder, so a bad experiment is reported and left exactly as it was. Ray's ``Tuner.restore`` is built here,
as ``Tuner`` is in tuner/launch/runner.py.
"""

from __future__ import annotations

import dataclasses
import sys
from typing import TYPE_CHECKING, TypedDict

from tuner import storage, storage_outage
from tuner.errors import StorageRefused, UsageError
from tuner.folder.summary import Summary
from tuner.launch.per_trial import wrapped_trainable
from tuner.launch.plan import Print, place, prepare
from tuner.launch.plan_text import describe
from tuner.launch.resume_changes import check_budget_left, extended, grown
from tuner.launch.runner import fit, launch
from tuner.settings import SweepConfig

if TYPE_CHECKING:
    from tuner.launch.guards.signals import OrderlyStop

ERRORED_CHOICES = ("resume", "restart", "skip")


class _Restart(TypedDict, total=False):
    """What ``tuner resume`` may change in the saved settings of a sweep started afresh."""

    num_samples: int
    trial_timeout: str
    budget: str


def resume_sweep(
    ref: str,
    errored: str = "skip",
    out: Print = print,
    num_samples: int | None = None,
    budget: str | None = None,
    trial_timeout: str | None = None,
    storage_path: str | None = None,
) -> Summary:
    """Continue a stopped sweep from its folder (``ref``, a name under ``storage_path``: tuner/where.py):
    unfinished trials go on from their last checkpoint.

    Settings come from the saved ``tuner_config.yaml``; everything is read and checked before Ray
    touches the folder, so a bad experiment is reported and left exactly as it was. The experiment is
    claimed first: a second process on it is refused. ``num_samples`` (more than before) grows the sweep,
    and ``budget`` (a new total, or ``+1h`` for that much more) extends it: the searcher, with all it
    learnt, proposes the extra trials. ``trial_timeout`` replaces the saved one.
    """
    from tuner import experiment, where
    from tuner.claim import claimed
    from tuner.launch.guards import disk
    from tuner.launch.guards.signals import OrderlyStop

    storage_outage.start_afresh()  # an earlier sweep's outage in this process is not this one's
    if errored not in ERRORED_CHOICES:
        raise UsageError(f"--errored {errored!r} is not valid; use one of: {', '.join(ERRORED_CHOICES)}")
    if num_samples is not None and num_samples < 1:  # worded as tuner sweep words it
        raise UsageError(f"--num-samples must be at least 1, got {num_samples}")
    folder = where.locate(ref, storage_path)
    # before the claim: a full storage is told in a line and nothing is written
    short = disk.room_left(folder)
    if short:
        raise StorageRefused(f"{short}; free space, then run tuner resume {folder} again")
    saved = experiment.load_saved_config(folder)
    if num_samples is None and budget is None and trial_timeout is None:
        ended = _ended(folder, errored, saved.trials_cap)
        if ended:  # nothing would run: say so without starting Ray or writing into the experiment
            out(ended)
            from tuner.review.report.page_file import report_path
            from tuner.review.results import summarize

            summary = summarize(experiment.load(folder))
            page = report_path(folder)
            summary.report = str(page) if page is not None and page.is_file() else None
            return summary
    origin = saved.origin
    with (
        claimed(folder, "tuner resume") as claim,
        OrderlyStop(f"continue with: tuner resume {folder}", on_exit=claim.release) as stop,
        storage.moved_while(origin, folder),
    ):  # what Ray saved of the sweep names where it was made
        return _resume_claimed(folder, errored, out, num_samples, budget, trial_timeout, stop)


def _ended(folder: str, errored: str, planned: int | None) -> str | None:
    """What to tell of a sweep with nothing left to run (every planned trial made and ended, errored ones left
    as they are), else None."""
    from tuner.launch.guards import disk
    from tuner.ray_compat.state_file import latest_state_name, saved_trial_states

    if planned is None or latest_state_name(folder) is None or disk.stopped_trials(folder):
        return None  # a budget decides its end, or there is no saved state to judge by
    statuses = [state["status"] for state in saved_trial_states(folder).values()]
    ended = ("TERMINATED", "ERROR") if errored == "skip" else ("TERMINATED",)
    if len(statuses) < planned or any(status not in ended for status in statuses):
        return None
    from tuner.ray_compat import can_grow

    failed = statuses.count("ERROR")
    rerun = f"; --errored resume or restart runs its {failed} errored trial(s) again" if failed else ""
    grow = (
        f"--num-samples N (more than {planned}) grows it (with --budget, a larger budget for the new trials)"
        if can_grow(folder)
        else "it planned every trial at its start (a grid, or PBT) and cannot grow: start a new sweep for more"
    )
    return (
        f"{folder}: the sweep finished, every one of its {len(statuses)} trial(s) ended, so nothing is left to resume; "
        f"{grow}{rerun}"
    )


def _by_the_budget(folder: str) -> str:
    """How many of the trials the budget ended, those it ended before their first epoch apart (the review lists
    them as never started), as a clause; empty when it ended none."""
    from tuner import experiment
    from tuner.folder.fates import NEVER_STARTED

    # by their fates, as tuner results tells them (a trial whose last epoch spent the budget ran to its end)
    fates = [t.fate for t in experiment.load(folder).trials]
    unstarted = sum(1 for fate in fates if fate.startswith(NEVER_STARTED))
    ended = unstarted + sum(1 for fate in fates if fate.startswith("ended by the budget"))
    if not ended:
        return ""
    before = f", {unstarted} of them before its first epoch (never started)" if unstarted else ""
    return f", {ended} of them by the budget{before}"


def resume_banner(folder: str, statuses: dict[str, str], errored: str, planned: int | None) -> str:
    """What a resume is about to do: the trials that go on, those still to come, what becomes of errored ones."""
    done = sum(status == "TERMINATED" for status in statuses.values())
    failed = sum(status == "ERROR" for status in statuses.values())
    # ended: finished or stopped early, as the table tells them apart
    parts = [f"{done} of {len(statuses)} trial(s) ended"]
    going = len(statuses) - done - failed
    if going:
        parts.append(
            f"{going} {'goes' if going == 1 else 'go'} on, from the last checkpoint where there is one"
        )
    if planned and planned > len(statuses):
        parts.append(f"{planned - len(statuses)} more to come of the {planned} planned")
    if failed:
        what = {
            "skip": "left as they are",
            "resume": "go on from their last checkpoint",
            "restart": "start over",
        }
        parts.append(f"{failed} errored: {what.get(errored, errored)} (--errored {errored})")
    return f"resuming {folder}: " + "; ".join(parts)


def _resume_claimed(
    folder: str,
    errored: str,
    out: Print,
    num_samples: int | None,
    budget: str | None,
    trial_timeout: str | None,
    stop: OrderlyStop,
) -> Summary:
    from tuner import experiment
    from tuner.launch.guards import budget as budgets
    from tuner.launch.guards import disk
    from tuner.launch.placement import cluster
    from tuner.limits import describe_spent
    from tuner.ray_compat import (
        frames_unread,
        reconcile_saved_search,
        relocate_saved_search,
        reopen_saved_trials,
        wait_out_storage_outages,
    )
    from tuner.ray_compat.state_file import latest_state_name, saved_trial_states
    from tuner.storage_outage import for_resume

    config = experiment.load_saved_config(folder)
    stopped = disk.stopped_trials(folder)  # trials a full disk stopped: they go on, they did not fail
    statuses = {
        tid: "PAUSED" if tid in stopped else state["status"]
        for tid, state in saved_trial_states(folder).items()
    }
    if latest_state_name(folder) is None or not storage.exists(folder, "tuner.pkl"):
        if any(storage.exists(storage.join(folder, d), "params.json") for d in storage.list_dirs(folder)):
            raise UsageError(
                f"{folder} has trials but no saved sweep state (Ray's experiment_state and tuner.pkl "
                "are missing), so it cannot be resumed; start a new sweep"
            )
        return _start_afresh(folder, config, out, stop, num_samples, budget, trial_timeout)
    if num_samples is not None:
        config = grown(folder, config, num_samples)
    if budget is not None:
        config = extended(folder, config, budget)
        if num_samples is None and _ended(folder, errored, config.trials_cap):
            from tuner.ray_compat import can_grow

            grow = (
                "grow the sweep with --num-samples N as well"
                if can_grow(folder)
                else "this sweep planned every trial at its start and cannot grow: start a new sweep"
            )
            by_budget = _by_the_budget(folder)
            raise UsageError(
                f"--budget {budget}: every one of the {config.trials_cap} trial(s) the sweep plans was made and has "
                f"ended{by_budget}; {'a trial the budget ended does not go on, so ' if by_budget else ''}a larger "
                f"budget has nothing to run; {grow}"
            )
    else:
        check_budget_left(folder, config)
    grows = num_samples is not None or budget is not None
    if trial_timeout is not None:
        # checked here, saved before the run
        config = dataclasses.replace(config, trial_timeout=trial_timeout)
    plan = prepare(config, out, resuming=True)
    with stop.through_ray_start():
        started = cluster.connect(config.address, dashboard=plan.wants_dashboard)
    stop.reinstall()  # Ray's core put its own SIGTERM handler in place
    try:
        from ray import tune

        plan = place(plan)
        out(resume_banner(folder, statuses, errored, config.trials_cap))
        if trial_timeout is not None:
            from tuner.limits import TrialTimeout
            from tuner.settings import save_config

            save_config(config, folder)
            out(TrialTimeout.parse(trial_timeout).describe())
        if grows:
            from tuner.ray_compat import can_grow, extend_saved_search
            from tuner.settings import save_config

            if can_grow(folder):
                finished = {tid for tid, status in statuses.items() if status in ("TERMINATED", "ERROR")}
                extend_saved_search(folder, config.trials_cap or sys.maxsize, finished)
            if budget is not None:
                budgets.forget_ended(folder)
            save_config(config, folder)
            if num_samples is not None:
                out(f"growing the sweep to {num_samples} trials: {num_samples - len(statuses)} more")
            if budget is not None:
                out(
                    f"budget now {budgets.Budget.parse(config.budget or '').describe()}; "
                    + describe_spent(budgets.load_spent(folder), None)
                )
        reopen_saved_trials(folder, stopped)  # everything checked: now the saved state may change
        for line in replace_unsaved_trials(folder):
            out(line)
        reconcile_saved_search(folder, set(statuses))  # a kill while Ray copied its state
        relocate_saved_search(folder)  # a moved or copied experiment makes its new trials where it lies now
        continuing = {
            tid
            for tid, status in statuses.items()
            if status != "TERMINATED" and (status != "ERROR" or errored == "resume")
        }
        for line in from_whole_checkpoints(folder, continuing):
            out(line)
        wait_out_storage_outages(for_resume(plan.config.storage_timeout))  # Ray's own writes to a bucket too
        with frames_unread():  # Ray reads every trial's rows into frames tuner never reads
            tuner = tune.Tuner.restore(
                folder,
                trainable=wrapped_trainable(plan),
                resume_unfinished=True,
                resume_errored=errored == "resume",
                restart_errored=errored == "restart",
            )
        return fit(tuner, plan.config, folder, stop, waiting=plan.trials_waiting)
    finally:
        cluster.disconnect(started)


def replace_unsaved_trials(folder: str) -> list[str]:
    """Trials the killed driver started after its last saved state: the search runs a new trial in the place of
    each (nothing Ray restores names them), and their folders, kept, leave the review; one line a trial."""
    from tuner.folder import unsaved
    from tuner.ray_compat.state_file import saved_trial_states

    listed = {state["dir"] for state in saved_trial_states(folder).values() if state["dir"]}
    left = unsaved.unlisted(folder, listed)
    if not left:
        return []
    unsaved.record(folder, left)
    return [
        f"trial {unsaved.trial_id_of(name)}: started after the last saved state, so it cannot be continued; "
        f"the search runs a new trial in its place (its folder {name} is kept, left out of the review)"
        for name in sorted(left)
    ]


def from_whole_checkpoints(folder: str, trial_ids: set[str]) -> list[str]:
    """Trials whose latest checkpoint is damaged or gone go on from their newest whole one (or from the start):
    Ray's saved state is pointed there and the damaged folders set aside; one line a trial says which."""
    from tuner.folder.checkpoints import damage, set_aside
    from tuner.ray_compat import fall_back_from_damaged

    lines = []
    for fallback in fall_back_from_damaged(folder, trial_ids, damage):
        trial_path = storage.join(folder, fallback.trial_dir)
        moved = [m for m in (set_aside(trial_path, name) for name in fallback.lost) if m]
        then = (
            f"it goes on from epoch {fallback.epoch} ({fallback.to})"
            if fallback.to is not None
            else "no whole checkpoint is left, so it starts over"
        )
        kept = f"; set aside as {', '.join(moved)}" if moved else ""
        lines.append(
            f"trial {fallback.trial_id}: its latest checkpoint {fallback.damaged} is damaged ({fallback.why}); "
            f"{then}{kept}"
        )
    return lines


def _start_afresh(
    folder: str,
    config: SweepConfig,
    out: Print,
    stop: OrderlyStop,
    num_samples: int | None,
    budget: str | None,
    trial_timeout: str | None,
) -> Summary:
    """A sweep stopped before its first trial has nothing to continue: run it from its saved settings."""
    from tuner.launch.placement import cluster

    changes: _Restart = {}  # each keyed by its name, so that its type goes with it
    if num_samples is not None:
        changes["num_samples"] = num_samples
    if trial_timeout is not None:
        changes["trial_timeout"] = trial_timeout
    if budget is not None:
        changes["budget"] = budget.lstrip("+")  # nothing was spent: +AMOUNT is the amount
    config = dataclasses.replace(config, **changes)
    out(f"{folder} stopped before its first trial: starting it afresh with its saved settings")
    plan = prepare(config, out, resuming=True)
    with stop.through_ray_start():
        started = cluster.connect(config.address, dashboard=plan.wants_dashboard)
    stop.reinstall()  # Ray's core put its own SIGTERM handler in place
    try:
        plan = place(plan)
        for line in describe(plan):
            out(line)
        return launch(plan, out, stop)
    finally:
        cluster.disconnect(started)
