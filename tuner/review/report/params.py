"""The report's parameter views: parallel coordinates in real units, and importance on like-for-like values.

Parallel coordinates are drawn as ordinary lines (no WebGL, so they render in any browser, headless ones
included), each parameter on an axis in its own units (tuner/review/report/axes.py: a batch size shows 2, 4, 8,
16 and nothing between), the fate as an axis of its own, and the metric last. Importance compares trials at one
epoch that enough of them reached, since under early stopping a trial's best is often
an epoch-1 value; each parameter's direction says which way it helps.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, NamedTuple, cast

from tuner.folder.fates import kind
from tuner.objectives import Objective, pick
from tuner.review.experiment import ExperimentRecord, TrialRecord
from tuner.review.report.axes import LOG_SPAN, axis_for, categories
from tuner.review.vocabulary import BEST_COLOUR, show

if TYPE_CHECKING:
    import numpy as np
    import plotly.graph_objects as go

IMPORTANCE_FIT_AT_MOST = 500  # trials the forest is fitted to: its cost grows faster than the trials


def parallel(experiment: ExperimentRecord, trials: list[TrialRecord]) -> go.Figure | None:
    """Parameters, fate and best metric as parallel axes, one line a trial coloured by its best value; with
    several objectives, each other objective's last value as an axis of its own (as the front takes it)."""
    import plotly.graph_objects as go

    metric, mode = experiment.metric, experiment.mode
    if len(trials) < 2:
        return None
    axes = []
    for name in sorted({k for t in trials for k in t.config}):
        values = [t.config.get(name) for t in trials]
        if len({show(v) for v in values}) > 1:
            axes.append(axis_for(name, values))
    scores = [t.scored(metric, mode) for t in trials]
    fates = [kind(t.fate) for t in trials]
    if (
        len(set(fates)) > 1
    ):  # each fate a band, its trials spread inside it by their score, so lines stay apart
        fate_axis = categories("fate", fates, sorted(set(fates)))
        rank = {i: r for r, i in enumerate(sorted(range(len(trials)), key=lambda i: scores[i]))}
        band = 0.6 / max(len(set(fates)), 2)

        def inside(p: float) -> float:  # the bands kept within the axis
            return band / 2 + p * (1 - band)

        fate_axis.positions = [
            inside(p) + band * (rank[i] / max(len(trials) - 1, 1) - 0.5)
            for i, p in enumerate(fate_axis.positions)
        ]
        fate_axis.ticks = [(inside(p), text) for p, text in fate_axis.ticks]
        axes.append(fate_axis)
    axes.append(axis_for(f"best {metric} (any epoch)", scores, choices=False))
    for other in experiment.config.objective_list[1:]:
        lasts = [t.last_reported(other.name) for t in trials]
        if all(v is not None for v in lasts):
            better = "lower" if other.mode == "min" else "higher"
            axes.append(axis_for(f"last {other.name} ({better} is better)", lasts, choices=False))
    low, high = min(scores), max(scores)
    best = experiment.best_trial()
    fig = go.Figure()

    def share_of(i: int) -> float:  # where on the colour scale: 1 at the best end
        share = (scores[i] - low) / ((high - low) or 1.0)
        return 1 - share if mode == "min" else share

    drawn, faint = _lines_drawn(experiment, trials)
    _faint_lines(fig, [[a.positions[i] for a in axes] for i in faint], [share_of(i) for i in faint])
    # lines, axes and labels each added in one step: plotly checks each once, where adding one by one copies
    # all that came before every time
    lines = []
    for i in drawn:
        trial = trials[i]
        colour = _viridis(share_of(i))
        is_best = best is not None and trial.trial_id == best.trial_id
        lines.append(
            {
                "type": "scatter",
                "x": list(range(len(axes))),
                "y": [a.positions[i] for a in axes],
                "mode": "lines",
                "line": {"color": BEST_COLOUR if is_best else colour, "width": 4 if is_best else 1.5},
                "opacity": 1.0 if is_best else 0.7,
                "showlegend": False,
                "hoverinfo": "text",
                "hovertext": f"{trial.trial_id}: best {metric} {scores[i]:.4g}; {trial.fate}",
            }
        )
    fig.add_traces(lines)
    shapes, labels = [], []
    for x, axis in enumerate(axes):
        shapes.append(
            {
                "type": "line",
                "x0": x,
                "x1": x,
                "y0": 0,
                "y1": 1,
                "line": {"color": "#555", "width": 1},
                "layer": "above",
            }
        )
        labels.append({"x": x, "y": 1.08, "text": f"<b>{axis.label}</b>", "showarrow": False})
        labels += [
            {"x": x, "y": y, "text": text, "showarrow": False, "xanchor": "left", "xshift": 4, "font": {"size": 10},
             "bgcolor": "rgba(255,255,255,0.85)"}
            for y, text in axis.ticks
        ]  # fmt: skip
    fig.update_layout(shapes=shapes, annotations=labels)
    key = "Viridis_r" if mode == "min" else "Viridis"  # the best end of the scale is yellow either way
    fig.add_trace(
        go.Scatter(
            x=[None],
            y=[None],
            mode="markers",
            showlegend=False,
            hoverinfo="skip",
            marker={
                "colorscale": key,
                "cmin": low,
                "cmax": high,
                "color": [low],
                "showscale": True,
                "colorbar": {"title": f"best {metric}", "thickness": 12},
            },
        )
    )
    fig.update_xaxes(visible=False, range=[-0.3, len(axes) - 0.5])
    fig.update_yaxes(visible=False, range=[-0.05, 1.15])
    fig.update_layout(height=440, margin={"t": 30, "l": 20, "r": 20}, plot_bgcolor="white")
    return fig


