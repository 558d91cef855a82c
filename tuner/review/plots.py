"""``tuner plot``: PNG figures of an experiment, each titled, its axes named in words, the best trial marked.

One figure per reported metric (its value per epoch for every trial, coloured by fate), the best value so
far over the trials, and one per parameter (each trial's best value against the parameter's value; a log
axis for values spanning a wide range, ticks at powers of two for widths and batch sizes).
"""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

from tuner.folder.fates import kind
from tuner.ray_compat.state_file import bookkeeping
from tuner.review.running_best import improvements, running_best
from tuner.review.vocabulary import BEST_COLOUR, FATE_COLOURS
from tuner.values import number as _number

if TYPE_CHECKING:
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

    from tuner.experiment import ExperimentRecord, TrialRecord

LOG_SPAN = 16  # positive values spanning this factor or more read better on a log axis
BEST = BEST_COLOUR


def reported_metrics(experiment: ExperimentRecord, diagnostics: bool = False) -> list[str]:
    """Numbers the trainable reported (the sweep's metric first), not Ray's bookkeeping, and not the run's
    diagnostics (tuner/spec.py ``DIAGNOSTICS``) unless ``diagnostics``."""
    from tuner.spec import DIAGNOSTICS

    names: dict[str, None] = {experiment.metric: None}
    decided: set[str] = set()  # each key weighed once, not at each of a large sweep's rows
    for trial in experiment.trials:
        for row in trial.rows:
            for key, value in row.items():
                if key in decided:
                    continue
                if not key or key == "epoch" or bookkeeping(key):
                    decided.add(key)
                elif _number(value) is not None:  # else a later row may hold a number under it
                    decided.add(key)
                    if diagnostics or key not in DIAGNOSTICS:
                        names.setdefault(key, None)
    return list(names)


