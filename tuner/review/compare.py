"""``tuner compare``: several sweeps of one metric (or of the same objectives) side by side, in one figure and
one table.

For the same space under different schedulers or searchers: how fast each found its best (best so far
against trials and against epochs trained, which is what a GPU-hour buys) and where each ended. Sweeps of
several objectives are compared by their fronts, drawn together, and by the hypervolume against epochs
trained, every sweep measured up to one reference point (a tenth beyond the worst value any of them saw).
"""

from __future__ import annotations

import math
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.folder import spent
from tuner.folder.fates import family
from tuner.objectives import pick, sign
from tuner.value_types import Scalar
from tuner.values import number as _number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tuner.experiment import ExperimentRecord


def check_comparable(experiments: list[ExperimentRecord]) -> None:
    if len(experiments) < 2:
        raise UsageError("tuner compare needs at least two experiments")
    goals = {_goal(e) for e in experiments}
    if len(goals) > 1:
        shown = ", ".join(f"{e.config.name}: {_goal(e)}" for e in experiments)
        raise UsageError(
            f"the experiments optimise different things ({shown}); compare sweeps of the same objectives"
        )


def _goal(experiment: ExperimentRecord) -> str:
    return ", ".join(map(str, experiment.config.objectives))


def shared_reference(experiments: list[ExperimentRecord]) -> tuple[float, ...] | None:
    """One hypervolume reference point for every sweep compared: a tenth beyond the worst feasible value any
    of them saw on each objective, so that each sweep's hypervolume is measured in the same box."""
    from tuner.review.front import points, reference

    pooled = [p for e in experiments for p in points(e)]
    return reference(experiments[0], pooled)


def shared_reference_named(experiments: list[ExperimentRecord]) -> dict[str, float]:
    """``shared_reference`` by objective, each in its own sign (empty where no sweep has a feasible point)."""
    ref = shared_reference(experiments)
    objectives = experiments[0].config.objectives
    return {} if ref is None else {o.name: v * sign(o.mode) for o, v in zip(objectives, ref, strict=True)}


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
    """One row a sweep, the best first; with several objectives also its front's size and its hypervolume up
    to the shared reference (more is better)."""
    if experiments[0].config.several_objectives:  # the larger hypervolume first
        ref: tuple[float, ...] | None = shared_reference(experiments)
        towards, key = -1.0, "hypervolume"
    else:  # the best value first
        ref, towards, key = None, sign(experiments[0].mode), f"best_{experiments[0].metric}"
    rows: list[dict[str, Scalar]] = []
    for e in experiments:
        best = e.best_trial()
        reports = _reports(e)
        # the sweep's own count (spent.json) leaves out the time between a stop and its resume; the span of
        # its reports stands in for an experiment saved before it was kept
        wall = spent.read(e.path).wall or (reports[-1][0] - reports[0][0] if len(reports) > 1 else 0.0)
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
                **_front_cells(e, ref),
                "fates": "; ".join(f"{n} {f}" for f, n in fates.most_common()),
            }
        )
    return sorted(rows, key=lambda r: (r[key] is None, towards * float(r[key] or 0.0)))


def _front_cells(experiment: ExperimentRecord, ref: tuple[float, ...] | None) -> dict[str, Scalar]:
    if ref is None:
        return {}
    from tuner.review.front import front, hypervolume

    return {"front": len(front(experiment)), "hypervolume": float(f"{hypervolume(experiment, ref=ref):.4g}")}


def plot(experiments: list[ExperimentRecord], out: Path) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    if experiments[0].config.several_objectives:
        fig = _plot_fronts(experiments)
        out.parent.mkdir(parents=True, exist_ok=True)
        fig.savefig(out, dpi=110, bbox_inches="tight")
        plt.close(fig)
        return out

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


def _plot_fronts(experiments: list[ExperimentRecord]) -> Figure:
    """Left: each sweep's front on the first two objectives, together; right: each sweep's hypervolume against
    epochs trained, all up to one reference point."""
    import matplotlib.pyplot as plt

    from tuner.review.front import front, hypervolume_over_time

    objectives = experiments[0].config.objectives
    first, second = objectives[0], objectives[1]
    ref = shared_reference(experiments)
    fig, (fronts, volume) = plt.subplots(1, 2, figsize=(12, 4.5))
    for e in experiments:
        label = f"{e.config.name} ({e.config.scheduler}, {e.config.searcher})"
        found = front(e)
        xs = [p.values[first.name] for p in found]
        ys = [p.values[second.name] for p in found]
        (line,) = fronts.plot(xs, ys, marker="o", linestyle="-", drawstyle="steps-post", label=label)
        for p, x, y in zip(found, xs, ys, strict=True):
            fronts.annotate(p.trial.trial_id, (x, y), fontsize=7, color=line.get_color(),
                            xytext=(3, 3), textcoords="offset points")  # fmt: skip
        steps = hypervolume_over_time(e, ref) if ref is not None else []
        volume.step(range(1, len(steps) + 1), [hv for _, hv in steps], where="post", label=label)
    fronts.set_xlabel(f"{first.name} ({'lower' if first.mode == 'min' else 'higher'} is better)")
    fronts.set_ylabel(f"{second.name} ({'lower' if second.mode == 'min' else 'higher'} is better)")
    fronts.set_title("Each sweep's Pareto front")
    # the reference in each objective's own sign (as_min is its own inverse)
    up_to = (
        ", ".join(f"{o.name} {o.as_min(v):.4g}" for o, v in zip(objectives, ref, strict=True)) if ref else ""
    )
    volume.set_xlabel("epochs trained, all trials together")
    volume.set_ylabel("hypervolume (more is better)")
    volume.set_title(f"Hypervolume up to {up_to}" if up_to else "Hypervolume", fontsize=10)
    for ax in (fronts, volume):
        ax.grid(alpha=0.3)
    volume.legend(fontsize=8)
    return fig
