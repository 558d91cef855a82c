"""Durations as people write them (``90``, ``90s``, ``10m``, ``2h``) and read them (``12 min 5 s``): one reading
for every flag, setting and message that speaks of time."""

from __future__ import annotations

import re

from tuner.errors import UsageError

_DURATION = re.compile(
    r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*(s|sec|secs|seconds?|m|min|mins|minutes?|h|hr|hrs|hours?|d|days?)?\s*$"
)
_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_duration(text: str | float | int, flag: str) -> float:
    """Seconds from ``90``, ``90s``, ``10m``, ``2h`` or ``1d``; a one-line error naming ``flag`` otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        match = _DURATION.match(str(text).lower())
        if not match:
            raise UsageError(f"{flag} {text!r} is not a duration; use seconds or a unit, e.g. 90s, 10m, 2h")
        seconds = float(match.group(1)) * _SECONDS[(match.group(2) or "s")[0]]
    if seconds <= 0:
        raise UsageError(f"{flag} must be more than 0, got {text!r}")
    return seconds


def format_seconds(seconds: float) -> str:
    """``42 s``, ``12 min 5 s``, ``3 h 20 min``: a duration as people read it."""
    seconds = max(float(seconds), 0.0)
    if seconds < 60:
        return f"{seconds:.3g} s" if seconds < 10 else f"{seconds:.0f} s"
    minutes, secs = divmod(int(round(seconds)), 60)
    if minutes < 60:
        return f"{minutes} min" + (f" {secs} s" if secs else "")
    hours, minutes = divmod(minutes, 60)
    return f"{hours} h" + (f" {minutes} min" if minutes else "")


def is_time_unit(unit: str) -> bool:
    """Whether ``unit`` is one ``parse_duration`` reads (``s``, ``min``, ``hours``, ...)."""
    return bool(_DURATION.match(f"1{unit}"))
