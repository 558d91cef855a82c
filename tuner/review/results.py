"""Rendering what a sweep produced: the end-of-sweep summary (``best_config.json``) and the trials' table
(``tuner export``'s choice is tuner/review/export.py).

The numbers come from tuner/experiment.py; this module only decides what to show and how.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.folder.fates import explained, state
from tuner.folder.names import BEST_FILE
from tuner.folder.summary import BestTrial, Failure, Summary
from tuner.nesting import unflatten
from tuner.review import findings
from tuner.review.vocabulary import show
from tuner.storage import write_text
from tuner.storage_outage import how_to_continue
from tuner.value_types import Value
from tuner.values import jsonable

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord


def epochs_apart(experiment: ExperimentRecord) -> str | None:
    """What to say where the trials' own ``epoch`` moves by less than one a report (two reports an epoch): tuner
    counts each report as an epoch, so --max-epochs 3 ended such trials at their epoch 1.5, and every count read
    as epochs while the trainable meant half (docs/trainables.md). None where it moves by one, or is not there."""
    import statistics

    from tuner.values import number

    steps = []
    for trial in experiment.trials:
        own = [e for row in trial.rows if (e := number(row.get("epoch"))) is not None]
        if len(own) >= 3 and len(own) == len(trial.rows):
            steps.append((own[-1] - own[0]) / (len(own) - 1))
    step = statistics.median(steps) if steps else 0.0
    if not 0 < step <= 0.75:
        return None
    return (
        f"the trials report their own epoch {step:.2g} apart, about {1 / step:.2g} reports an epoch; tuner counts "
        f"each report as an epoch (--max-epochs {experiment.config.max_epochs} is {experiment.config.max_epochs} "
        "reports), so report once an epoch, or scale --max-epochs"
    )


def summarize(experiment: ExperimentRecord) -> Summary:
    """The sweep's outcome from its folder (the best trial by the best value within each trial), also
    written to ``best_config.json``: the same definition ``tuner results`` and ``tuner export`` use."""
    metric, mode = experiment.metric, experiment.mode
    summary = Summary(
        metric,
        mode,
        len(experiment.trials),
        str(experiment.path),
        failed=[Failure(t.trial_id, t.error, t.error_file, explained(t.error)) for t in experiment.failed()],
        nonfinite=[f"{t.trial_id}: {t.nonfinite(metric)}" for t in experiment.trials if t.nonfinite(metric)],
        fates=experiment.fate_counts(),
        distinct_epochs=sum(t.epochs for t in experiment.trials),
    )
    best = experiment.best_trial()
    if best is not None:
        row = best.best_row(metric, mode) or {}
        checkpoint, note = experiment.checkpoint_choice(best)
        summary.best = BestTrial(
            best.trial_id,
            best.best(metric, mode),
            int(float(row.get("training_iteration") or 0)),
            unflatten(best.config),  # as the trainable read it
            checkpoint,
            best.path,
            best.fate,
            note,
        )
    summary.constraints = experiment.config.constraints or None
    findings.of(experiment).settle(summary)
    write_text(experiment.path, BEST_FILE, json.dumps(jsonable(summary.to_json()), indent=2) + "\n")
    return summary


def format_summary(summary: Summary) -> list[str]:
    """The lines printed when a sweep ends."""
    lines, which = list(summary.found.before), summary.found.best_is
    best = summary.best
    if best is not None:
        lines += [
            f"best {which}: {best.trial_id} ({summary.metric} {best.value:.4g} at epoch {best.epoch})",
            f"  config: {json.dumps(jsonable(best.config), sort_keys=True)}",
            f"  checkpoint: {best.checkpoint or 'none (the trainable saves no checkpoints)'}",
        ]
        if best.checkpoint_note:
            lines.append(f"    ({best.checkpoint_note})")
        if best.fate:
            lines.append(f"  fate: {best.fate}")
    else:
        lines.append(
            f"no trial reported {summary.metric!r}"
            + (" and met every constraint" if summary.constraints else "")
            + "; no best config"
        )
    lines += summary.found.after
    for failure in summary.failed:
        # A hung or signal-killed trial's error file holds only Ray's account of its end; the fate says more.
        where = f" ({failure.error_file})" if failure.error_file and not failure.explained else ""
        lines.append(f"failed: {failure.trial_id}: {failure.error}{where}")
    for text in summary.nonfinite:
        lines.append(f"non-finite: trial {text} (such values are never ranked)")
    if summary.fates:
        lines.append(fates_line(summary.fates))
    saved = "saved" if summary.best is not None else "saved the summary, with no best trial, in"
    lines.append(
        f"{summary.trials} trial(s), {len(summary.failed)} failed; {saved} {summary.experiment}/{BEST_FILE}"
    )
    lines.append(report_line(summary))
    if summary.spent is not None:
        from tuner.limits import describe_spent

        lines.append(describe_spent(summary.spent, summary.budget, summary.took, summary.distinct_epochs))
    if summary.stalled:
        lines.append(f"stalled: {summary.stalled}")
    if summary.counts:
        lines.append(f"note: {summary.counts}")
    # in the fates' words: a created trial that never ran has not started; the plan's remainder is still to come
    waiting = summary.not_started - summary.to_come
    paused = summary.fates.get("paused", 0)  # a scheduler's pause, which the fates count apart
    parts = [f"{summary.unfinished - summary.not_started - paused} trial(s) unfinished"]
    parts += [f"{paused} paused"] if paused else []
    parts += [f"{waiting} not started yet"] if waiting else []
    parts += (
        [f"{summary.to_come} more to come of the {summary.trials + summary.to_come} planned"]
        if summary.to_come
        else []
    )
    count = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    if summary.storage:  # a full (or refusing) storage stopped it: what to do comes first
        lines.append(
            f"stopped: {summary.storage}; {count}; {how_to_continue(summary.storage)} continue with: tuner resume "
            f"{summary.experiment}"
        )
    elif summary.unfinished:
        how = "stopped" if summary.stalled else "interrupted"
        if summary.signal:
            import signal

            how = f"stopped by {signal.Signals(summary.signal).name}"
        lines.append(f"{how}: {count}; continue with: tuner resume {summary.experiment}")
    return lines


def fates_line(counts: Mapping[str, int]) -> str:
    """How many trials met each fate (``ExperimentRecord.fate_counts``), as the summary and ``tuner results``
    say it."""
    return "fates: " + ", ".join(f"{n} {fate}" for fate, n in counts.items())


def report_line(summary: Summary) -> str:
    """Where the sweep's HTML report is, and the command that writes it again (after ``tuner replay``, say)."""
    again = f"tuner report {summary.experiment}"
    if summary.report:
        return f"report: {summary.report} (written again by: {again})"
    if summary.report_problem:
        return f"report: not written ({summary.report_problem}); {again} writes it"
    return f"report: not written; {again} writes it"


