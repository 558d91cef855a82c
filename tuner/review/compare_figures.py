"""``tuner compare``'s figure (matplotlib): with one objective each sweep's best so far against trials and
against epochs trained; with several, each sweep's front and its hypervolume (tuner/review/findings.py picks).
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

from tuner.objectives import pick
from tuner.values import number

if TYPE_CHECKING:
    from matplotlib.figure import Figure

    from tuner.experiment import ExperimentRecord


def reports(experiment: ExperimentRecord) -> list[tuple[float, float | None]]:
    """Every epoch's report in the order it arrived: (time, value of the metric)."""
    out = []
    for trial in experiment.trials:
        for row in trial.rows:
            if row.get("timestamp"):
                value = number(row.get(experiment.metric))
                out.append((float(row["timestamp"]), value))
    return sorted(out, key=lambda r: r[0])


def best_so_far(experiments: list[ExperimentRecord]) -> Figure:
    """Left: each sweep's best so far against the trials in the order they were made; right: against epochs
    trained."""
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
        for n, (_, reported) in enumerate(reports(e), 1):
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
    return fig


def fronts(experiments: list[ExperimentRecord]) -> Figure:
    """Left: each sweep's front on the first two objectives, together; right: each sweep's hypervolume against
    epochs trained, all up to one reference point."""
    import matplotlib.pyplot as plt

    from tuner.review.front import front, hypervolume_over_time, shared_reference

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
