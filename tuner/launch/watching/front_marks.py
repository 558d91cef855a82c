"""What the terminal shows of a sweep's objectives: with one, the best trial so far; with several, also the
front of the results so far, its trials marked in the live table in a column of their own, and the plan says
that the sweep looks for a front. ``marks`` picks one: the plan and the live table ask it, not the number of
objectives."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from tuner.launch.watching.table_cells import lookup, result_of
from tuner.objectives import Objective, as_point, reported

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

ON_FRONT = "●"  # the front's trials in the table


class OneBest:
    """One objective: the best trial, and no front (no trial has a point to place on one)."""

    headers: tuple[str, ...] = ()
    never = "never the best"  # what a trial that breaks a constraint is

    def plan_lines(self) -> list[str]:
        """What the plan says of the objectives before the sweep starts."""
        return []

    def point(self, trial: Trial, breaks: Callable[[Trial], bool]) -> list[float] | None:
        return None

    def cells(self, trial_id: str, on_front: set[str]) -> list[str]:
        return []

    def best_lines(
        self, front: list[Trial], best: str, value: float, metric: str, ranked: str, params: str
    ) -> list[str]:
        return [
            f"Best so far: trial {best}, {metric} {value:.4g} (trials ranked by their best {metric}, {ranked}); parameters={params}"
        ]


class Front(OneBest):
    """Several objectives: each trial's point at its last result, none for one that breaks a constraint, lacks
    an objective or failed; the front of those points is marked in the table and named above it."""

    headers = ("front",)
    never = "never the best or on the front"

    def __init__(self, objectives: tuple[Objective, ...]) -> None:
        self.objectives = objectives

    def plan_lines(self) -> list[str]:
        return [
            f"objectives: {', '.join(map(str, self.objectives))}: the sweep finds the Pareto front (the trials "
            f"no other beats on every one), saved as pareto.json; the best by {self.objectives[0].name} is kept "
            "as best_config.json"
        ]

    def point(self, trial: Trial, breaks: Callable[[Trial], bool]) -> list[float] | None:
        values = reported(
            self.objectives, {o.name: lookup(result_of(trial), o.name) for o in self.objectives}
        )
        if (
            values is None or breaks(trial) or trial.status == "ERROR"
        ):  # a crashed config is never recommended
            return None
        return list(as_point(self.objectives, values))

    def cells(self, trial_id: str, on_front: set[str]) -> list[str]:
        return [ON_FRONT if trial_id in on_front else ""]

    def best_lines(
        self, front: list[Trial], best: str, value: float, metric: str, ranked: str, params: str
    ) -> list[str]:
        return [
            f"Pareto front so far: {len(front)} trial(s) on {', '.join(map(str, self.objectives))}, "
            f"marked {ON_FRONT} in the table: {', '.join(t.trial_id for t in front)}",
            f"Rows ranked by each trial's best {metric}, {ranked}; best {metric}: trial {best}, {value:.4g}",
        ]


@lru_cache(maxsize=8)
def marks(objectives: Sequence[Objective]) -> OneBest:
    """The view of a sweep's objectives (the live table keeps the objectives, not this, so that it pickles as
    it did)."""
    return Front(tuple(objectives)) if len(objectives) > 1 else OneBest()
