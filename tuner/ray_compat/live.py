"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

10. A resumed sweep's stopper (Ray 2.60): Tune saves its stopper inside the experiment state and a restored
run uses that copy, not the run config's, so a stopper holding the callback that decides (a stall, a
spent budget) would consult a dead copy. Such callbacks register the live instance with
``register_live``; stoppers look it up with ``live``, by the experiment they belong to.

26. An experiment saved when the live table was a subclass of Ray's CLIReporter holds CLIReporter's private
attributes (``_metric``, ``_mode``, ``_parameter_columns``, ``_metric_columns``) in its pickled reporter:
``cli_reporter_settings`` reads them for the live table that resumes it (tuner/launch/watching/live_table.py).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict, TypeVar

if TYPE_CHECKING:
    from ray.tune import Callback

    from tuner.objectives import Constraint, Mode, Objective

W = TypeVar("W")

# key -> the live instance; a key is registered by one class of callback, whose saved copy looks it up
_LIVE: dict[str, Any] = {}


class LiveTableSettings(TypedDict):
    """The live table's keywords (tuner/launch/watching/live_table.py ``LiveTable``)."""

    metric: str
    mode: Mode
    parameters: list[str]
    columns: dict[str, str]
    max_epochs: int
    objectives: tuple[Objective, ...]
    constraints: tuple[Constraint, ...]


def register_live(key: str, callback: Callback) -> None:
    """This process's deciding instance for ``key`` (e.g. a budget watch and its experiment)."""
    _LIVE[key] = callback


def live(key: str, fallback: W) -> W:
    """The instance registered for ``key`` in this process (one of ``fallback``'s own class), else ``fallback``."""
    return _LIVE.get(key, fallback)


def cli_reporter_settings(
    state: dict[str, Any],
) -> LiveTableSettings:  # state: the reporter's pickled __dict__
    """The live table's settings from the pickled state of an old CLIReporter subclass (and tuner's own fields
    on it, which were named the same way)."""
    return {
        "metric": state.get("_metric") or "",  # set again by setup() when the sweep starts
        "mode": state.get("_mode") or "min",
        "parameters": list(state.get("_parameter_columns") or ()),
        "columns": dict(state.get("_metric_columns") or {}),
        "max_epochs": int(state.get("_max_epochs") or 0),
        "objectives": tuple(state.get("_objectives") or ()),
        "constraints": tuple(state.get("_constraints") or ()),
    }
