"""The report's parameter views: parallel coordinates in real units, and importance on like-for-like values.

Parallel coordinates are drawn as ordinary lines (no WebGL, so they render in any browser, headless ones
included): a log-scale parameter on a log axis labelled in its values, a choice as its categories (a batch
size shows 2, 4, 8, 16 and nothing between), the fate as an axis of its own, and the metric last. Importance
compares trials at one epoch that enough of them reached, since under early stopping a trial's best is often
an epoch-1 value; each parameter's direction says which way it helps.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from tuner.experiment import Experiment, TrialRecord
from tuner.fates import kind
from tuner.vocabulary import BEST_COLOUR, show

LOG_SPAN = 16
MAX_CATEGORIES = 8


@dataclass
class Axis:
    """One vertical axis: where each trial sits on it (0..1) and the ticks that say what the places mean."""

    label: str
    positions: list[float]
    ticks: list[tuple[float, str]]


def axis_for(label: str, values: list[Any]) -> Axis:
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    distinct = sorted({show(v) for v in values}, key=lambda t: _sort_key(t, values))
    if len(numbers) == len(values) and numbers:
        low, high = min(numbers), max(numbers)
        unique = sorted(set(numbers))
        if (len(unique) <= MAX_CATEGORIES and all(float(v).is_integer() for v in unique)) or len(unique) <= 4:
            return _categories(label, [show(v) for v in values], [show(v) for v in unique])
        if low > 0 and high / low >= LOG_SPAN:
            lo, hi = math.log10(low), math.log10(high)
            place = [(math.log10(v) - lo) / (hi - lo) for v in numbers]
            marks = [10.0**e for e in range(math.floor(lo), math.ceil(hi) + 1) if lo <= e <= hi]
            marks = marks if len(marks) >= 2 else [low, high]
            return Axis(f"{label} (log)", place, [((math.log10(m) - lo) / (hi - lo), f"{m:g}") for m in marks])
        span = (high - low) or 1.0
        place = [(v - low) / span for v in numbers]
        return Axis(label, place, [(i / 4, f"{low + span * i / 4:.3g}") for i in range(5)])
    return _categories(label, [show(v) for v in values], distinct)


def _categories(label: str, shown: list[str], order: list[str]) -> Axis:
    step = 1.0 / max(len(order) - 1, 1)
    where = {name: i * step if len(order) > 1 else 0.5 for i, name in enumerate(order)}
    return Axis(label, [where[s] for s in shown], [(where[name], name) for name in order])


def _sort_key(text: str, values: list[Any]) -> tuple[int, Any]:
    try:
        return 0, float(text)
    except ValueError:
        return 1, text


def parallel(experiment: Experiment, trials: list[TrialRecord]) -> Any:
    """Parameters, fate and best metric as parallel axes, one line a trial coloured by its best value."""
    import plotly.colors
    import plotly.graph_objects as go

    metric, mode = experiment.metric, experiment.mode
    if len(trials) < 2:
        return None
    axes = []
    for name in sorted({k for t in trials for k in t.config}):
        values = [t.config.get(name) for t in trials]
        if len({show(v) for v in values}) > 1:
            axes.append(axis_for(name, values))
    axes.append(_categories("fate", [kind(t.fate) for t in trials], sorted({kind(t.fate) for t in trials})))
    scores = [t.best(metric, mode) for t in trials]
    axes.append(axis_for(f"best {metric}", scores))
    low, high = min(scores), max(scores)
    best = experiment.best_trial()
    fig = go.Figure()
    for i, trial in enumerate(trials):
        share = (scores[i] - low) / ((high - low) or 1.0)
        colour = plotly.colors.sample_colorscale("Viridis", [1 - share if mode == "min" else share])[0]
        is_best = best is not None and trial.trial_id == best.trial_id
        fig.add_trace(go.Scatter(x=list(range(len(axes))), y=[a.positions[i] for a in axes], mode="lines",
                                 line={"color": BEST_COLOUR if is_best else colour, "width": 4 if is_best else 1.5},
                                 opacity=1.0 if is_best else 0.7, showlegend=False, hoverinfo="text",
                                 hovertext=f"{trial.trial_id}: best {metric} {scores[i]:.4g}; {trial.fate}"))  # fmt: skip
    for x, axis in enumerate(axes):
        fig.add_shape(type="line", x0=x, x1=x, y0=0, y1=1, line={"color": "#555", "width": 1})
        fig.add_annotation(x=x, y=1.08, text=f"<b>{axis.label}</b>", showarrow=False)
        for y, text in axis.ticks:
            fig.add_annotation(x=x, y=y, text=text, showarrow=False, xanchor="left", xshift=4, font={"size": 10})
    fig.update_xaxes(visible=False, range=[-0.3, len(axes) - 0.5])
    fig.update_yaxes(visible=False, range=[-0.05, 1.15])
    fig.update_layout(height=440, margin={"t": 30, "l": 20, "r": 20}, plot_bgcolor="white")
    return fig


def comparison_epoch(experiment: Experiment, trials: list[TrialRecord]) -> tuple[int, list[TrialRecord]]:
    """The last epoch that at least half the trials (and at least 4) reached, and those trials: importance
    compares every trial at the same point of training."""
    need = max(4, math.ceil(len(trials) / 2))
    epochs = sorted({e for t in trials for e, _ in t.curve(experiment.metric)}, reverse=True)
    for epoch in epochs:
        reached = [t for t in trials if any(e == epoch for e, _ in t.curve(experiment.metric))]
        if len(reached) >= need:
            return epoch, reached
    return 0, []


def value_at(trial: TrialRecord, metric: str, epoch: int) -> float:
    return next(v for e, v in trial.curve(metric) if e == epoch)


def importance(experiment: Experiment, trials: list[TrialRecord]) -> tuple[dict[str, float], int, int] | None:
    """fANOVA importance (Optuna's evaluator) of each varying parameter for the metric at the comparison
    epoch, with that epoch and how many trials reached it; None with fewer than 4 or nothing varying."""
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    epoch, reached = comparison_epoch(experiment, trials)
    names = [n for n in sorted({k for t in reached for k in t.config}) if len({show(t.config.get(n)) for t in reached}) > 1]
    if len(reached) < 4 or not names:
        return None
    distributions = {}
    for name in names:
        values = [t.config.get(name) for t in reached]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            low, high = float(min(values)), float(max(values))
            distributions[name] = FloatDistribution(low, high, log=low > 0 and high / low >= LOG_SPAN)
        else:
            distributions[name] = CategoricalDistribution(sorted({show(v) for v in values}))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize" if experiment.mode == "min" else "maximize")
    for t in reached:
        params = {n: (float(t.config[n]) if isinstance(distributions[n], FloatDistribution) else show(t.config[n]))
                  for n in names}  # fmt: skip
        study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                  value=value_at(t, experiment.metric, epoch)))  # fmt: skip
    scores = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    return scores, epoch, len(reached)


def direction(experiment: Experiment, trials: list[TrialRecord], name: str, epoch: int) -> str:
    """Which way a parameter helps at the comparison epoch: for a number, the sign of its rank correlation
    with the metric; for a choice, the option with the best mean."""
    metric, mode = experiment.metric, experiment.mode
    pairs = [(t.config.get(name), value_at(t, metric, epoch)) for t in trials]
    numbers = [(v, m) for v, m in pairs if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == len(pairs) and len({v for v, _ in numbers}) > 1:
        rho = _spearman([v for v, _ in numbers], [m for _, m in numbers])
        if abs(rho) < 0.2:
            return "no clear direction"
        better = (rho < 0) == (mode == "min")
        return f"higher is {'better' if better else 'worse'} (rank correlation {rho:+.2f})"
    means: dict[str, list[float]] = {}
    for v, m in pairs:
        means.setdefault(show(v), []).append(m)
    pick = min if mode == "min" else max
    top = pick(means, key=lambda k: sum(means[k]) / len(means[k]))
    return f"best with {top}"


def _spearman(xs: list[float], ys: list[float]) -> float:
    from scipy.stats import spearmanr

    rho = spearmanr(xs, ys).statistic
    return 0.0 if rho != rho else float(rho)  # NaN when one side is constant
