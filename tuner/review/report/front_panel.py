"""The report's Pareto panel, for a sweep on several objectives.

With several objectives there is no one best trial, so the best-trial views alone mislead: this panel shows
the trade-off itself (tuner/review/front.py computes it). With two objectives, every trial's point with the
front as a staircase (the edge of what it dominates); with three or more, parallel coordinates with each
axis's better end at the top. Then the hypervolume over time (does the front still improve?), the front as a
table, and how many trials early stopping removed: a trial stopped early is judged at the epoch it stopped,
so it shows hollow, never as a finished rival.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tuner.experiment import ExperimentRecord
from tuner.folder.fates import kind
from tuner.objectives import Objective, Objectives
from tuner.review import front as pareto_front
from tuner.review.report.curves import figure_html
from tuner.review.vocabulary import BEST_COLOUR, FATE_COLOURS, show

if TYPE_CHECKING:
    import plotly.graph_objects as go

FRONT = "on the Pareto front"
BROKEN = "breaks a constraint (never on the front)"
FAILED = "failed (never on the front)"
STOPPED = "stopped early"
FADED = 0.45  # the opacity of a dominated trial


def title(experiment: ExperimentRecord) -> str:
    return f"The Pareto front ({', '.join(o.name for o in experiment.config.objectives)})"


def section(experiment: ExperimentRecord) -> str:
    """The panel's HTML: the trade-off figure, the counts, the hypervolume over time and the front's table."""
    objectives = experiment.config.objectives
    found = pareto_front.points(experiment)
    if not found:
        names = ", ".join(o.name for o in objectives)
        return f"<p class=note>No trial has reported every objective ({html.escape(names)}) yet.</p>"
    best = pareto_front.front(experiment)
    on_front = {p.trial.trial_id for p in best}
    if len(objectives) == 2:  # a plane shows the trade-off itself; more need an axis each
        failed = any(p.feasible and not p.on_a_front for p in found)  # one that breaks a bound is drawn ×
        figure, note = scatter(objectives, found, best), scatter_note(objectives, failed)
    else:
        figure, note = parallel(objectives, found, on_front), PARALLEL_NOTE
    note += " ×: breaks a constraint." if experiment.config.constraint_list else ""
    return "\n".join(
        [
            f"<p>{html.escape(counts_line(experiment, found, on_front))}</p>",
            figure_html(figure),
            f"<p class=note>{html.escape(note)}</p>",
            front_table(objectives, best),
            "<h3>Hypervolume over time</h3>",
            figure_html(hypervolume_figure(experiment)),
            f"<p class=note>{html.escape(hypervolume_note(experiment))}</p>",
        ]
    )


def counts_line(experiment: ExperimentRecord, found: list[pareto_front.Point], on_front: set[str]) -> str:
    """How many trials early stopping removed and how many are on the front, in one sentence."""
    stopped = [t for t in experiment.trials if kind(t.fate) == STOPPED]
    stopped_on_front = sum(1 for t in stopped if t.trial_id in on_front)
    line = (
        f"Early stopping removed {len(stopped)} of {len(experiment.trials)} trials before their last epoch; "
        f"{len(on_front)} trial{'' if len(on_front) == 1 else 's'} "
        f"{'is' if len(on_front) == 1 else 'are'} on the Pareto front"
    )
    if stopped_on_front == 1:
        line += " (1 of them was stopped early: there with the values it had then)"
    elif stopped_on_front:
        line += f" ({stopped_on_front} of them were stopped early: there with the values they had then)"
    infeasible = sum(1 for p in found if not p.feasible)
    if infeasible:
        line += f"; {infeasible} broke a constraint and can never be on it"
    failed = sum(1 for p in found if p.feasible and not p.on_a_front)
    if failed:
        line += f"; {failed} failed, and a config that crashed is never on it"
    placed = {p.trial.trial_id for p in found}
    missing = sum(1 for t in experiment.trials if t.rows and t.trial_id not in placed)
    silent = sum(1 for t in experiment.trials if not t.rows)
    if silent:
        line += f"; {silent} reported nothing"
    if missing:
        line += (
            f"; {missing} ended without every objective a finite number at {'its' if missing == 1 else 'their'} "
            "last epoch (a nan, or one not reported), so without a point"
        )
    return line + "."


def scatter_note(objectives: Objectives, failed: bool = False) -> str:
    """What the trade-off figure draws; the failed trials' marker only where one failed."""
    corner = (
        f"{'left' if objectives[0].mode == 'min' else 'right'} and "
        f"{'bottom' if objectives[1].mode == 'min' else 'top'}"
    )
    return (
        f"Each trial at its last epoch, where both objectives were finite numbers. The better corner is {corner}; the "
        "staircase is the edge of what the front dominates: a front trial is at least as good on both "
        "as any trial beyond it. Hollow: stopped early (its values are from the epoch it stopped at). "
        "Faded: dominated." + (" +: failed, so never on the front." if failed else "")
    )


PARALLEL_NOTE = (
    "One line a trial, at its last epoch, where every objective was a finite number; each axis has its better end at "
    "the top, so no other trial's line is above a front trial's on every axis. Dotted: stopped early."
)


