"""``tuner compare``'s figure (matplotlib): with one objective each sweep's best so far against trials and
against epochs trained; with several, each sweep's front and its hypervolume (tuner/review/findings.py picks).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tuner.objectives import pick
from tuner.review.running_best import improvements, running_best
from tuner.values import number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tuner.experiment import ExperimentRecord


def reports(experiment: ExperimentRecord, feasible_only: bool = False) -> list[tuple[float, float | None]]:
    """Every epoch's report in the order it arrived: (time, value of the metric); with ``feasible_only``, no value
    for a trial that breaks a constraint (its epochs still count: they were trained)."""
    out = []
    for trial in experiment.trials:
        counted = not (feasible_only and experiment.breaks(trial))
        for row in trial.rows:
            if row.get("timestamp"):
                value = number(row.get(experiment.metric)) if counted else None
                out.append((float(row["timestamp"]), value))
    return sorted(out, key=lambda r: r[0])


def best_so_far(experiments: list[ExperimentRecord]) -> Figure:
    """Left: each sweep's best so far against the trials in the order they were made; right: against epochs
    trained."""
    import matplotlib.pyplot as plt

    metric, mode = experiments[0].metric, experiments[0].mode
    better = pick(mode)
    # constrained layout keeps the right plot's axis label clear of the left plot
    fig, (by_trial, by_epoch) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
    most = trained = 0
    for e in experiments:
        label = f"{e.config.name} ({e.config.scheduler}, {e.config.searcher})"
        trials = sorted(
            (t for t in e.trials if t.best(metric, mode) is not None),
            key=lambda t: min(
                (float(r["timestamp"]) for r in t.rows if r.get("timestamp")), default=math.inf
            ),
        )
        so_far = running_best(e, trials)  # a trial that breaks a constraint is passed by, as in the report
        if trials and all(v is None for v in so_far):
            label += ": no trial within its constraints"
        most = max(most, len(so_far))
        drawn = [math.nan if v is None else v for v in so_far]
        line = by_trial.step(range(1, len(so_far) + 1), drawn, where="post", label=label)[0]
        line.set(marker="o", markersize=3, markevery=improvements(so_far))
        arrived = reports(e, feasible_only=True)  # every epoch trained, values only where they count
        trained = max(trained, len(arrived))
        epochs: list[int] = []
        best: list[float] = []
        for n, (_, reported) in enumerate(arrived, 1):
            if reported is None:
                continue
            best.append(reported if not best else better(best[-1], reported))
            epochs.append(n)
        line = by_epoch.step(epochs, best, where="post", label=label)[0]
        line.set(marker="o", markersize=3, markevery=improvements(best))
    from matplotlib.ticker import MaxNLocator

    by_trial.set_xlim(
        0.5, max(most, 1) + 0.5
    )  # every trial's place, those before the first within bounds too
    by_trial.xaxis.set_major_locator(MaxNLocator(integer=True))
    by_trial.set_xlabel("trials, in the order they were made")
    by_epoch.set_xlabel("epochs trained, all trials together")
    for ax in (by_trial, by_epoch):
        ax.set_ylabel(f"best {metric} so far")
        ax.grid(alpha=0.3)
    by_trial.set_title(f"Best {metric} so far against trials")
    by_epoch.set_title(f"Best {metric} so far against epochs trained")
    by_epoch.set_xlim(0, trained + max(1.0, trained / 50))  # a last step at the edge still shows
    by_epoch.xaxis.set_major_locator(MaxNLocator(integer=True))
    # below both plots, where it hides no line
    fig.legend(*by_trial.get_legend_handles_labels(), loc="outside lower center", fontsize=8, ncols=2)
    return fig


def fronts(experiments: list[ExperimentRecord]) -> Figure:
    """Left: each sweep's front on the first two objectives, together; right: each sweep's hypervolume against
    epochs trained, all up to one reference point."""
    import matplotlib.pyplot as plt

    from tuner.review.front import front, hypervolume_over_time, shared_reference

    objectives = experiments[0].config.objectives
    first, second = objectives[0], objectives[1]
    ref = shared_reference(experiments)
    fig, (fronts, volume) = plt.subplots(1, 2, figsize=(12, 4.5), layout="constrained")
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
