"""The dashboard's comparison chart (plotly): with one objective each sweep's best so far against epochs trained and
against wall time; with several, each sweep's front and its hypervolume (tuner/review/findings.py picks)."""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tuner.objectives import pick
from tuner.values import number

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from tuner.experiment import ExperimentRecord


def best_so_far(record: ExperimentRecord) -> list[tuple[int, float, float]]:
    """(epochs trained by all trials together, seconds of the sweep (``ExperimentRecord.clock``), best value so far) at
    each report, in the order the reports came."""
    reports = sorted(
        (when, value)
        for trial in record.trials
        for when, row in trial.times()
        if (value := number(row.get(record.metric))) is not None
    )
    better = pick(record.mode)
    clock = record.clock()  # the time between a stop and its resume left out
    out: list[tuple[int, float, float]] = []
    for n, (when, value) in enumerate(reports, 1):
        out.append((n, clock(when), value if not out else better(out[-1][2], value)))
    return out


def chart(records: list[ExperimentRecord], names: list[str]) -> go.Figure:
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metric = records[0].metric
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=(f"best {metric} so far against epochs trained", "… against wall time"),
    )
    for index, (record, name) in enumerate(zip(records, names, strict=True)):
        steps = best_so_far(record)
        label = html.escape(f"{name} ({record.config.scheduler}, {record.config.searcher})")
        colour = f"hsl({(index * 137) % 360}, 65%, 42%)"
        for col, x in ((1, [s[0] for s in steps]), (2, [s[1] for s in steps])):
            fig.add_trace(
                go.Scatter(
                    x=x,
                    y=[s[2] for s in steps],
                    mode="lines",
                    line={"shape": "hv", "color": colour},
                    name=label,
                    legendgroup=label,
                    showlegend=col == 1,
                ),
                row=1,
                col=col,
            )
    fig.update_xaxes(title_text="epochs trained, all trials together", row=1, col=1)
    fig.update_xaxes(title_text="seconds of each sweep, since its first trial started", row=1, col=2)
    fig.update_yaxes(title_text=f"best {metric} so far", row=1, col=1)
    fig.update_layout(height=430, margin={"t": 40}, legend={"orientation": "h", "y": -0.25})
    return fig


def fronts_chart(records: list[ExperimentRecord], names: list[str]) -> go.Figure:
    """Sweeps of several objectives: each one's front on the first two objectives, and its hypervolume against
    epochs trained, all up to one reference point (as ``tuner compare`` draws them)."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    from tuner.review.front import front, hypervolume_over_time, shared_reference
    from tuner.review.report.front_panel import axis_title

    first, second = records[0].config.objectives[:2]
    ref = shared_reference(records)
    fig = make_subplots(
        rows=1,
        cols=2,
        subplot_titles=("each sweep's Pareto front", "hypervolume up to one reference for all"),
    )
    for index, (record, name) in enumerate(zip(records, names, strict=True)):
        label = html.escape(f"{name} ({record.config.scheduler}, {record.config.searcher})")
        colour = f"hsl({(index * 137) % 360}, 65%, 42%)"
        found = front(record)
        fig.add_trace(
            go.Scatter(
                x=[p.values[first.name] for p in found],
                y=[p.values[second.name] for p in found],
                mode="lines+markers",
                line={"shape": "hv", "color": colour},
                text=[p.trial.trial_id for p in found],
                hovertemplate="trial %{text}: %{x:.4g}, %{y:.4g}<extra></extra>",
                name=label,
                legendgroup=label,
            ),
            row=1,
            col=1,
        )
        steps = hypervolume_over_time(record, ref) if ref is not None else []
        fig.add_trace(
            go.Scatter(
                x=list(range(1, len(steps) + 1)),
                y=[volume for _, volume in steps],
                mode="lines",
                line={"shape": "hv", "color": colour},
                name=label,
                legendgroup=label,
                showlegend=False,
            ),
            row=1,
            col=2,
        )
    fig.update_xaxes(title_text=axis_title(first), row=1, col=1)
    fig.update_yaxes(title_text=axis_title(second), row=1, col=1)
    fig.update_xaxes(title_text="epochs trained, all trials together", row=1, col=2)
    fig.update_yaxes(title_text="hypervolume (more is better)", row=1, col=2)
    fig.update_layout(height=430, margin={"t": 40}, legend={"orientation": "h", "y": -0.25})
    return fig