def axis_title(objective: Objective) -> str:
    return f"{objective.name} ({'lower' if objective.mode == 'min' else 'higher'} is better)"


def hover(p: pareto_front.Point, objectives: Objectives) -> str:
    """A trial's hover text: id and fate, its values, the epoch they are from, its config, what it breaks."""
    values = " · ".join(f"{o.name} {p.values[o.name]:.4g}" for o in objectives)
    config = ", ".join(f"{k}={show(v)}" for k, v in sorted(p.trial.config.items()))
    lines = [
        f"<b>{_text(p.trial.trial_id)}</b>: {_text(p.trial.fate)}",
        _text(values),
        f"epoch {p.epoch}",
        _text(config),
    ]
    lines += [_text(b) for b in p.broken]  # "latency_ms 5 breaks latency_ms>=8"
    return "<br>".join(lines)


def _text(text: str) -> str:
    """Text safe in plotly's hover labels (which read a few HTML tags)."""
    return html.escape(text, quote=False)


def group(p: pareto_front.Point, on_front: set[str]) -> str:
    """The legend entry a point belongs to."""
    if p.trial.trial_id in on_front:
        return FRONT
    if not p.feasible:
        return BROKEN
    if not p.on_a_front:
        return FAILED
    return f"{kind(p.trial.fate)}, dominated"


def symbol(p: pareto_front.Point, on_front: set[str]) -> str:
    """Filled for a trial that ran on, hollow for one stopped early; an × for one that breaks a constraint."""
    hollow = "-open" if kind(p.trial.fate) == STOPPED else ""
    if not p.feasible:
        return "x" + hollow
    if not p.on_a_front:
        return "cross" + hollow
    return ("diamond" if p.trial.trial_id in on_front else "circle") + hollow


def staircase(
    best: list[pareto_front.Point], objectives: Objectives, found: list[pareto_front.Point]
) -> tuple[list[float], list[float]]:
    """The edge of what the front dominates, as (x, y) vertices: from the worst y seen down to the first front
    point, a step at each next one, out to the worst x seen. Built where less is better, shown in real units."""
    first, second = objectives
    ordered = sorted((first.as_min(p.values[first.name]), second.as_min(p.values[second.name])) for p in best)
    worst_x = max(first.as_min(p.values[first.name]) for p in found)
    worst_y = max(second.as_min(p.values[second.name]) for p in found)
    xs, ys = [ordered[0][0]], [worst_y]
    for (x, y), following in zip(ordered, [*ordered[1:], None], strict=True):
        xs.append(x)
        ys.append(y)
        xs.append(following[0] if following else worst_x)
        ys.append(y)
    return [first.as_min(x) for x in xs], [second.as_min(y) for y in ys]  # as_min is its own inverse


def scatter(
    objectives: Objectives, found: list[pareto_front.Point], best: list[pareto_front.Point]
) -> go.Figure:
    """Every trial's point, the front's staircase and its points emphasised, dominated trials faded."""
    import plotly.graph_objects as go

    first, second = objectives
    on_front = {p.trial.trial_id for p in best}
    fig = go.Figure()
    if best:
        xs, ys = staircase(best, objectives, found)
        fig.add_trace(
            go.Scatter(
                x=xs,
                y=ys,
                mode="lines",
                name="the front's edge",
                hoverinfo="skip",
                line={"color": BEST_COLOUR, "width": 2, "dash": "dot"},
            )
        )
    groups: dict[str, list[pareto_front.Point]] = {}
    for p in found:
        groups.setdefault(group(p, on_front), []).append(p)
    for label in sorted(groups, key=lambda g: (g != FRONT, g == BROKEN, g)):
        members = groups[label]
        colours = [BEST_COLOUR if label == FRONT else FATE_COLOURS[kind(p.trial.fate)] for p in members]
        fig.add_trace(
            go.Scatter(
                x=[p.values[first.name] for p in members],
                y=[p.values[second.name] for p in members],
                # the front's trials named on the chart: they are the ones to read about in the table below
                mode="markers+text" if label == FRONT else "markers",
                text=[p.trial.trial_id for p in members] if label == FRONT else None,
                textposition="top right",
                textfont={"size": 10, "color": BEST_COLOUR},
                name=label,
                hovertext=[hover(p, objectives) for p in members],
                hovertemplate="%{hovertext}<extra></extra>",
                marker={
                    "symbol": [symbol(p, on_front) for p in members],
                    "color": colours,
                    "size": 14 if label == FRONT else 10,
                    "opacity": 1.0 if label == FRONT else FADED,
                    "line": {"width": 2, "color": colours},
                },
            )
        )
    fig.update_layout(
        height=480,
        margin={"t": 20},
        xaxis_title=axis_title(first),
        yaxis_title=axis_title(second),
        legend={"itemsizing": "constant"},
        hoverlabel={"align": "left"},
    )
    return fig


