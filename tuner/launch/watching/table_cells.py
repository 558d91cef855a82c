"""The live table's cells and rows, apart from the table: each trial's last result, the values shown (cut to a
readable width), the states in a sweep's order, and the rows shared fairly among the states when not all fit."""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from typing import TYPE_CHECKING

from tuner.folder.fates import still_paused
from tuner.objectives import Constraint, violations

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

    from tuner.folder.fates import FateFollower
    from tuner.launch.watching.table_rows import Ranked
    from tuner.value_types import Result, Scalar, Value

MAX_TEXT = 20  # characters of a text cell; longer ones are cut with an ellipsis
# Metrics trainables commonly report, shown beside the sweep's own when reported (Ray's guides name accuracy
# ``mean_accuracy``, Lightning's ``val_loss`` and ``val_accuracy``): at most ``MAX_COMPANIONS``, in this order.
COMPANIONS = ("loss", "accuracy", "mean_accuracy", "val_loss", "val_accuracy")
MAX_COMPANIONS = 2
STOPPED_EARLY, FINISHED, NEVER_STARTED = "stopped early", "finished", "never started"
NO_REPORT = "ended without a report"  # the trainable returned without reporting (or reported nothing to Tune)
TO_CONTINUE = "to continue"  # a paused trial chosen to go on, waiting for its worker (Tune's PENDING)
ENDED_BY_BUDGET, ENDED_BY_STALL = "ended by the budget", "ended by the stall"


def in_order(item: tuple[str, int]) -> int:
    """States in the order a sweep goes through them."""
    order = ("running", TO_CONTINUE, "pending", "paused", STOPPED_EARLY, ENDED_BY_BUDGET, ENDED_BY_STALL, FINISHED, NEVER_STARTED,
             NO_REPORT, "errored")  # fmt: skip
    return order.index(item[0]) if item[0] in order else len(order)


def fair_share(groups: dict[str, list[Ranked]], limit: int) -> list[Ranked]:
    """At most ``limit`` trials, each status given rows in turn (in the order of its best trial), so running
    trials are never crowded out by finished ones; within a status the best ranked first."""
    kept: list[Ranked] = []
    taken = dict.fromkeys(groups, 0)
    while len(kept) < limit:
        added = False
        for status, group in groups.items():
            if taken[status] < len(group):
                kept.append(group[taken[status]])
                taken[status] += 1
                added = True
            if len(kept) >= limit:
                break
        if not added:
            break
    return kept


def place_of(trial: Trial) -> object:
    """The machine a trial ran on, from its last result (None before one)."""
    return result_of(trial).get("node_ip")


def result_of(trial: Trial) -> Result:
    """A trial's last result, or nothing before its first: Tune answers a trial that never reported by
    waiting on its actor for default values, which would hold up the whole sweep's loop."""
    if not getattr(trial, "has_reported_at_least_once", True):
        return {}
    return trial.last_result or {}


def lookup(result: Result, name: str) -> Value:
    """A reported value by its full name; a nested result (``{"val": {"loss": ...}}``) by ``val/loss``."""
    if name in result:
        return result[name]
    value: Value = result
    for part in name.split("/"):
        if not isinstance(value, Mapping) or part not in value:
            return None
        value = value[part]
    return value


def location(result: Result) -> str:
    """Where the trial runs (the worker's address and process), from its last result; blank before one."""
    ip, pid = result.get("node_ip"), result.get("pid")
    return f"{ip}:{pid}" if ip and pid else ""


def cell(value: Value) -> Scalar:
    if value is None or isinstance(value, (bool, int, float)):
        return value
    text = str(value)
    return text if len(text) <= MAX_TEXT else text[: MAX_TEXT - 1] + "…"


def short(value: Value) -> str:
    return f"{value:.4g}" if isinstance(value, float) else repr(value)


# A diagnostic that repeats a parameter until the run changes it: the batch size the out-of-memory fallback
# trains at, the searched batch_size until an OOM halves it.
ADJUSTS = {"batch_size_effective": "batch_size"}


def says_nothing(name: str, shown: list[Trial], values: list[Value]) -> bool:
    """A diagnostic column with nothing new in any row shown: a parameter it repeats, or a count of zero."""
    from tuner.nesting import flatten

    if name in ADJUSTS:
        given = [flatten(t.config or {}).get(ADJUSTS[name]) for t in shown]
        return all(v is None or v == g for v, g in zip(values, given, strict=True))
    return all(v is None or v == 0 for v in values)


def ended_by_the_sweep(fates: FateFollower | None, trial_id: str, epochs: int) -> str | None:
    """``ENDED_BY_BUDGET`` or ``ENDED_BY_STALL`` for a trial the sweep's end cut short (paused ones too), as
    its fate says; "paused" for one whose pause still stands (a sweep stopped at once marks it ended, its saved
    state keeps it paused for ``tuner resume``; ``epochs``: those it ran); None when a scheduler stopped it or
    nothing is known."""
    try:
        decision = fates.decisions().get(trial_id) if fates is not None else None
    except OSError:  # the storage holding the fates is away: the table goes on, as a stop
        decision = None
    if not decision or decision.get("stopped"):
        return None
    if decision.get("budget"):
        return ENDED_BY_BUDGET
    if decision.get("stall"):
        return ENDED_BY_STALL
    return "paused" if still_paused(decision, epochs) else None


def breaks_constraints(constraints: Sequence[Constraint], trial: Trial) -> bool:
    """Whether the trial breaks a constraint, each judged on the value it last reported (Tune keeps each metric's
    last value), as the summary judges it."""
    if not constraints:
        return False
    result = dict(result_of(trial))
    analysis = getattr(trial, "metric_analysis", None) or {}
    for c in constraints:
        if c.metric not in result and "last" in analysis.get(c.metric, {}):
            result[c.metric] = analysis[c.metric]["last"]
    return any(v > 0 for v in violations(constraints, result))


def clock_line(start: float) -> str:
    """The status's first line: the time now, and how long the sweep has run since ``start``."""
    now = time.time()
    hours, rest = divmod(max(0.0, now - start), 3600)
    minutes, seconds = divmod(rest, 60)
    stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))
    return f"Current time: {stamp} (running for {int(hours):02d}:{int(minutes):02d}:{seconds:05.2f})"


def metric_columns(columns: Iterable[str], shown: list[Trial], metric: str, ranked_by: set[str]) -> list[str]:
    """The metric columns that say something about the trials shown. Left out: a column no trial has reported
    yet; a diagnostic of the run that says nothing new in any row (the batch size a trial runs at while it is
    still the one it was given, an OOM fallback halves it, and a count that is zero, OOM retries); and of the
    common metrics shown beside those the sweep ranks by (``COMPANIONS``), all but the first two reported."""
    from tuner.spec import DIAGNOSTICS

    kept: list[str] = []
    companions, results = 0, [result_of(t) for t in shown]
    for m in columns:
        values = [lookup(r, m) for r in results]
        if all(v is None for v in values):
            continue
        if m in DIAGNOSTICS and m != metric and says_nothing(m, shown, values):
            continue
        if m in COMPANIONS and m not in ranked_by:
            if companions == MAX_COMPANIONS:
                continue
            companions += 1
        kept.append(m)
    return kept
