"""A sweep's end, after Tune's ``fit`` returns: the saved statuses made right, fates and spending written into
the experiment, the final report, and the summary every view reads back (tuner/launch/runner.py runs it)."""

from __future__ import annotations

import logging
from collections.abc import Set
from typing import TYPE_CHECKING

from tuner import storage
from tuner.errors import UsageError
from tuner.folder.summary import Summary
from tuner.settings import SweepConfig

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord

log = logging.getLogger(__name__)


def wrap_up(cfg: SweepConfig, folder: str) -> Summary:
    """After ``fit``: statuses made right in the saved state, fates and spending written into the experiment,
    and the summary read back from it."""
    from tuner import experiment, ray_compat
    from tuner.folder import fates
    from tuner.launch.guards import budget, crashes, disk
    from tuner.review.results import epochs_apart, summarize

    crashes.tidy(storage.local_path(folder))
    statuses = ray_compat.last_step(folder)
    reopened = ray_compat.settle_saved_statuses(
        folder, statuses, lambda trial_dir, error_file: disk.refused_write(folder, trial_dir, error_file)
    )
    if statuses is not None:
        statuses.update({trial_id: "PAUSED" for trial_id in reopened})
    fates.persist(folder)
    try:  # read once for the epoch count, the page and the summary: each read takes seconds at 10,000 trials
        record = experiment.load(folder)
    except (UsageError, OSError):
        budget.persist_spent(folder)  # what was spent is kept whatever the read met
        raise
    spent = budget.persist_spent(folder, record)
    report, problem = final_report(folder, record)
    summary = summarize(record)
    summary.spent, summary.budget = spent, cfg.budget
    summary.report, summary.report_problem = report, problem
    summary.counts = epochs_apart(record)
    ran = {t.trial_id for t in record.trials if t.rows}
    # held at its last epoch too; not one a refused write stopped (reopened to go on: its fate says to resume)
    done = {t.trial_id for t in record.trials if t.epochs >= cfg.max_epochs} - set(reopened)
    unfinished, waiting, to_come = (
        (0, 0, 0)
        if spent.ended_by_budget
        else unfinished_trials(cfg, folder, statuses, {t.trial_id for t in record.trials}, ran, done)
    )
    summary.unfinished, summary.not_started = unfinished + waiting + to_come, waiting + to_come
    summary.to_come = to_come
    return summary


def final_report(folder: str, record: ExperimentRecord) -> tuple[str | None, str | None]:
    """The report as the sweep left it, without the live page's reload, written at every sweep's end (one over
    in seconds had no live page); (its path, None), or (None, why it was not written)."""
    from tuner.launch.watching import live_report
    from tuner.review.report import page_file

    live_report.cancel(folder)  # the final page replaces a live one in flight
    if page_file.report_path(folder) is None:
        return None, "a bucket has no page to open; it is written where the command runs"
    try:
        page = page_file.write(folder, record=record)
    except Exception as exc:  # noqa: BLE001 - the sweep's outcome stands without its page
        log.debug("the report could not be written", exc_info=True)
        return None, f"{type(exc).__name__}: {exc}"
    return (str(page) if page is not None else None), None


def unfinished_trials(
    cfg: SweepConfig,
    folder: str,
    statuses: dict[str, str] | None,
    recorded: Set[str],
    ran: Set[str],
    done: Set[str] = frozenset(),
) -> tuple[int, int, int]:
    """Trials started but not run to their end, trials in the experiment that have not started yet, and trials
    the sweep plans that it has no folder for yet: non-zero after a stop signal (Ray turns it into an orderly
    stop) or a stall. ``statuses`` are the sweep's own last-step statuses (without them the saved state is
    read); ``recorded``, the experiment's trials, ``ran``, those with a result, and ``done``, those that ran
    every epoch (one paused at its last is not unfinished). A trial Tune had made but
    not started has no folder, so it counts with those to come, as the fates (which read the folders) do."""
    from tuner.folder.fates import HELD
    from tuner.ray_compat import UNFINISHED
    from tuner.ray_compat.state_file import saved_trial_states

    if statuses is None:
        try:
            statuses = {trial_id: state["status"] for trial_id, state in saved_trial_states(folder).items()}
        except UsageError:
            return 0, 0, 0
    made = {tid: status for tid, status in statuses.items() if tid in recorded}
    # as the fates say it: a trial still pending with no result has not started; a running one is unfinished
    waiting = sum(status == "PENDING" and tid not in ran for tid, status in made.items())
    open_trials = sum(
        status in UNFINISHED and not (tid in done and status in HELD) for tid, status in made.items()
    )
    open_trials -= waiting
    # a searcher creates trials as slots free up
    to_come = max((cfg.trials_cap or 0) - len(made), 0)
    return open_trials, waiting, to_come
