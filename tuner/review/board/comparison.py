"""Two or more sweeps of one metric side by side: the best so far against epochs trained and against wall
time on one chart, each sweep's row as ``tuner compare`` gives it, their best configs and their settings, with
what differs marked.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tuner.objectives import pick
from tuner.review.vocabulary import show
from tuner.values import number

if TYPE_CHECKING:
    import plotly.graph_objects as go

    from tuner.experiment import ExperimentRecord

# settings that differ between any two sweeps without telling how they searched
_SAME_ANYWAY = ("name", "storage_path", "origin", "searcher_chosen", "scheduler_chosen", "warm_start")


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

    from tuner.review.compare import shared_reference
    from tuner.review.front import front, hypervolume_over_time
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


def _table(head: list[str], rows: list[tuple[bool, list[str]]]) -> str:
    """A table of escaped text; a row whose flag is set is marked as differing."""
    top = "".join(f"<th>{html.escape(h)}</th>" for h in head)
    body = "".join(
        f"<tr{' class=differs' if differs else ''}>"
        + "".join(f"<td>{html.escape(c)}</td>" for c in cells)
        + "</tr>"
        for differs, cells in rows
    )
    return f"<div class=wide><table><thead><tr>{top}</tr></thead><tbody>{body}</tbody></table></div>"


def _side_by_side(names: list[str], columns: list[dict[str, str]]) -> str:
    keys = list(dict.fromkeys(k for column in columns for k in column))
    rows = []
    for key in keys:
        cells = [column.get(key, "-") for column in columns]
        rows.append((len(set(cells)) > 1, [key, *cells]))
    rows.sort(key=lambda r: not r[0])  # what differs first
    return _table(["", *names], rows)


def page(records: list[ExperimentRecord], names: list[str]) -> str:
    """The comparison page (plotly's script is served apart, at /static/plotly.js)."""
    from tuner.review.compare import summary_rows
    from tuner.review.report.curves import figure_html

    summary = summary_rows(records)
    head = list(dict.fromkeys(k for row in summary for k in row))
    table = _table(head, [(False, [show(row.get(k)) for k in head]) for row in summary])
    configs = []
    for record in records:
        best = record.best_trial()
        configs.append({k: show(v) for k, v in best.config.items()} if best else {"(no result yet)": ""})
    settings = [
        {
            k: show(v if not isinstance(v, list) else ", ".join(map(str, v)))
            for k, v in r.config.as_text().items()
        }
        for r in records
    ]
    for column in settings:
        for key in _SAME_ANYWAY:
            column.pop(key, None)
    figure = figure_html(
        fronts_chart(records, names) if records[0].config.several_objectives else chart(records, names)
    )
    title = "Comparing " + ", ".join(names)
    return COMPARE.format(
        title=html.escape(title),
        figure=figure,
        table=table,
        configs=_side_by_side(names, configs),
        settings=_side_by_side(names, settings),
        style=_STYLE,
    )


def refusal(message: str) -> str:
    """A page that says why these sweeps cannot be compared."""
    return COMPARE_REFUSED.format(message=html.escape(message), style=_STYLE)


_STYLE = """<style>
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1300px; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 1.6em; border-bottom: 1px solid #ddd; }
.note { color: #666; font-size: 0.9em; } .wide { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.86em; } td, th { border: 1px solid #ddd; padding: 3px 8px; text-align: left; }
th { background: #f5f5f5; } tr.differs td { background: #fff6dc; } tr.differs td:first-child { font-weight: bold; }
</style>"""

COMPARE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<script src="/static/plotly.js"></script>{style}</head><body>
<p><a href="/">&larr; every experiment</a></p>
<h1>{title}</h1>
<section id=chart>{figure}</section>
<h2>Each sweep</h2>{table}
<h2>Their best configs (what differs first, marked)</h2>{configs}
<h2>Their settings (what differs first, marked)</h2>{settings}
</body></html>
"""

COMPARE_REFUSED = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>Cannot compare</title>{style}</head><body><p><a href="/">&larr; every experiment</a></p>
<h1>These sweeps cannot be compared</h1><p>{message}</p></body></html>
"""
