"""A trial's results as its ``progress.csv`` holds them, one row an epoch: what every review of a trial reads
(from Ray's ``result.json`` where the CSV is gone).

Read with ``csv.reader`` rather than ``csv.DictReader`` (a review of thousands of trials reads as many files), to
the same rows.
"""

from __future__ import annotations

import csv
import io
import itertools
from collections.abc import Callable
from typing import TypeAlias, TypeVar, cast

from tuner import storage
from tuner.value_types import ConfigDraft
from tuner.values import number as _number

# One row of a trial's ``progress.csv``, one result: each column's text as the CSV holds it (read a number with
# tuner.values.number).
Row: TypeAlias = dict[str, str]
T = TypeVar("T")


def read_rows(trial_path: str, wanted: tuple[str, ...] = ()) -> list[Row]:
    """One row per epoch, as the trial's curve stands. A trial stopped by a signal can have reported an epoch
    whose checkpoint was not saved yet; resumed from the checkpoint before it, it reports that epoch again, and a
    trial without checkpoints starts over at epoch 1. A report at an epoch the trial had passed supersedes that
    epoch and every later one: the trial went on from there, and what it had reported after is gone, even where
    it was stopped before it got as far again. ``wanted``: the metrics the sweep decides on; Ray's CSV keeps
    the columns of a trial's first result, so one reported later (a figure measured after training, for a
    constraint) is read from ``result.json``, as is a trial whose CSV is gone."""
    text = storage.read_text(trial_path, "progress.csv")
    lines = csv.reader(io.StringIO(text or ""))
    header = next(lines, [])
    if text is None or (header and any(m not in header for m in wanted)):
        rows = _from_result_json(trial_path)
    else:
        rows = []
    if not rows:
        rows = [
            dict(zip(header, row, strict=True)) if len(row) == len(header) else _uneven(header, row)
            for row in lines
            if row
        ]
    kept: list[Row] = []
    for row in rows:
        went_back(
            kept, _number(row.get("training_iteration")), lambda r: _number(r.get("training_iteration"))
        )
        kept.append(row)
    return kept


def went_back(kept: list[T], epoch: float | None, epoch_of: Callable[[T], float | None]) -> bool:
    """Before a trial's report at ``epoch`` joins the reports ``kept`` of it (in the order of their epochs): drop
    those it supersedes, at that epoch or later (the trial went back, to an older checkpoint or to its start: what
    came after was run again, or is gone). True when any went. The live table follows a trial so too."""
    went = False
    while kept and epoch is not None and (epoch_of(kept[-1]) or 0) >= epoch:
        kept.pop()
        went = True
    return went


def _from_result_json(trial_path: str) -> list[Row]:
    """The rows ``progress.csv`` would hold, from ``result.json`` (one result a line, nested as reported): the
    config left out, nested keys joined by ``/`` and values as text, as Ray writes the CSV."""
    import json

    rows = []
    for line in (storage.read_text(trial_path, "result.json") or "").splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue  # a line cut short by a kill: the results before it stand
        if isinstance(result, dict):
            result.pop("config", None)  # Ray's CSV leaves the config out (params.json holds it)
            rows.append(dict(_as_text(result)))
    return rows


def config_at(trial_path: str, row: Row) -> ConfigDraft | None:
    """The config a result was trained with, as ``result.json`` keeps it beside each result (the CSV does not):
    under PBT a trial's config changes as it goes, and its best epoch may predate its last config. The last
    result of the row's epoch and time stands (a resumed epoch is reported again)."""
    import json

    found = None
    for line in (storage.read_text(trial_path, "result.json") or "").splitlines():
        try:
            result = json.loads(line)
        except ValueError:
            continue
        if (
            isinstance(result, dict)
            and str(result.get("training_iteration")) == row.get("training_iteration")
            and row.get("timestamp") in (None, str(result.get("timestamp")))
            and isinstance(result.get("config"), dict)
        ):
            found = result["config"]
    return found


def _as_text(result: dict[str, object], prefix: str = "") -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    for key, value in result.items():
        if isinstance(value, dict):
            out += _as_text(value, f"{prefix}{key}/")
        else:
            out.append((f"{prefix}{key}", "" if value is None else str(value)))
    return out


def _uneven(header: list[str], row: list[str]) -> Row:
    """A row longer or shorter than the header, as ``csv.DictReader`` reads it (quicker than it on the rest)."""
    out: dict[str | None, str | list[str] | None] = dict(itertools.zip_longest(header, row[: len(header)]))
    if len(row) > len(header):
        out[None] = row[len(header) :]
    return cast(Row, out)  # Row is DictReader's row type, whose keys are text but for that None


# a trial that did not train for longer than this between two results (a pause, a wait for a slot, a resume)
# trained in two stretches; up to a second is the rounding of Ray's whole-second stamps
STRETCH_BREAK_S = 1.05


def result_times(rows: list[Row]) -> list[tuple[float, Row]]:
    """(seconds since the epoch, row) for each result, as exact as the trial's own clock allows: Ray stamps
    results in whole seconds, so each stretch the trial trained without a break starts once (its stamp less
    its training time so far) and its training time is added. A pause, a wait or a resume between two
    results starts a new stretch (read at one start, a trial continued an hour after a pause showed its
    later epochs an hour early)."""
    out: list[tuple[float, Row]] = []
    stretch: list[Row] = []
    start: float | None = None  # the earliest start the stretch's rows read

    def close() -> None:
        for row in stretch:
            total, stamp = _number(row.get("time_total_s")), _number(row.get("timestamp"))
            when = start + total if start is not None and total is not None else stamp
            if when is not None:
                out.append((when, row))
        stretch.clear()

    for row in rows:
        stamp, total = _number(row.get("timestamp")), _number(row.get("time_total_s"))
        began = stamp - total if stamp is not None and total is not None else None
        if began is not None and start is not None and began - start > STRETCH_BREAK_S:
            close()
            start = None
        if began is not None:
            start = began if start is None else min(start, began)
        stretch.append(row)
    close()
    return out