# Frames of the machinery a trial runs in (Ray, Python, tuner's own wrappers); a user wants their own code's.
_MACHINERY = (
    "/site-packages/ray/",
    "/dist-packages/ray/",
    "/lib/python3",
    "<frozen ",
    f'"{Path(__file__).resolve().parents[1]}{os.sep}',
)


def user_traceback(text: str) -> list[str]:
    """A trial's error as its author wants it: the traceback's frames in their code, then the error.

    Ray's error files start with its own frames (the actor, the thread that runs the function); only the
    frames outside Ray and the Python library, and the error itself, are kept.
    """
    lines = [line for line in text.rstrip().splitlines() if line.strip() and set(line.strip()) != {"^"}]
    frames: list[list[str]] = []
    tail: list[str] = []
    for line in lines:
        if line.startswith('  File "'):
            frames.append([line])
        elif frames and line.startswith("    "):
            frames[-1].append(line)
        elif frames:
            tail.append(line)
    mine = [frame for frame in frames if not any(part in frame[0] for part in _MACHINERY)]
    error = tail[-1] if tail else (lines[-1] if lines else "")
    return [line for frame in (mine or frames[-1:]) for line in frame] + [error]


# --- reviewing an experiment folder (no Ray, no torch) ---------------------------------------------

FORMATS = ("table", "csv", "json")


def param_columns(experiment: ExperimentRecord, own: Iterable[str]) -> dict[str, str]:
    """Each parameter's column in a table of trials: its name, or ``config/NAME`` where the table has a column of
    that name of its own (a parameter ``epochs`` beside the epochs a trial ran), as Ray's frames name them."""
    taken = set(own)
    params = sorted({k for t in experiment.trials for k in t.config})
    return {p: f"config/{p}" if p in taken else p for p in params}


def trial_rows(
    experiment: ExperimentRecord, top: int | None = None, words: bool = False
) -> list[dict[str, Value]]:
    """One row per trial, best first: id, state in the live table's words (finished, stopped early...),
    parameters, best and last metric, epochs run; Tune's own status beside the state unless ``words`` (the table
    a person reads: a stopped sweep's RUNNING trial is unfinished)."""
    metric, mode = experiment.metric, experiment.mode
    others = [f"last_{o.name}" for o in experiment.config.objectives[1:]]
    own = (
        "trial_id",
        "status",
        "state",
        f"best_{metric}",
        f"last_{metric}",
        *others,
        "front",
        "feasible",
        "epochs",
        "fate",
    )
    params = param_columns(experiment, own)
    on_front = findings.of(experiment).on_front()
    rows = []
    for trial in experiment.ranked()[:top]:
        row: dict[str, Value] = {"trial_id": trial.trial_id}
        if not words:
            row["status"] = trial.status
        row["state"] = state(trial.status, trial.fate)
        row.update({column: trial.config.get(p) for p, column in params.items()})
        row[f"best_{metric}"] = trial.best(metric, mode)
        row[f"last_{metric}"] = trial.last_reported(metric)
        for other in experiment.config.objectives[1:]:
            row[f"last_{other.name}"] = trial.last_reported(other.name)
        if on_front is not None:
            row["front"] = "yes" if trial.trial_id in on_front else ""
        if experiment.config.constraints:
            row["feasible"] = ("no" if experiment.breaks(trial) else "yes") if trial.rows else None
        row["epochs"] = trial.epochs
        row["fate"] = trial.fate
        rows.append(row)
    return rows


def render(rows: Sequence[Mapping[str, Value]], fmt: str, empty: str = "(no trials yet)") -> str:
    """Rows as an aligned text table, CSV or JSON."""
    columns = list(dict.fromkeys(k for row in rows for k in row))
    if fmt == "json":
        return json.dumps(jsonable(rows), indent=2)
    if fmt == "csv":
        import csv
        import io

        buffer = io.StringIO()
        writer = csv.DictWriter(buffer, fieldnames=columns, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        return buffer.getvalue().rstrip("\n")
    if not rows:
        return empty
    cells = [[show(row.get(c)) for c in columns] for row in rows]
    widths = [max(len(c), *(len(r[i]) for r in cells)) for i, c in enumerate(columns)]
    lines = ["  ".join(c.ljust(w) for c, w in zip(columns, widths, strict=True))]
    lines += ["  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in cells]
    return "\n".join(line.rstrip() for line in lines)