def plot_experiment(
    experiment: ExperimentRecord, out_dir: Path, metrics: list[str] | None = None
) -> list[Path]:
    """Write the figures and return their paths."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    best = experiment.best_trial()
    for metric in metrics or reported_metrics(experiment):
        fig = _per_epoch(plt, experiment, metric, best)
        if fig is not None:
            written.append(_save(plt, fig, out_dir / f"{metric}_per_epoch.png"))
    fig = _best_so_far(plt, experiment)
    if fig is not None:
        written.append(_save(plt, fig, out_dir / f"best_{experiment.metric}_so_far.png"))
    for name in sorted({k for t in experiment.trials for k in t.config}):
        fig = _against_parameter(plt, experiment, name, best)
        if fig is not None:
            written.append(_save(plt, fig, out_dir / f"{name}_vs_best_{experiment.metric}.png"))
    return written


# ``plt`` below is matplotlib.pyplot, imported (with its Agg backend) by plot_experiment


def _save(plt: ModuleType, fig: Figure, path: Path) -> Path:
    fig.savefig(path, dpi=110, bbox_inches="tight")
    plt.close(fig)
    return path


def _per_epoch(
    plt: ModuleType, experiment: ExperimentRecord, metric: str, best: TrialRecord | None
) -> Figure | None:
    from matplotlib.ticker import MaxNLocator

    curves = [(t, t.curve(metric)) for t in experiment.trials]
    curves = [(t, c) for t, c in curves if c]
    if not curves:
        return None
    fig, ax = plt.subplots(figsize=(8, 5))
    labelled = set()
    for trial, points in sorted(curves, key=lambda tc: best is not None and tc[0].trial_id == best.trial_id):
        family = kind(trial.fate)
        is_best = best is not None and trial.trial_id == best.trial_id
        label = f"best trial ({trial.trial_id})" if is_best else (family if family not in labelled else None)
        labelled.add(family)
        ax.plot(
            [p[0] for p in points],
            [p[1] for p in points],
            marker="o",
            markersize=3,
            color=BEST if is_best else FATE_COLOURS[family],
            linewidth=2.8 if is_best else 1.2,
            alpha=1.0 if is_best else 0.7,
            label=label,
            zorder=3 if is_best else 2,
        )
    ax.set_xlabel("epoch")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.set_ylabel(metric)
    ax.set_title(f"{metric} per epoch, every trial ({experiment.config.scheduler}; stopped trials end early)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _best_so_far(plt: ModuleType, experiment: ExperimentRecord) -> Figure | None:
    metric, mode = experiment.metric, experiment.mode
    trials = [t for t in experiment.trials if t.best(metric, mode) is not None]
    if not trials:
        return None
    trials.sort(
        key=lambda t: min((float(r["timestamp"]) for r in t.rows if r.get("timestamp")), default=math.inf)
    )
    # a trial that breaks a bound is never the best: the line passes it by, and it is drawn as a cross
    counts = [not experiment.breaks(t) for t in trials]
    so_far = running_best(experiment, trials)
    values = [t.scored(metric, mode) for t in trials]
    fig, ax = plt.subplots(figsize=(8, 4.5))
    xs = list(range(1, len(trials) + 1))
    for kept, label, marker in (
        (True, "each trial's best", "o"),
        (False, "breaks a constraint (never the best)", "x"),
    ):
        shown = [k for k, counted in enumerate(counts) if counted is kept]
        if shown:
            ax.scatter([xs[k] for k in shown], [values[k] for k in shown], s=14, color="#9a9a9a", marker=marker,
                       label=label)  # fmt: skip
    line = [math.nan if v is None else v for v in so_far]
    if any(v is not None for v in so_far):  # each step to a better value marked: a line of one point shows
        ax.step(xs, line, where="post", color=BEST, linewidth=2, marker="o", markersize=4,
                markevery=improvements(line), label="best so far")  # fmt: skip
    else:
        ax.text(0.5, 0.95, "no trial within the constraints: no best", transform=ax.transAxes, ha="center")
    ax.set_xlabel("trials, in the order they were made")
    ax.set_ylabel(f"best {metric}")
    ax.set_title(f"Best {metric} so far over the sweep ({experiment.config.searcher} search)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    return fig


def _against_parameter(
    plt: ModuleType, experiment: ExperimentRecord, name: str, best: TrialRecord | None
) -> Figure | None:
    metric, mode = experiment.metric, experiment.mode
    points = [
        (t.config.get(name), t.best(metric, mode), t)
        for t in experiment.trials
        if t.best(metric, mode) is not None
    ]
    if not points:
        return None
    fig, ax = plt.subplots(figsize=(6, 4))
    xs = [p[0] for p in points]
    numeric = all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in xs)
    if not numeric:  # labels: one column each, in a fixed order
        labels = sorted({str(x) for x in xs})
        xs = [labels.index(str(x)) for x in xs]
        ax.set_xticks(range(len(labels)), labels)
    families = [kind(p[2].fate) for p in points]
    for family in sorted(set(families)):  # one legend entry a fate; a stopped trial's best is an early one
        chosen = [i for i, f in enumerate(families) if f == family]
        stopped = family == "stopped early"
        ax.scatter(
            [xs[i] for i in chosen],
            [points[i][1] for i in chosen],
            s=22,
            alpha=0.8,
            label=f"{family} (its best before it stopped)" if stopped else family,
            facecolors="none" if stopped else FATE_COLOURS[family],
            edgecolors=FATE_COLOURS[family],
        )
    for x, (_, y, trial) in zip(xs, points, strict=True):
        if best is not None and trial.trial_id == best.trial_id:
            ax.scatter(
                [x], [y], marker="*", s=220, color=BEST, zorder=3, label=f"best trial ({trial.trial_id})"
            )
    ax.legend(fontsize=8)
    if numeric:
        _scale_axis(ax, [float(x) for x in xs if isinstance(x, (int, float))])  # numeric: every one a number
    ax.set_xlabel(name)
    ax.set_ylabel(f"best {metric} over the trial")
    ax.set_title(f"{name} against each trial's best {metric}")
    ax.grid(alpha=0.3)
    return fig


def _scale_axis(ax: Axes, xs: list[float]) -> None:
    """A log axis for a wide positive range; ticks at the powers of two when every value is one."""
    from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

    if min(xs) <= 0 or max(xs) / min(xs) < LOG_SPAN:
        return
    powers = all(float(x).is_integer() and int(x) > 0 and int(x) & (int(x) - 1) == 0 for x in xs)
    ax.set_xscale("log", base=2 if powers else 10)
    if powers:
        ticks = [2**k for k in range(int(math.log2(min(xs))), int(math.log2(max(xs))) + 1)]
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.xaxis.set_minor_locator(NullLocator())