def parallel(objectives: Objectives, found: list[pareto_front.Point], on_front: set[str]) -> go.Figure:
    """One line a trial across the objectives, each axis's better end at the top, the front's lines drawn
    thick over faded dominated ones (plain lines, no WebGL, as the report's other parallel view)."""
    import plotly.graph_objects as go

    from tuner.review.report.axes import axis_for

    axes = []
    for o in objectives:
        axis = axis_for(axis_title(o), [p.values[o.name] for p in found], choices=False)
        if o.mode == "min":  # the better end at the top
            axis.positions = [1 - y for y in axis.positions]
            axis.ticks = [(1 - y, text) for y, text in axis.ticks]
        axes.append(axis)
    fig = go.Figure()
    # the front drawn last, over the rest
    order = sorted(range(len(found)), key=lambda i: found[i].trial.trial_id in on_front)
    shown: set[str] = set()
    for i in order:
        p = found[i]
        label = group(p, on_front)
        is_front = label == FRONT
        colour = BEST_COLOUR if is_front else FATE_COLOURS[kind(p.trial.fate)]
        fig.add_trace(
            go.Scatter(
                x=list(range(len(axes))),
                y=[a.positions[i] for a in axes],
                mode="lines+markers",
                name=label,
                legendgroup=label,
                showlegend=label not in shown,
                opacity=1.0 if is_front else FADED,
                line={
                    "color": colour,
                    "width": 4 if is_front else 1.5,
                    "dash": "dot" if kind(p.trial.fate) == STOPPED else "solid",
                },
                marker={"symbol": symbol(p, on_front), "size": 9 if is_front else 6, "color": colour},
                hovertext=hover(p, objectives),
                hovertemplate="%{hovertext}<extra></extra>",
            )
        )
        shown.add(label)
    for x, axis in enumerate(axes):
        fig.add_shape(type="line", x0=x, x1=x, y0=0, y1=1, line={"color": "#555", "width": 1}, layer="below")
        fig.add_annotation(x=x, y=1.08, text=f"<b>{html.escape(axis.label)}</b>", showarrow=False)
        for y, text in axis.ticks:
            fig.add_annotation(
                x=x,
                y=y,
                text=text,
                showarrow=False,
                xanchor="left",
                xshift=4,
                font={"size": 10},
                bgcolor="rgba(255,255,255,0.85)",
            )
    fig.update_xaxes(visible=False, range=[-0.3, len(axes) - 0.5])
    fig.update_yaxes(visible=False, range=[-0.05, 1.15])
    fig.update_layout(
        height=460, margin={"t": 30, "l": 20, "r": 20}, plot_bgcolor="white", hoverlabel={"align": "left"}
    )
    return fig


def hypervolume_figure(experiment: ExperimentRecord) -> go.Figure | None:
    """The hypervolume of every result reported by then, against seconds since the sweep started."""
    import plotly.graph_objects as go

    over_time = pareto_front.hypervolume_over_time(experiment)
    if not over_time:
        return None
    fig = go.Figure(
        go.Scatter(
            x=[t for t, _ in over_time],
            y=[v for _, v in over_time],
            mode="lines+markers",
            line_shape="hv",
            name="hypervolume",
            line={"color": BEST_COLOUR},
            marker={"size": 4},
            hovertemplate="%{x:.3g} s: %{y:.4g}<extra></extra>",
        )
    )
    fig.update_layout(
        height=320, margin={"t": 20}, xaxis_title="seconds since the sweep started", yaxis_title="hypervolume"
    )
    return fig


def hypervolume_note(experiment: ExperimentRecord) -> str:
    ref = pareto_front.reference(experiment)
    if ref is None:
        return "No feasible trial yet: nothing dominates any volume."
    objectives = experiment.config.objectives
    where = ", ".join(f"{o.name} {o.as_min(r):.4g}" for o, r in zip(objectives, ref, strict=True))
    return (
        f"The volume of objective space the trials' latest results dominate, up to a reference point a tenth "
        f"beyond the worst feasible values ({where}). It rises as the front improves (and dips where a trial's "
        "next epoch is worse than its last: each trial counts with its latest result); a flat end says the "
        "last trials found nothing better on any trade-off."
    )


def front_table(objectives: Objectives, best: list[pareto_front.Point]) -> str:
    """The front, best first by the first objective: trial, each objective, epoch, config, fate."""
    if not best:
        return "<p class=note>No trial meets every constraint yet: the front is empty.</p>"
    head = "".join(
        f"<th>{html.escape(c)}</th>"
        for c in ["trial", *map(axis_title, objectives), "epoch", "config", "fate"]
    )
    rows = []
    for p in best:
        config = ", ".join(f"{k}={show(v)}" for k, v in sorted(p.trial.config.items()))
        cells = [
            p.trial.trial_id,
            *(show(p.values[o.name]) for o in objectives),
            str(p.epoch),
            config,
            p.trial.fate,
        ]
        css = kind(p.trial.fate).replace(" ", "-")
        rows.append(f'<tr class="{css}">' + "".join(f"<td>{html.escape(c)}</td>" for c in cells) + "</tr>")
    return f"<table class=front><thead><tr>{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