def _lines_drawn(experiment: ExperimentRecord, trials: list[TrialRecord]) -> tuple[list[int], list[int]]:
    """Indices into ``trials`` of the lines drawn one by one (with a hover) and of those drawn faint: every
    trial up to ``detail.IN_DETAIL``; above, the best ones, and a sample of the rest."""
    from tuner.review.report import detail

    detailed, rest = detail.split(experiment)
    index = {t.trial_id: i for i, t in enumerate(trials)}
    one_by_one = [index[t.trial_id] for t in detailed if t.trial_id in index]
    sampled = detail.sample([t for t in rest if t.trial_id in index])
    return one_by_one, [index[t.trial_id] for t in sampled]


def _viridis(share: float) -> str:
    """The colour at ``share`` (0..1) of the Viridis scale. Given by its colours, not its name: looking a
    scale up by name lists every named scale first, a few milliseconds each line drawn."""
    import plotly.colors

    return str(plotly.colors.sample_colorscale(plotly.colors.sequential.Viridis, [share])[0])


def _faint_lines(fig: go.Figure, lines: list[list[float]], shares: list[float], bins: int = 8) -> None:
    """Many lines in a few traces (one per band of the colour scale, lines apart by a gap), thin and without
    a hover: a thousand lines cost a thousand points an axis, not a thousand traces."""
    import plotly.graph_objects as go

    groups: dict[int, tuple[list[float | None], list[float | None]]] = {}
    for line, share in zip(lines, shares, strict=True):
        xs, ys = groups.setdefault(min(int(share * bins), bins - 1), ([], []))
        xs += [*range(len(line)), None]
        ys += [*(round(y, 4) for y in line), None]
    for band, (xs, ys) in sorted(groups.items()):
        colour = _viridis((band + 0.5) / bins)
        fig.add_trace(
            go.Scatter(x=xs, y=ys, mode="lines", line={"color": colour, "width": 0.8}, opacity=0.35,
                       showlegend=False, hoverinfo="skip")
        )  # fmt: skip


def comparison_epoch(
    experiment: ExperimentRecord, trials: list[TrialRecord], objective: Objective | None = None
) -> tuple[int, list[TrialRecord]]:
    """The last epoch that at least half the trials (and at least 4) reported ``objective`` at (default: the
    first), and those trials: importance compares every trial at the same point of training."""
    metric = (objective or experiment.config.objective).name
    need = max(4, math.ceil(len(trials) / 2))
    epochs = sorted({e for t in trials for e, _ in t.curve(metric)}, reverse=True)
    for epoch in epochs:
        reached = [t for t in trials if any(e == epoch for e, _ in t.curve(metric))]
        if len(reached) >= need:
            return epoch, reached
    return 0, []


def value_at(trial: TrialRecord, metric: str, epoch: int) -> float:
    return next(v for e, v in trial.curve(metric) if e == epoch)


class Importance(NamedTuple):
    """Each varying parameter's share of the variance, at which epoch, how many trials reached it and how
    many of those the forest was fitted to (0: one parameter varied, and its share is all of it)."""

    scores: dict[str, float]
    epoch: int
    reached: int
    fitted: int


