"""What a sweep spent (``spent.json``, and the driver's running count beside the experiment while it runs).

The budget guard (tuner/launch/guards/budget.py) counts and writes it; resume, the summary and the review read
it. A kill -9 loses the driver's last seconds, not the count: the larger of the two files stands.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, fields

from tuner import storage
from tuner.folder.names import SPENT_FILE, SPENT_SIDECAR


@dataclass
class Spent:
    """Wall time (seconds, from the first trial's start), epochs in all, GPU-hours, whether the budget ended
    the sweep, the most trials seen running at once (what a replay of the sweep runs with), and each run's
    span (seconds since the epoch, from its first trial's start to its last count): the review's clock leaves
    out the time between a stop and its resume."""

    wall: float = 0.0
    epochs: int = 0
    gpu_hours: float = 0.0
    ended_by_budget: bool = False
    at_once: int = 0
    runs: list[list[float]] = field(default_factory=list)

    def of(self, kind: str) -> float:
        """One budget unit's amount (tuner.limits WALL, EPOCHS, GPU_HOURS name these fields)."""
        return float(getattr(self, kind))

    def plus(self, other: Spent) -> Spent:
        """Spent before this run plus spent in it (the flags and the most at once are this run's)."""
        return Spent(
            self.wall + other.wall,
            self.epochs + other.epochs,
            self.gpu_hours + other.gpu_hours,
            other.ended_by_budget,
            max(self.at_once, other.at_once),
            self.runs + other.runs,
        )

    def larger(self, other: Spent) -> Spent:
        return Spent(
            max(self.wall, other.wall),
            max(self.epochs, other.epochs),
            max(self.gpu_hours, other.gpu_hours),
            self.ended_by_budget or other.ended_by_budget,
            max(self.at_once, other.at_once),
            [
                list(r)
                for r in max(
                    self.spans(), other.spans(), key=lambda runs: (len(runs), runs[-1][1] if runs else 0.0)
                )
            ],
        )

    def spans(self) -> list[tuple[float, float]]:
        """Each run's (start, end), in order; a damaged entry is left out."""
        spans = [r[:2] for r in self.runs if isinstance(r, list) and len(r) >= 2]
        return sorted(
            (float(start), float(end))
            for start, end in spans
            if isinstance(start, (int, float)) and isinstance(end, (int, float)) and end >= start
        )

    def clock(self) -> Callable[[float], float] | None:
        """Seconds since the epoch to seconds of the sweep: from its first run's start, the time between its
        runs left out (a moment between two runs counts as the end of the first); None when no run was
        recorded (an experiment from before they were)."""
        runs = self.spans()
        if not runs:
            return None

        def seconds(when: float) -> float:
            before = 0.0
            for start, end in runs:
                if when <= end:
                    return before + max(when - start, 0.0)
                before += end - start
            return before + (when - runs[-1][1])  # after the last count (a result of its last second)

        return seconds

    def to_json(self, **extra: str | None) -> str:  # extra keys: the running count's budget
        return json.dumps({**asdict(self), **extra}, indent=1) + "\n"

    @classmethod
    def parse(cls, text: str | None) -> Spent:
        """A saved count; an empty, unreadable or older file counts as nothing spent."""
        try:
            saved = json.loads(text) if text else {}
        except ValueError:
            return cls()
        if not isinstance(saved, dict):
            return cls()
        spent = cls()
        for f in fields(cls):
            value = saved.get(f.name)
            if value is not None:
                try:
                    setattr(spent, f.name, type(getattr(spent, f.name))(value))
                except (TypeError, ValueError):
                    pass
        return spent


def read(folder: str) -> Spent:
    """What the experiment has spent in earlier runs: the larger of the saved count and the driver's own."""
    spent = Spent.parse(storage.read_text(folder, SPENT_FILE))
    side = storage.sidecar(folder, SPENT_SIDECAR)
    if side.is_file():
        spent = spent.larger(Spent.parse(side.read_text(encoding="utf-8")))
    return spent


def write(folder: str, spent: Spent) -> None:
    """Into the experiment (after Ray's last sync); the driver's copy is then forgotten."""
    storage.write_text(folder, SPENT_FILE, spent.to_json())
    forget_running(folder)


def write_running(folder: str, spent: Spent, budget: str | None) -> None:
    """The driver's running count beside the experiment, written whole."""
    side = storage.sidecar(folder, SPENT_SIDECAR)
    side.parent.mkdir(parents=True, exist_ok=True)
    storage.write_atomically(side, spent.to_json(budget=budget))


def forget_running(folder: str) -> None:
    storage.sidecar(folder, SPENT_SIDECAR).unlink(missing_ok=True)
