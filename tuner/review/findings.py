"""What a sweep found, as every review shows it: with one objective the best trial by its value; with several,
the Pareto front of the trials beside it. ``of`` picks which, and is the only place the review asks how many
objectives a sweep has (the live table's is tuner/launch/watching/front_marks.py): what differs between the
two is said here, one method each, and the views ask it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.objectives import Objective, sign
from tuner.value_types import Scalar
from tuner.values import number

if TYPE_CHECKING:
    import pandas as pd
    import plotly.graph_objects as go
    from matplotlib.figure import Figure

    from tuner.experiment import ExperimentRecord
    from tuner.folder.summary import Summary
    from tuner.review.front import Point

Cells = Callable[["ExperimentRecord"], dict[str, Scalar]]


class Best:
    """One objective: the best trial by its value, and no front."""

    def __init__(self, experiment: ExperimentRecord) -> None:
        self.experiment = experiment

    def on_front(self) -> set[str] | None:
        """The trials on the front: none, where there is no front to be on."""
        return None

    def settle(self, summary: Summary) -> None:
        """What the end-of-sweep summary says beside the best trial (``Summary.found``): under constraints,
        how many trials broke one."""
        bounds = self.experiment.config.constraints
        if bounds:
            summary.infeasible = sum(1 for t in self.experiment.trials if self.experiment.breaks(t))
            summary.found.record = {"infeasible": summary.infeasible, "constraints": list(bounds)}
            summary.found.after = [
                f"constraints: {', '.join(bounds)}; {summary.infeasible} trial(s) broke one and are never the best"
            ]

    def sections(self) -> list[tuple[str, str, str]]:
        """The report's sections before the best trial's (key, title, HTML)."""
        return []

    def best_title(self) -> str:
        """The report's title over the best trial; under constraints it says so, as one that breaks a bound is
        never the best."""
        return "The best trial" + self._within()

    def _within(self) -> str:
        return " that meets every constraint" if self.experiment.config.constraints else ""

    def heading(self, objective: Objective) -> str:
        """The heading over one objective's part of a section that has a part per objective."""
        return ""

    def weighed(self) -> list[Point]:
        """The trials ``tuner export --weights`` chooses among."""
        names = [o.name for o in self.experiment.config.objectives]
        raise UsageError(
            f"--weights chooses among several objectives; {self.experiment.path} has one ({names[0]})"
        )

    def frame(self, columns: list[str], named: dict[str, str]) -> pd.DataFrame:
        """``Experiment.pareto``: the front has one dimension, the best trial at its best epoch."""
        import pandas as pd

        record = self.experiment
        best = record.best_trial()
        if best is None:
            return pd.DataFrame([], columns=columns)
        row = best.best_row(record.metric, record.mode) or {}
        epoch = number(row.get("training_iteration"))
        return pd.DataFrame(
            [
                {
                    "trial_id": best.trial_id,
                    record.metric: best.best(record.metric, record.mode),
                    "epoch": None if epoch is None else int(epoch),
                    **{column: best.config.get(k) for k, column in named.items()},
                    "fate": best.fate,
                }
            ],
            columns=columns,
        )

    # --- several sweeps of the same objectives, this one the first --------------------------------------
    def ranking(self, experiments: list[ExperimentRecord]) -> tuple[str, float, Cells]:
        """How ``tuner compare`` orders its rows (the column, its direction) and what each row adds."""
        return f"best_{self.experiment.metric}", sign(self.experiment.mode), lambda e: {}

    def figure(self, experiments: list[ExperimentRecord]) -> Figure:
        from tuner.review import compare_figures

        return compare_figures.best_so_far(experiments)

    def chart(self, records: list[ExperimentRecord], names: list[str]) -> go.Figure:
        from tuner.review.board import charts

        return charts.chart(records, names)

    def reference(self, experiments: list[ExperimentRecord]) -> dict[str, float]:
        """The one point every sweep's hypervolume is measured up to, by objective: none without a front."""
        return {}


class Front(Best):
    """Several objectives: the front of the trials, and the best trial by the first objective beside it."""

    def on_front(self) -> set[str] | None:
        from tuner.review.front import front

        return {p.trial.trial_id for p in front(self.experiment)}

    def settle(self, summary: Summary) -> None:
        from tuner.review import front

        written = front.write(self.experiment)
        summary.infeasible = written["infeasible"]  # of the trials with a point on every objective
        # the front first, and it says what broke a constraint: none is on it
        summary.found.record = {"pareto": written}
        summary.found.before = front.format_front(written, summary.experiment)
        summary.found.best_is = f"by {summary.metric}, the first objective"

    def sections(self) -> list[tuple[str, str, str]]:
        """The trade-off first: there is no one best trial."""
        from tuner.review.report import front_panel

        return [("front", front_panel.title(self.experiment), front_panel.section(self.experiment))]

    def best_title(self) -> str:
        return f"The best trial by {self.experiment.metric}{self._within()}"

    def heading(self, objective: Objective) -> str:
        import html

        return f"<h3>For {html.escape(str(objective))}</h3>"

    def weighed(self) -> list[Point]:
        from tuner.review.front import front

        return front(self.experiment)

    def frame(self, columns: list[str], named: dict[str, str]) -> pd.DataFrame:
        import pandas as pd

        from tuner.review.front import front

        rows = [
            {
                "trial_id": p.trial.trial_id,
                **p.values,
                "epoch": p.epoch,
                **{column: p.trial.config.get(k) for k, column in named.items()},
                "fate": p.trial.fate,
            }
            for p in front(self.experiment)
        ]
        return pd.DataFrame(rows, columns=columns)

    def ranking(self, experiments: list[ExperimentRecord]) -> tuple[str, float, Cells]:
        """The larger hypervolume first, every sweep's measured up to one reference point."""
        from tuner.review.front import front, hypervolume, shared_reference

        ref = shared_reference(experiments)

        def cells(e: ExperimentRecord) -> dict[str, Scalar]:
            return {"front": len(front(e)), "hypervolume": float(f"{hypervolume(e, ref=ref):.4g}")}

        return "hypervolume", -1.0, cells

    def figure(self, experiments: list[ExperimentRecord]) -> Figure:
        from tuner.review import compare_figures

        return compare_figures.fronts(experiments)

    def chart(self, records: list[ExperimentRecord], names: list[str]) -> go.Figure:
        from tuner.review.board import charts

        return charts.fronts_chart(records, names)

    def reference(self, experiments: list[ExperimentRecord]) -> dict[str, float]:
        from tuner.review.front import shared_reference_named

        return shared_reference_named(experiments)


def of(experiment: ExperimentRecord) -> Best:
    """The outcome of this sweep: the one place the review asks how many objectives it has."""
    return Front(experiment) if len(experiment.config.objectives) > 1 else Best(experiment)