def importance(
    experiment: ExperimentRecord, trials: list[TrialRecord], objective: Objective | None = None
) -> Importance | None:
    """fANOVA importance (Optuna's evaluator) of each varying parameter for ``objective`` (default: the
    first) at the comparison epoch; None with fewer than 4 trials there or nothing varying. On a large sweep
    the forest is fitted to a seeded sample of ``IMPORTANCE_FIT_AT_MOST`` of them: its cost grows faster than
    the trials, and a few hundred rank the parameters about as steadily as thousands. With one varying
    parameter there is nothing to split: its share is all of it, and no forest is fitted (seconds on a large
    sweep, for the answer the normalised shares give anyway)."""
    objective = objective or experiment.config.objective
    epoch, reached = comparison_epoch(experiment, trials, objective)
    names = [
        n
        for n in sorted({k for t in reached for k in t.config})
        if len({show(t.config.get(n)) for t in reached}) > 1
    ]
    if len(reached) < 4 or not names:
        return None
    if len(names) == 1:
        return Importance({names[0]: 1.0}, epoch, len(reached), 0)
    import optuna
    from optuna.distributions import BaseDistribution, CategoricalDistribution, FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    distributions: dict[str, BaseDistribution] = {}
    for name in names:
        values = [t.config.get(name) for t in reached]
        numbers = [float(v) for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if len(numbers) == len(values):
            low, high = min(numbers), max(numbers)
            distributions[name] = FloatDistribution(low, high, log=low > 0 and high / low >= LOG_SPAN)
        else:
            distributions[name] = CategoricalDistribution(sorted({show(v) for v in values}))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize" if objective.mode == "min" else "maximize")
    fitted = reached
    if len(reached) > IMPORTANCE_FIT_AT_MOST:
        import random

        fitted = random.Random(0).sample(reached, IMPORTANCE_FIT_AT_MOST)
    for t in fitted:
        params = {
            # a parameter under a FloatDistribution is a number in every trial (above)
            n: (
                float(cast(float, t.config[n]))
                if isinstance(distributions[n], FloatDistribution)
                else show(t.config[n])
            )
            for n in names
        }
        study.add_trial(
            optuna.trial.create_trial(
                params=params, distributions=distributions, value=value_at(t, objective.name, epoch)
            )
        )
    scores = optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))
    return Importance(scores, epoch, len(reached), len(fitted))


def direction(
    experiment: ExperimentRecord,
    trials: list[TrialRecord],
    name: str,
    epoch: int,
    objective: Objective | None = None,
) -> str:
    """Which way a parameter helps ``objective`` (default: the first) at the comparison epoch, where the
    trials show it: for a number, the sign of its rank correlation with the objective when that is unlikely
    to be chance (p < 0.1), said both ways so that the sign reads right; for a choice, the option with the
    best mean."""
    objective = objective or experiment.config.objective
    metric, mode = objective.name, objective.mode
    pairs = [(t.config.get(name), value_at(t, metric, epoch)) for t in trials]
    numbers = [(v, m) for v, m in pairs if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == len(pairs) and len({v for v, _ in numbers}) > 1:
        rho, p = _spearman([v for v, _ in numbers], [m for _, m in numbers])
        if p >= 0.1:
            return f"direction unclear ({len(numbers)} trials)"
        better = (rho < 0) == (mode == "min")
        moves = "lower" if rho < 0 else "higher"
        return (
            f"higher is {'better' if better else 'worse'} for {metric} (higher {name}, {moves} {metric}: "
            f"rank correlation {rho:+.2f})"
        )
    means: dict[str, list[float]] = {}
    for v, m in pairs:
        means.setdefault(show(v), []).append(m)
    top = pick(mode)(means, key=lambda k: sum(means[k]) / len(means[k]))
    return f"best for {metric} with {top}"


def _spearman(xs: list[float], ys: list[float]) -> tuple[float, float]:
    """Spearman's rank correlation and its two-sided p-value by the t approximation (0 and 1 when one side
    does not vary). Ranked here rather than by ``scipy.stats``: its import alone is a second of every page,
    the live page's child included, where ``scipy.special`` is a fraction of that."""
    import numpy as np
    from scipy.special import stdtr

    x_ranks, y_ranks = _ranks(np.asarray(xs, dtype=float)), _ranks(np.asarray(ys, dtype=float))
    if len(xs) < 3 or np.ptp(x_ranks) == 0 or np.ptp(y_ranks) == 0:
        return 0.0, 1.0
    rho = float(np.clip(np.corrcoef(x_ranks, y_ranks)[0, 1], -1.0, 1.0))
    if abs(rho) == 1.0:
        return rho, 0.0
    freedom = len(xs) - 2
    t = abs(rho) * math.sqrt(freedom / ((1.0 + rho) * (1.0 - rho)))
    return rho, float(2.0 * stdtr(freedom, -t))


def _ranks(values: np.ndarray) -> np.ndarray:
    """1-based ranks, tied values sharing the mean of the ranks they span."""
    import numpy as np

    _, where, counts = np.unique(values, return_inverse=True, return_counts=True)
    ends = np.cumsum(counts)
    return ((ends - counts + 1 + ends) / 2.0)[where]
