"""The review's shared vocabulary: how values are shown, and the colour of each fate, defined once (a result cell
is read as a number by tuner/values.py).

Every view (the terminal tables, the HTML report, the PNG plots, ``tuner compare``) reads values and paints
fates through here, so a trial looks the same wherever it appears.
"""

from __future__ import annotations

from tuner.value_types import Value

# A trial's fate family (tuner/folder/fates.py ``kind``) -> its colour; the best trial has its own.
FATE_COLOURS = {
    "completed": "#1f77b4",
    "stopped early": "#9a9a9a",
    "errored": "#d62728",
    "running": "#2ca02c",
}
BEST_COLOUR = "#ff7f0e"
CUTOFF_COLOUR = "#d62728"


def cell(value: str | None) -> float | str | None:
    """A result cell (CSV text) as the number it holds, NaN included, else as it is."""
    if value is None:  # no cell: float() would refuse it
        return value
    try:
        return float(value)
    except (TypeError, ValueError):
        return value


def show(value: Value) -> str:
    """A value as every table shows it: floats to 4 significant digits, nothing as '-'."""
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)
