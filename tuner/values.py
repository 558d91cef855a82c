"""Plain Python values from what searchers, numpy and Ray hand back: one converter for printing and JSON, and
one reading of a result cell as a number."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, SupportsFloat, SupportsIndex, TypeAlias, TypeVar, overload

if TYPE_CHECKING:
    import numpy as np

    from tuner.value_types import Scalar

T = TypeVar("T")

# What JSON holds: what ``jsonable`` makes of any value.
Json: TypeAlias = str | int | float | bool | None | list["Json"] | dict[str, "Json"]


@overload
def plain(value: np.integer | np.floating | np.bool_ | np.str_) -> Scalar: ...
@overload
def plain(value: T) -> T: ...
def plain(value: T | np.generic) -> T | Scalar | np.generic:
    """A numpy scalar as the Python number it holds; anything else unchanged."""
    if hasattr(value, "item") and getattr(value, "ndim", None) == 0:
        return value.item()
    return value


def as_float(value: object) -> float:
    """``float(value)`` for a value known to be a number (a range's bound, a model's index, a reported metric):
    a number (numpy's included) or its text as float() reads it; anything else the TypeError float() raises,
    where a cast would have let it through unseen."""
    if isinstance(value, (SupportsFloat, SupportsIndex, str, bytes, bytearray)):
        return float(value)
    raise TypeError(f"float() argument must be a string or a real number, not '{type(value).__name__}'")


def number(value: Any) -> float | None:
    """A finite number from a result cell (CSV text, JSON, numpy), else None: NaN and infinities are never
    ranked or plotted as values. (``value`` is whatever a cell holds: anything ``float()`` may read.)"""
    try:
        result = float(value)
    except (TypeError, ValueError):
        return None
    return result if math.isfinite(result) else None


def jsonable(value: Any) -> Json:
    """A structure JSON can hold: numpy scalars as numbers, NaN and infinities as null, the rest as text.
    (``value`` may be any object: what JSON cannot hold is written as its ``repr``.)"""
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
