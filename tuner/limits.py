"""How long a sweep and its trials may run: the ``--budget`` and ``--trial-timeout`` values, parsed and explained.

Pure values (no Ray), so settings can be checked and printed in a second. The watches that enforce them
during a sweep are tuner/launch/guards/budget.py and tuner/launch/guards/watchdog.py.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner.durations import format_seconds, is_time_unit, parse_duration
from tuner.errors import UsageError

if TYPE_CHECKING:
    from tuner.folder.spent import Spent

_BUDGET = re.compile(r"^\s*(\+)?\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]+)?\s*$")
_EPOCH_UNITS = ("ep", "epoch", "epochs")
_GPU_HOUR_UNITS = ("gpuh", "gpu-h", "gpuhour", "gpuhours", "gpu-hours")
WALL, EPOCHS, GPU_HOURS = "wall", "epochs", "gpu_hours"
BUDGET_FORMS = "30s, 90m, 2h (wall time), 500ep (epochs) or 4gpuh (GPU-hours)"


@dataclass(frozen=True)
class Budget:
    """What a sweep may spend: wall time from its first trial's start, epochs in all, or GPU-hours.

    ``extra`` marks a budget written ``+1h``: that much more than an earlier run spent (``tuner resume``).
    """

    kind: str
    amount: float
    extra: bool = False

    @classmethod
    def parse(cls, text: str, flag: str = "--budget") -> Budget:
        match = _BUDGET.match(str(text).strip().lower())
        if match is None:
            raise UsageError(f"{flag} {text!r} is not a budget; use {BUDGET_FORMS}")
        unit = match.group(3)
        if unit is None:
            n = match.group(2)
            raise UsageError(
                f"{flag} {text!r} needs a unit: {n}s, {n}m, {n}h (wall time), {n}ep (epochs) or "
                f"{n}gpuh (GPU-hours)"
            )
        amount, extra = float(match.group(2)), bool(match.group(1))
        if unit in _EPOCH_UNITS:
            if amount != int(amount):
                raise UsageError(f"{flag} {text!r}: epochs are whole numbers")
            kind = EPOCHS
        elif unit in _GPU_HOUR_UNITS:
            kind = GPU_HOURS
        else:
            if not is_time_unit(unit):
                raise UsageError(f"{flag} {text!r}: unknown unit {unit!r}; use {BUDGET_FORMS}")
            amount = parse_duration(f"{match.group(2)}{unit}", flag)
            kind = WALL
        if amount <= 0:
            raise UsageError(f"{flag} must be more than 0, got {text!r}")
        return cls(kind, amount, extra)

    def describe(self, amount: float | None = None) -> str:
        """The amount in its unit: ``2 h of wall time``, ``500 epochs``, ``4 GPU-hours``."""
        value = self.amount if amount is None else amount
        if self.kind == EPOCHS:
            return f"{value:.0f} epochs"
        if self.kind == GPU_HOURS:
            return f"{value:.3g} GPU-hours"
        return f"{format_seconds(value)} of wall time"

    @property
    def counted(self) -> str:
        """How the plan says it is counted."""
        if self.kind == EPOCHS:
            return "counted as the epochs of all trials together"
        if self.kind == GPU_HOURS:
            return "counted over the GPUs that running trials hold, from the first trial's start"
        return "counted from the first trial's start"

    def example_more(self) -> str:
        """A ``+AMOUNT`` in this budget's own unit, for messages."""
        return {EPOCHS: "+100ep", GPU_HOURS: "+1gpuh"}.get(self.kind, "+30m")

    def text_for(self, total: float) -> str:
        """A budget of ``total`` in this unit, as it is saved (wall time to a tenth of a second: ``+10s`` after
        12.3 s spent is 22.3 s, not 23)."""
        if self.kind == EPOCHS:
            return f"{total:.0f}ep"
        if self.kind == GPU_HOURS:
            return f"{total:.4g}gpuh"
        return f"{round(total, 1)}".removesuffix(".0") + "s"

    def spent_of(self, spent: Spent) -> float:
        """This budget's unit out of everything a sweep has spent."""
        return spent.of(self.kind)


# A trial that has not reported for this long is hung, unless --trial-timeout says otherwise. Epoch times
# vary with the config (a batch of 2 is eight times slower than one of 16), so the limit follows the
# slowest epoch the sweep has seen, not the trial's own.
EPOCH_FACTOR = 5.0
EPOCH_FLOOR_S = 120.0
FIRST_REPORT_FLOOR_S = 600.0  # data loading, CUDA start-up, compiling and the first epoch


@dataclass(frozen=True)
class TrialTimeout:
    """How long a running trial may stay silent: fixed (``--trial-timeout``) or from the epochs seen."""

    fixed: float | None = None

    @classmethod
    def parse(cls, text: str | None) -> TrialTimeout:
        return cls(None if text is None else parse_duration(text, "--trial-timeout"))

    def limit(self, first_report: bool, slowest_epoch: float | None, slowest_first: float | None) -> float:
        """Seconds of silence allowed now: before a trial's first report (after a start or a restore),
        or between two reports."""
        if self.fixed is not None:
            return self.fixed
        if first_report:
            return max(FIRST_REPORT_FLOOR_S, EPOCH_FACTOR * (slowest_first or 0.0))
        return max(EPOCH_FLOOR_S, EPOCH_FACTOR * (slowest_epoch or 0.0))

    def describe(self) -> str:
        if self.fixed is not None:
            return f"trial timeout: a trial silent for {format_seconds(self.fixed)} is stopped as hung (--trial-timeout)"
        return (
            f"trial timeout: a trial silent for {EPOCH_FACTOR:g}x the slowest epoch seen (at least "
            f"{format_seconds(EPOCH_FLOOR_S)}; {format_seconds(FIRST_REPORT_FLOOR_S)} before its first report) is "
            "stopped as hung; set it with --trial-timeout"
        )


def describe_spent(
    spent: Spent, budget: str | None, took: float | None = None, distinct: int | None = None
) -> str:
    """The summary's spending line. ``took``: seconds from the command's start to its summary (what a user
    timed); the trials' wall time, which a budget counts, runs from the first trial's start. ``distinct``: the
    epochs the trials hold, each once, where some were run again (``tuner results`` and the report count those)."""
    ran = f"{format_seconds(spent.wall)} of wall time from the first trial's start"
    again = spent.epochs - distinct if distinct is not None else 0
    epochs = f"{spent.epochs} epochs" + (
        f" ({distinct} distinct, {again} run again, from an earlier checkpoint or from the start)"
        if again > 0
        else ""
    )
    epochs += f", {spent.gpu_hours:.3g} GPU-hours" if spent.gpu_hours else ""
    since = f"{format_seconds(took)} from the command's start to this summary" if took is not None else None
    if budget:
        end = "; the sweep ended on it" if spent.ended_by_budget else ""
        return f"budget: {Budget.parse(budget).describe()}; spent {ran}, {epochs}{end}" + (
            f"; {since}" if since else ""
        )
    if since:
        # the trials' figures are the sweep's in all (a resumed one's earlier runs too), the command's this run's
        runs = f" over its {len(spent.runs)} runs" if len(spent.runs) > 1 else ""
        return (
            f"spent: {since}; the sweep's trials ran for {format_seconds(spent.wall)}{runs}, {epochs} in all"
        )
    return f"spent: {ran}, {epochs}"
