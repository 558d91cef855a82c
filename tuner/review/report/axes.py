"""The axes of the report's parameter views: each parameter in its own units.

A choice among a few whole numbers (a batch size) shows its values and nothing between, text shows its
categories, other numbers lie on a linear axis or, where they span a factor of 16 or more and lie more evenly on
it, a log one labelled in values; each trial gets a place from 0 to 1 on the axis and the ticks say what the
places mean.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeGuard

from tuner.review.vocabulary import show
from tuner.value_types import Value

LOG_SPAN = 16
MAX_CATEGORIES = 8
ASKED_FROM = 0.15  # where the values of a parameter some trials did not ask begin, above those trials' mark


@dataclass
class Axis:
    """One vertical axis: where each trial sits on it (0..1) and the ticks that say what the places mean."""

    label: str
    positions: list[float]
    ticks: list[tuple[float, str]]


def axis_for(label: str, values: Sequence[Value], choices: bool = True, scale: str | None = None) -> Axis:
    """An axis in the values' own units: whole numbers with few values (batch sizes, widths) as those values;
    other numbers on the ``scale`` the space draws them on ("log" or "linear"), else on a linear axis, or a log
    one where they span a factor of 16 or more and lie more evenly on it (a log-uniform draw does; a uniform draw
    from 0 to 1 spans a factor of hundreds too, and would crowd the top of a log axis); text as categories.
    ``choices=False`` (a metric) keeps numbers continuous. A parameter some trials did not ask (a branch's)
    keeps its numbers' axis above a mark of its own for those trials: it was drawn as categories, each value a
    step from the next."""
    asked = [v for v in values if v is not None]
    if asked and len(asked) < len(values) and all(_is_number(v) for v in asked):
        inner = axis_for(label, asked, choices, scale)
        places = iter(inner.positions)
        return Axis(
            inner.label,
            [0.0 if v is None else ASKED_FROM + (1 - ASKED_FROM) * next(places) for v in values],
            [(0.0, "not asked"), *((ASKED_FROM + (1 - ASKED_FROM) * p, text) for p, text in inner.ticks)],
        )
    numbers = [v for v in values if _is_number(v)]
    if len(numbers) == len(values) and numbers:
        low, high = min(numbers), max(numbers)
        unique = sorted(set(numbers))
        if choices and len(unique) <= MAX_CATEGORIES and all(float(v).is_integer() for v in unique):
            return categories(label, [show(v) for v in values], [show(v) for v in unique])
        spread = low > 0 and high > low
        if (
            spread
            and scale == "log"
            or scale is None
            and spread
            and high / low >= LOG_SPAN
            and _unevenness(numbers, math.log10) < _unevenness(numbers, float)
        ):
            lo, hi = math.log10(low), math.log10(high)
            place = [(math.log10(v) - lo) / (hi - lo) for v in numbers]
            decades = [e for e in range(math.ceil(lo), math.floor(hi) + 1)]
            marks = [
                (0.0, f"{low:.3g}"),
                *(((e - lo) / (hi - lo), f"{10.0**e:g}") for e in decades),
                (1.0, f"{high:.3g}"),
            ]
            return Axis(f"{label} (log)", place, _apart(marks))
        span = (high - low) or 1.0
        place = [(v - low) / span for v in numbers]
        return Axis(label, place, [(i / 4, f"{low + span * i / 4:.4g}") for i in range(5)])
    distinct = sorted({show(v) for v in values}, key=_sort_key)
    return categories(label, [show(v) for v in values], distinct)


def _is_number(value: Value) -> TypeGuard[int | float]:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _unevenness(values: Sequence[float], scale: Callable[[float], float]) -> float:
    """How far the values, placed on an axis of ``scale``, are from lying evenly along it: the largest gap
    between a value's place and its rank's share of the axis (0: evenly spread)."""
    places = sorted(scale(v) for v in values)
    low, span = places[0], (places[-1] - places[0]) or 1.0
    n = len(places)
    return max(abs((p - low) / span - (i / (n - 1) if n > 1 else 0.5)) for i, p in enumerate(places))


def _apart(marks: list[tuple[float, str]]) -> list[tuple[float, str]]:
    """Ticks far enough apart to read (a range end next to a decade gives way to the decade)."""
    kept: list[tuple[float, str]] = []
    for place, text in sorted(marks):
        if kept and place - kept[-1][0] < 0.06:
            if text != kept[-1][1] and place < 1.0:
                kept[-1] = (place, text)
            continue
        kept.append((place, text))
    return kept


def categories(label: str, shown: list[str], order: list[str]) -> Axis:
    step = 1.0 / max(len(order) - 1, 1)
    where = {name: i * step if len(order) > 1 else 0.5 for i, name in enumerate(order)}
    return Axis(label, [where[s] for s in shown], [(where[name], name) for name in order])


def _sort_key(text: str) -> tuple[int, float | str]:
    try:
        return 0, float(text)
    except ValueError:
        return 1, text
