"""Plain Python values from what searchers, numpy and Ray hand back: one converter for printing and JSON, and
one reading of a result cell as a number."""

from __future__ import annotations

import math
from typing import Any


def plain(value: Any) -> Any:
    """A numpy scalar as the Python number it holds; anything else unchanged."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def number(value: Any) -> float | None:
    """A finite number from a result cell (CSV text, JSON, numpy), else None: NaN and infinities are never
    ranked or plotted as values."""
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


def jsonable(value: Any) -> Any:
    """A structure JSON can hold: numpy scalars as numbers, NaN and infinities as null, the rest as text."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    value = plain(value)
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    return repr(value)
