"""A trial's results as its ``progress.csv`` holds them, one row an epoch: what every review of a trial reads.

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


def read_rows(trial_path: str) -> list[Row]:
    """One row per epoch. A trial stopped by a signal can have reported an epoch whose checkpoint was not
    saved yet; resumed from the checkpoint before it, it reports that epoch again. The later report is the
    one the trial went on from, so it stands."""
    text = storage.read_text(trial_path, "progress.csv")
    lines = csv.reader(io.StringIO(text)) if text else iter(())
    header = next(lines, [])
    rows = [
        dict(zip(header, row, strict=True)) if len(row) == len(header) else _uneven(header, row)
        for row in lines
        if row
    ]
    latest: dict[str, int] = {}
    for i, row in enumerate(rows):
        latest[row.get("training_iteration") or f"row {i}"] = i
    return [row for i, row in enumerate(rows) if latest[row.get("training_iteration") or f"row {i}"] == i]


def _uneven(header: list[str], row: list[str]) -> Row:
    """A row longer or shorter than the header, as ``csv.DictReader`` reads it (quicker than it on the rest)."""
    out: dict[str | None, str | list[str] | None] = dict(itertools.zip_longest(header, row[: len(header)]))
    if len(row) > len(header):
        out[None] = row[len(header) :]
    return cast(Row, out)  # Row is DictReader's row type, whose keys are text but for that None
