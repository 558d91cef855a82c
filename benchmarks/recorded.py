"""The recorded learning-curve tables under benchmarks/curves/ (made by make_curves.py), read once per process."""

from __future__ import annotations

import functools
from pathlib import Path

CURVES = Path(__file__).resolve().parent / "curves"


@functools.cache
def recorded(name: str):
    """A table under benchmarks/curves/ (``tuner.replay.curves.CurveTable``)."""
    from tuner.replay.curves import CurveTable

    return CurveTable.load(CURVES / f"{name}.json.gz")
