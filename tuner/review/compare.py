"""``tuner compare``: several sweeps of one metric side by side, in one figure and one table.

For the same space under different schedulers or searchers: how fast each found its best (best so far
against trials and against epochs trained, which is what a GPU-hour buys) and where each ended.
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.folder.fates import family
from tuner.objectives import pick, sign
from tuner.value_types import Scalar
from tuner.values import number as _number

if TYPE_CHECKING:
    from tuner.review.experiment import ExperimentRecord


def check_comparable(experiments: list[ExperimentRecord]) -> None:
    if len(experiments) < 2:
        raise UsageError("tuner compare needs at least two experiments")
    goals = {(e.metric, e.mode) for e in experiments}
    if len(goals) > 1:
        shown = ", ".join(f"{e.config.name}: {e.metric} ({e.mode})" for e in experiments)
        raise UsageError(f"the experiments optimise different things ({shown}); compare sweeps of one metric")


def _reports(experiment: ExperimentRecord) -> list[tuple[float, float | None]]:
    """Every epoch's report in the order it arrived: (time, value of the metric)."""
    out = []
    for trial in experiment.trials:
        for row in trial.rows:
            if row.get("timestamp"):
                value = _number(row.get(experiment.metric))
                out.append((float(row["timestamp"]), value))
    return sorted(out, key=lambda r: r[0])


def summary_rows(experiments: list[ExperimentRecord]) -> list[dict[str, Scalar]]:
    rows: list[dict[str, Scalar]] = []
    for e in experiments:
        best = e.best_trial()
        reports = _reports(e)
        wall = reports[-1][0] - reports[0][0] if len(reports) > 1 else 0.0
        fates = Counter(family(t.fate) for t in e.trials)
        rows.append(
            {
                "experiment": e.config.name,
                "scheduler": e.config.scheduler,
                "searcher": e.config.searcher,
                "trials": len(e.trials),
                f"best_{e.metric}": best.best(e.metric, e.mode) if best else None,
                "best_trial": best.trial_id if best else None,
                "epochs_trained": len(reports),
                "wall_s": round(wall, 1),
                "fates": "; ".join(f"{n} {f}" for f, n in fates.most_common()),
            }
        )
    towards, key = sign(experiments[0].mode), f"best_{experiments[0].metric}"
    return sorted(rows, key=lambda r: (r[key] is None, towards * (r[key] or 0.0)))


def plot(experiments: list[ExperimentRecord], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    metric, mode = experiments[0].metric, experiments[0].mode
    better = pick(mode)
    fig, (by_trial, by_epoch) = plt.subplots(1, 2, figsize=(12, 4.5))
    for e in experiments:
        label = f"{e.config.name} ({e.config.scheduler}, {e.config.searcher})"
        trials = sorted(
            (t for t in e.trials if t.best(metric, mode) is not None),
            key=lambda t: min(
                (float(r["timestamp"]) for r in t.rows if r.get("timestamp")), default=math.inf
            ),
        )
        so_far: list[float] = []
        for t in trials:
            value = t.scored(metric, mode)
            so_far.append(value if not so_far else better(so_far[-1], value))
        by_trial.step(range(1, len(so_far) + 1), so_far, where="post", label=label)
        epochs: list[int] = []
        best: list[float] = []
        for n, (_, reported) in enumerate(_reports(e), 1):
            if reported is None:
                continue
            best.append(reported if not best else better(best[-1], reported))
            epochs.append(n)
        by_epoch.step(epochs, best, where="post", label=label)
    by_trial.set_xlabel("trials, in the order they were made")
    by_epoch.set_xlabel("epochs trained, all trials together")
    for ax in (by_trial, by_epoch):
        ax.set_ylabel(f"best {metric} so far")
        ax.grid(alpha=0.3)
    by_trial.set_title(f"Best {metric} so far against trials")
    by_epoch.set_title(f"Best {metric} so far against epochs trained")
    by_epoch.legend(fontsize=8)
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return out
