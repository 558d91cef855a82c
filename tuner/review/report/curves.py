"""The report's time figures: the best value so far (against trials, against wall time) and every learning curve.

Learning curves are coloured by fate with one legend entry per fate; a trial stopped early ends in an × at
the epoch it stopped, beside the cutoff that stopped it. The many trials stopped at one rung share an x and
often nearly a value: only the best of them are labelled with their ids, each where it does not overlap
another (``labelled``); the hover names every one.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.folder.fates import kind, taken_from
from tuner.objectives import pick
from tuner.review.running_best import running_best
from tuner.review.vocabulary import BEST_COLOUR, CUTOFF_COLOUR, FATE_COLOURS
from tuner.values import as_float, number

if TYPE_CHECKING:
    import plotly.graph_objects as go

LABELS_PER_EPOCH = 3  # ids written beside the ×s at one epoch: the best stopped there
LABEL_GAP = 0.05  # of the y axis's span between two labels at one epoch: a 9-pixel line, with room


def figure_html(fig: go.Figure | None) -> str:
    """A figure as the page embeds it (plotly's script is inlined once, at the top of the page)."""
    if fig is None:
        return "<p class=note>Not enough results yet.</p>"
    return fig.to_html(
        include_plotlyjs=False,
        full_html=False,
        config={"displaylogo": False, "displayModeBar": False, "responsive": True},
    )


def history(experiment: ExperimentRecord, scored: list[TrialRecord]) -> go.Figure | None:
    """Each trial's best with the best so far, against trials (in the order they were made) and wall time."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metric, mode = experiment.metric, experiment.mode
    order = {t.trial_id: i for i, t in enumerate(experiment.trials)}
    trials = sorted(scored, key=lambda t: order[t.trial_id])
    if not trials:
        return None
    better = pick(mode)
    bests = [t.scored(metric, mode) for t in trials]
    # a trial that breaks a constraint is never the best: it shows its own best, and the best so far passes it by
    counts = [not experiment.breaks(t) for t in trials]
    so_far = running_best(experiment, trials)
    events = sorted(
        (when, v)
        for t, counted in zip(trials, counts, strict=True)
        if counted
        for when, row in t.times()
        if (v := number(row.get(metric))) is not None
    )
    clock = experiment.clock()  # the time between a stop and its resume left out
    last = max((clock(when) for t in trials for when, _ in t.times()), default=0.0)
    scale, unit = (60.0, "minutes") if last >= 120 else (1.0, "seconds")
    by_time: list[tuple[float, float | None]] = []
    best: float | None = None
    for when, value in events:
        best = value if best is None else better(best, value)
        by_time.append((clock(when) / scale, best))
    # one above the other: side by side, the two views' titles run into each other on a narrow screen
    fig = make_subplots(
        rows=2, cols=1, subplot_titles=("against trials", "against wall time"), vertical_spacing=0.2
    )
    xs = list(range(1, len(trials) + 1))
    steps = _steps(list(zip(xs, so_far, strict=True)))
    by_time = _steps(by_time)
    # thousands of markers draw quicker on the GPU (WebGL)
    markers = go.Scattergl if len(trials) > 1000 else go.Scatter
    # a trial that breaks a bound is drawn as a cross of its own, so a value below the line reads as excluded
    for kept, name, symbol in (
        (True, "each trial's best", "circle"),
        (False, "breaks a constraint (never the best)", "x"),
    ):
        shown = [k for k, counted in enumerate(counts) if counted is kept]
        if not shown:
            continue
        fig.add_trace(
            markers(
                x=[xs[k] for k in shown],
                y=[bests[k] for k in shown],
                mode="markers",
                name=name,
                marker={"color": "#9a9a9a", "symbol": symbol},
                hovertext=[trials[k].trial_id for k in shown],
                hoverinfo="text+y",
            ),
            row=1,
            col=1,
        )
    fig.add_trace(
        go.Scatter(
            x=[x for x, _ in steps],
            y=[y for _, y in steps],
            mode="lines+markers",
            line_shape="hv",
            name="best so far",
            legendgroup="best",
            line={"color": BEST_COLOUR},
        ),
        row=1,
        col=1,
    )
    fig.add_trace(
        go.Scatter(
            x=[x for x, _ in by_time],
            y=[y for _, y in by_time],
            mode="lines+markers",
            line_shape="hv",
            name="best so far",
            legendgroup="best",
            showlegend=False,
            line={"color": BEST_COLOUR},
            marker={"size": 4},
        ),
        row=2,
        col=1,
    )
    fig.update_xaxes(  # whole trials: a tick each while they fit, never a 1.5th
        title_text="trials, in the order they were made",
        **({"dtick": 1} if len(experiment.trials) <= 12 else {"tickformat": "d"}),
        row=1,
        col=1,
    )
    fig.update_xaxes(title_text=f"{unit} of the sweep, since its first trial started", row=2, col=1)
    fig.update_yaxes(title_text=f"best {metric} so far (trials' bests)", row=1, col=1)
    fig.update_yaxes(title_text=f"best {metric} reported so far", row=2, col=1)
    if last < 2:  # Ray stamps results to the second: within one, only the order is sure
        fig.update_xaxes(
            title_text="seconds of the sweep, since its first trial started (all within about a second)",
            row=2,
            col=1,
        )
    fig.update_layout(height=640, margin={"t": 40})
    return fig


def _steps(points: list[tuple[float, float | None]]) -> list[tuple[float, float | None]]:
    """A best-so-far staircase by its steps: the first point, each one that improves on the last, and the
    last (drawn ``hv``, the same line; a sweep of thousands of results has a few dozen steps)."""
    kept = [p for i, p in enumerate(points) if i == 0 or p[1] != points[i - 1][1]]
    if points and kept[-1] != points[-1]:
        kept.append(points[-1])
    return kept


def curves(experiment: ExperimentRecord) -> go.Figure | None:
    """Every trial's curve up to ``detail.IN_DETAIL`` trials; above, the best ones' and bands for the rest."""
    import plotly.graph_objects as go

    from tuner.review.report import detail

    metric = experiment.metric
    fig = go.Figure()
    shown: set[str] = set()
    best = experiment.best_trial()
    detailed, rest = detail.split(experiment)
    if rest:
        _bands(fig, metric, rest)
    named = labelled(detailed, metric, experiment.mode)
    lines = []  # added in one step: plotly checks each trace once, where adding one by one copies them all
    for trial in detailed:
        points = trial.curve(metric)
        if not points:
            continue
        family = kind(trial.fate)
        is_best = best is not None and trial.trial_id == best.trial_id
        label = "best trial" if is_best else family
        stopped = family == "stopped early"
        xs = [float(p[0]) for p in points]  # exactly the epochs: a mark between two would read as a fraction
        symbols = ["circle"] * (len(points) - 1) + ["x" if stopped else "circle"]
        label_it = trial.trial_id in named
        lines.append(
            {
                "type": "scatter",
                "x": xs,
                "y": [p[1] for p in points],
                "mode": "lines+markers+text" if label_it else "lines+markers",
                # a stopped trial's id beside its ×, where it fits (``labelled``)
                "text": [""] * (len(points) - 1) + [trial.trial_id] if label_it else None,
                "textposition": "middle right",
                "textfont": {"size": 9, "color": FATE_COLOURS[family]},
                "name": label,
                "legendgroup": label,
                "showlegend": label not in shown,
                "line": {
                    "color": BEST_COLOUR if is_best else FATE_COLOURS[family],
                    "width": 4 if is_best else 1.5,
                },
                "marker": {"symbol": symbols, "size": [6] * (len(points) - 1) + [10 if stopped else 6]},
                "customdata": [p[0] for p in points],
                "hovertext": f"{trial.trial_id}: {trial.fate}",
                "hovertemplate": "%{hovertext}<br>epoch %{customdata}: %{y:.4g}<extra></extra>",
            }
        )
        shown.add(label)
    fig.add_traces(lines)
    if not fig.data:
        return None
    _mark_cutoffs(fig, detailed)
    _mark_takeovers(fig, detailed, metric)
    max_epoch = max(t.epochs for t in experiment.trials)
    fig.update_layout(height=420, xaxis_title="epoch", yaxis_title=metric, margin={"t": 20})
    if max_epoch <= 12:  # a tick each epoch while they fit a phone's width
        fig.update_xaxes(dtick=1)
    else:
        fig.update_xaxes(tickformat="d")
    return fig


def _mark_takeovers(fig: go.Figure, trials: list[TrialRecord], metric: str) -> None:
    """PBT: where a trial's curve goes on from a better trial's checkpoint (the epoch after the one it took), a
    mark, so that the jump there reads as the other trial's training, not this one's."""
    import plotly.graph_objects as go

    xs, ys, said = [], [], []
    for trial in trials:
        values = dict(trial.curve(metric))
        for taken in filter(None, map(taken_from, trial.perturbed)):
            donor, donor_epoch = taken
            if donor_epoch + 1 in values:
                xs.append(float(donor_epoch + 1))
                ys.append(values[donor_epoch + 1])
                said.append(f"{trial.trial_id} from here: trial {donor}'s epoch-{donor_epoch} checkpoint")
    if xs:
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="markers",
                name="took a better trial's checkpoint (PBT)",
                marker={"symbol": "diamond-open", "size": 12, "color": "#444"},
                hovertext=said,
                hoverinfo="text",
            )
        )


def labelled(trials: list[TrialRecord], metric: str, mode: str) -> set[str]:
    """The stopped trials whose ids are written beside their ×: at each epoch the best ones, each at least
    ``LABEL_GAP`` of the axis from another label there, at most ``LABELS_PER_EPOCH`` (a rung where a dozen
    trials stopped at about one value would otherwise be a smear of ids)."""
    values = [v for t in trials for _, v in t.curve(metric)]
    if not values:
        return set()
    gap = LABEL_GAP * ((max(values) - min(values)) or 1.0)
    ends: dict[int, list[tuple[float, str]]] = {}
    for trial in trials:
        points = trial.curve(metric)
        if points and kind(trial.fate) == "stopped early":
            epoch, value = points[-1]
            ends.setdefault(epoch, []).append((value, trial.trial_id))
    named: set[str] = set()
    for at in ends.values():
        placed: list[float] = []
        for value, trial_id in sorted(at, reverse=mode == "max"):
            if len(placed) < LABELS_PER_EPOCH and all(abs(value - y) >= gap for y in placed):
                placed.append(value)
                named.add(trial_id)
    return named


def _bands(fig: go.Figure, metric: str, trials: list[TrialRecord]) -> None:
    """The curves of ``trials`` summed up by fate: at each epoch the median and the middle 80% of the values
    of those that reached it, so a sweep of thousands shows where its trials went without a line each."""
    import numpy as np
    import plotly.graph_objects as go

    by_fate: dict[str, dict[int, list[float]]] = {}
    counts: dict[str, int] = {}
    for trial in trials:
        points = trial.curve(metric)
        if not points:
            continue
        family = kind(trial.fate)
        counts[family] = counts.get(family, 0) + 1
        at = by_fate.setdefault(family, {})
        for epoch, value in points:
            at.setdefault(epoch, []).append(value)
    for family, at in sorted(by_fate.items()):
        epochs = sorted(at)
        low, middle, high = ([float(np.percentile(at[e], q)) for e in epochs] for q in (10, 50, 90))
        colour = FATE_COLOURS[family]
        label = f"{family}, the other {counts[family]} (median, middle 80%)"
        xs = [float(e) for e in epochs]
        fig.add_trace(
            go.Scatter(x=xs, y=high, mode="lines", line={"width": 0, "color": colour}, legendgroup=label,
                       showlegend=False, hoverinfo="skip")
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=low,
                mode="lines",
                fill="tonexty",
                fillcolor=_faint(colour),
                line={"width": 0, "color": colour},
                legendgroup=label,
                showlegend=False,
                hoverinfo="skip",
            )
        )
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=middle,
                mode="lines",
                line={"color": colour, "width": 2, "dash": "dot"},
                name=label,
                legendgroup=label,
                customdata=[[len(at[e]), lo, hi] for e, lo, hi in zip(epochs, low, high, strict=True)],
                hovertemplate=(
                    f"{family}, epoch %{{x}}: median %{{y:.4g}} of %{{customdata[0]}} trials, "
                    "80% within %{customdata[1]:.4g}..%{customdata[2]:.4g}<extra></extra>"
                ),
            )
        )


def _faint(colour: str) -> str:
    """A fill as light as a band behind the curves should be: the colour at a fifth of its strength."""
    import plotly.colors

    red, green, blue = plotly.colors.hex_to_rgb(colour) if colour.startswith("#") else (128, 128, 128)
    return f"rgba({red},{green},{blue},0.2)"


def _mark_cutoffs(fig: go.Figure, trials: list[TrialRecord]) -> None:
    """For each trial ASHA stopped, the cutoff that stopped it, beside its × (the cutoff a trial meets depends
    on what reached the rung before it, so trials that arrived early went on against looser ones)."""
    import plotly.graph_objects as go

    marks = []
    for trial in trials:
        stop = next(
            (e for e in trial.rungs if "keep" not in e and not e.get("kept") and e.get("cutoff") is not None),
            None,
        )
        if stop is not None:
            marks.append(
                # its cutoff is not None: chosen so above
                (
                    stop["epoch"],
                    as_float(stop["cutoff"]),
                    trial.trial_id,
                    stop,
                )
            )
    if not marks:
        return
    fig.add_trace(
        go.Scatter(
            x=[m[0] for m in marks],
            y=[m[1] for m in marks],
            mode="markers",
            name="cutoff that stopped it",
            marker={"symbol": "line-ew-open", "size": 16, "line": {"width": 2, "color": CUTOFF_COLOUR}},
            hovertext=[
                f"{m[2]} stopped at rung {m[3]['rung']}: {m[3]['value']:.4g} against cutoff {m[1]:.4g}"
                for m in marks
            ],
            hoverinfo="text",
        )
    )
