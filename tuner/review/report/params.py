"""The report's parallel coordinates of the parameters, the fate and the metric, in real units.

Drawn as ordinary lines (no WebGL, so they render in any browser, headless ones included), each parameter on
an axis in its own units (tuner/review/report/axes.py: a batch size shows 2, 4, 8, 16 and nothing between), the
fate as an axis of its own, and the metric last. Importance is tuner/review/report/importance.py.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.folder.fates import kind
from tuner.review.report.axes import axis_for, categories
from tuner.review.vocabulary import BEST_COLOUR, show

if TYPE_CHECKING:
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
    scales = experiment.scales()
    for name in sorted({k for t in trials for k in t.config}):
        values = [t.config.get(name) for t in trials]
        if len({show(v) for v in values}) > 1:
            axes.append(axis_for(name, values, scale=scales.get(name)))
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
    for other in experiment.config.objectives[1:]:
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
        # the titles on three lines in turn: on a narrow screen neighbouring titles would run into each other
        labels.append(
            {"x": x, "y": 1.06 + 0.06 * (x % 3), "text": f"<b>{axis.label}</b>", "showarrow": False}
        )
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
                # below the axes' titles, which reach over it on a narrow screen
                "colorbar": {
                    "title": {"text": f"best {metric}", "side": "right"},
                    "thickness": 12,
                    "len": 0.78,
                    "y": 0,
                    "yanchor": "bottom",
                },
            },
        )
    )
    fig.update_xaxes(visible=False, range=[-0.3, len(axes) - 0.5])
    fig.update_yaxes(visible=False, range=[-0.05, 1.24])
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
