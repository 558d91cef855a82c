"""What a sweep spent (``spent.json``, and the driver's running count beside the experiment while it runs).

The budget guard (tuner/launch/guards/budget.py) counts and writes it; resume, the summary and the review read
it. A kill -9 loses the driver's last seconds, not the count: the larger of the two files stands.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields

from tuner import storage
from tuner.folder.names import SPENT_FILE, SPENT_SIDECAR


@dataclass
class Spent:
    """Wall time (seconds, from the first trial's start), epochs in all, GPU-hours, whether the budget ended
    the sweep, and the most trials seen running at once (what a replay of the sweep runs with)."""

    wall: float = 0.0
    epochs: int = 0
    gpu_hours: float = 0.0
    ended_by_budget: bool = False
    at_once: int = 0

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
        )

    def larger(self, other: Spent) -> Spent:
        return Spent(
            max(self.wall, other.wall),
            max(self.epochs, other.epochs),
            max(self.gpu_hours, other.gpu_hours),
            self.ended_by_budget or other.ended_by_budget,
            max(self.at_once, other.at_once),
        )

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
