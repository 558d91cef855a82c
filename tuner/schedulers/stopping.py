"""How a trial is stopped early, in one place: the order of the calls, and the one record each decision leaves.

Tune calls a scheduler for every result a trial reports; tuner's rules (ASHA, HyperBand and BOHB's brackets, the
median rule, freeze-thaw) each decide in the same order:

1. ``on_trial_result(controller, trial, result)``: the rule finds where the result is compared (a rung, a
   bracket's round, the others' running means at that epoch, a forecast of the trial's curve). A result that
   reaches no comparison goes on (``CONTINUE``).
2. Its ``Comparison`` (tuner/schedulers/comparing.py) says where the trial stands there: by one value as Ray's
   rules rank, or by fronts with several objectives or constraints.
3. ``compared`` writes that comparison to the fate log (one ``rung`` entry: its epoch, value, cutoff or place,
   whether it was kept), and when the trial does not go on, ``stopped`` writes why, in one shape:
   "stopped early by RULE at epoch N: WHY". The rule then answers ``STOP`` (or ``PAUSE``, where it may continue
   the trial later: HyperBand's brackets, freeze-thaw).

Trials ended outside a rule are recorded in the same fate log by the sweep's guards (tuner/launch/guards/): the
budget, a stall, a hung or killed trial, a full storage. tuner/folder/fates.py reads every entry back into each
trial's fate, which every view shows.
"""

from __future__ import annotations

from ray.tune.schedulers import TrialScheduler

from tuner.folder.fates import RUNG, STOPPED, DecisionLog, RungRecord


def compared(log: DecisionLog | None, trial_id: str, record: RungRecord) -> None:
    """One comparison as the rule made it, a ``RungRecord`` (tuner/folder/fates.py): the report's table of
    comparisons and a resumed rule read it back."""
    if log:
        log.record(trial_id, RUNG, "", record)


def stopped(log: DecisionLog | None, trial_id: str, rule: str, epoch: object, why: str) -> str:
    """A trial the rule stops early, with why, in the one shape every view reads; Tune's answer to give."""
    if log:
        log.record(trial_id, STOPPED, stopped_text(rule, epoch, why))
    return TrialScheduler.STOP


def stopped_text(rule: str, epoch: object, why: str) -> str:
    return f"stopped early by {rule} at epoch {epoch}: {why}"
