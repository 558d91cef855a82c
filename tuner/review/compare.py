"""``tuner compare``: several sweeps of one metric (or of the same objectives) side by side, in one figure and
one table.

For the same space under different schedulers or searchers: how fast each found its best (best so far
against trials and against epochs trained, which is what a GPU-hour buys) and where each ended. Sweeps of
several objectives are compared by their fronts, drawn together, and by the hypervolume against epochs
trained, every sweep measured up to one reference point (a tenth beyond the worst value any of them saw).
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.folder import spent
from tuner.folder.fates import family
from tuner.review import findings
from tuner.review.compare_figures import reports
from tuner.value_types import Scalar

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord


def check_comparable(experiments: list[ExperimentRecord]) -> None:
    if len(experiments) < 2:
        raise UsageError("a comparison needs at least two experiments")
    goals = {_goal(e) for e in experiments}
    if len(goals) > 1:
        shown = ", ".join(f"{e.config.name}: {_goal(e)}" for e in experiments)
        raise UsageError(
            f"the experiments optimise different things ({shown}); compare sweeps of the same objectives"
        )


def _goal(experiment: ExperimentRecord) -> str:
    return ", ".join(map(str, experiment.config.objectives))


def summary_rows(experiments: list[ExperimentRecord]) -> list[dict[str, Scalar]]:
    """One row a sweep, the best first; with several objectives also its front's size and its hypervolume up
    to the shared reference (more is better)."""
    key, towards, more = findings.of(experiments[0]).ranking(experiments)
    rows: list[dict[str, Scalar]] = []
    for e in experiments:
        best = e.best_trial()
        arrived = reports(e)
        # the sweep's own count (spent.json) leaves out the time between a stop and its resume; the span of
        # its reports stands in for an experiment saved before it was kept
        wall = spent.read(e.path).wall or (arrived[-1][0] - arrived[0][0] if len(arrived) > 1 else 0.0)
        fates = Counter(family(t.fate) for t in e.trials)
        rows.append(
            {
                "experiment": e.config.name,
                "scheduler": e.config.scheduler,
                "searcher": e.config.searcher,
                "trials": len(e.trials),
                f"best_{e.metric}": best.best(e.metric, e.mode) if best else None,
                "best_trial": best.trial_id if best else None,
                "epochs_trained": len(arrived),
                "wall_s": round(wall, 1),
                **more(e),
                "fates": "; ".join(f"{n} {f}" for f, n in fates.most_common()),
            }
        )
    return sorted(rows, key=lambda r: (r[key] is None, towards * float(r[key] or 0.0)))


def plot(experiments: list[ExperimentRecord], out: Path) -> Path:
    """The figure, saved to ``out``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig = findings.of(experiments[0]).figure(experiments)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return out
