"""A trial's results as its ``progress.csv`` holds them, one row an epoch: what every review of a trial reads
(from Ray's ``result.json`` where the CSV is gone).

Read with ``csv.reader`` rather than ``csv.DictReader`` (a review of thousands of trials reads as many files), to
the same rows.
"""

from __future__ import annotations

import csv
import io
import itertools
from typing import TypeAlias, cast

from tuner import storage

# One row of a trial's ``progress.csv``, one result: each column's text as the CSV holds it (read a number with
# tuner.values.number).
Row: TypeAlias = dict[str, str]


def read_rows(trial_path: str, wanted: tuple[str, ...] = ()) -> list[Row]:
    """One row per epoch. A trial stopped by a signal can have reported an epoch whose checkpoint was not
    saved yet; resumed from the checkpoint before it, it reports that epoch again. The later report is the
    one the trial went on from, so it stands. ``wanted``: the metrics the sweep decides on; Ray's CSV keeps
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
    latest: dict[str, int] = {}
    for i, row in enumerate(rows):
        latest[row.get("training_iteration") or f"row {i}"] = i
    return [row for i, row in enumerate(rows) if latest[row.get("training_iteration") or f"row {i}"] == i]


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
