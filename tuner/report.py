"""``tuner report``: one self-contained HTML page that explains a sweep.

Six parts, drawn with plotly and inlined with its JavaScript (no server, no network): the best trial and
its config; the best value so far against trials and against wall time; every trial's learning curve,
coloured by its fate; parallel coordinates of the parameters and the metric; parameter importance
(fANOVA, Optuna's evaluator, on each trial's config and best value); the fates table.
"""

from __future__ import annotations

import html
import math
from typing import Any

from tuner.experiment import Experiment, TrialRecord
from tuner.fates import kind

FATE_COLOURS = {"completed": "#1f77b4", "stopped early": "#aaaaaa", "errored": "#d62728", "running": "#2ca02c"}
LOG_SPAN = 16


def build(experiment: Experiment) -> str:
    """The whole page, as one HTML string."""
    import plotly.offline

    metric, mode = experiment.metric, experiment.mode
    parts = [
        ("best", "The best trial", _best_section(experiment)),
        ("history", "Best so far", _figure(_history(experiment))),
        ("curves", f"Learning curves ({metric} per epoch, coloured by fate)", _figure(_curves(experiment))),
        ("parallel", "Parameters and the metric", _figure(_parallel(experiment))),
        ("importance", "Parameter importance", _importance_section(experiment)),
        ("fates", "Every trial, best first", _fates_table(experiment)),
    ]
    replays = _replays_section(experiment)
    if replays:
        parts.append(("replays", "Under other schedulers (tuner replay)", replays))
    body = "\n".join(f'<section id="{key}"><h2>{html.escape(title)}</h2>\n{content}</section>' for key, title, content in parts)
    order = "lowest" if mode == "min" else "highest"
    title = f"{experiment.config.name}: {len(experiment.trials)} trials, {metric} ({order} is best)"
    return PAGE.format(title=html.escape(title), plotly=plotly.offline.get_plotlyjs(), body=body,
                       settings=html.escape(_settings_line(experiment)))  # fmt: skip


def _figure(fig: Any) -> str:
    if fig is None:
        return "<p class=note>Not enough results yet.</p>"
    return fig.to_html(include_plotlyjs=False, full_html=False, config={"displaylogo": False})


def _settings_line(experiment: Experiment) -> str:
    c = experiment.config
    return (f"{experiment.path} · scheduler {c.scheduler}, searcher {c.searcher}, {c.num_samples or 'budgeted'} trials of up to "
            f"{c.max_epochs} epochs, seed {c.seed}")  # fmt: skip


def _scored(experiment: Experiment) -> list[TrialRecord]:
    return [t for t in experiment.ranked() if t.best(experiment.metric, experiment.mode) is not None]


def _best_section(experiment: Experiment) -> str:
    best = experiment.best_trial()
    if best is None:
        return f"<p class=note>No trial has reported {html.escape(experiment.metric)} yet.</p>"
    row = best.best_row(experiment.metric, experiment.mode) or {}
    value = best.best(experiment.metric, experiment.mode)
    items = "".join(f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_show(v))}</td></tr>" for k, v in best.config.items())
    checkpoint = experiment.best_checkpoint(best) or "(none kept)"
    return (
        f"<p><b>Trial {html.escape(best.trial_id)}</b>: {html.escape(experiment.metric)} <b>{value:.4g}</b> at epoch "
        f"{int(float(row.get('training_iteration') or 0))}; {html.escape(best.fate)}.</p>"
        f"<table class=config>{items}</table><p class=note>Checkpoint: {html.escape(str(checkpoint))}</p>"
    )


def _started(trial: TrialRecord) -> float:
    stamps = [float(r["timestamp"]) for r in trial.rows if r.get("timestamp")]
    return min(stamps) if stamps else math.inf


def _history(experiment: Experiment) -> Any:
    """Best-so-far against trials (in the order they started) and against wall time."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    metric, mode = experiment.metric, experiment.mode
    trials = sorted(_scored(experiment), key=_started)
    if not trials:
        return None
    better = min if mode == "min" else max
    events = sorted((float(r["timestamp"]), v) for t in trials for r in t.rows
                    if r.get("timestamp") and (v := _number(r.get(metric))) is not None)  # fmt: skip
    start = min(e[0] for e in events)
    by_trial, best = [], None
    for t in trials:
        value = t.best(metric, mode)
        best = value if best is None else better(best, value)
        by_trial.append(best)
    scale, unit = (60, "minutes") if events[-1][0] - start >= 120 else (1, "seconds")
    by_time, best = [], None
    for when, value in events:
        best = value if best is None else better(best, value)
        by_time.append(((when - start) / scale, best))
    fig = make_subplots(rows=1, cols=2, subplot_titles=("against trials", "against wall time"))
    fig.add_trace(go.Scatter(x=list(range(1, len(by_trial) + 1)), y=by_trial, mode="lines+markers", line_shape="hv",
                             name="best so far", text=[t.trial_id for t in trials]), row=1, col=1)  # fmt: skip
    fig.add_trace(go.Scatter(x=[x for x, _ in by_time], y=[y for _, y in by_time], mode="lines", line_shape="hv",
                             name="best so far (time)", showlegend=False), row=1, col=2)  # fmt: skip
    fig.update_xaxes(title_text="trials, in the order they started", row=1, col=1)
    fig.update_xaxes(title_text=f"{unit} since the first result", row=1, col=2)
    fig.update_yaxes(title_text=f"best {metric} so far", row=1, col=1)
    fig.update_layout(height=380, margin={"t": 40})
    return fig


def _curves(experiment: Experiment) -> Any:
    import plotly.graph_objects as go

    metric = experiment.metric
    fig = go.Figure()
    shown = set()
    best = experiment.best_trial()
    for trial in experiment.trials:
        points = trial.curve(metric)
        if not points:
            continue
        family = kind(trial.fate)
        is_best = best is not None and trial.trial_id == best.trial_id
        fig.add_trace(go.Scatter(
            x=[p[0] for p in points], y=[p[1] for p in points], mode="lines+markers",
            name="best trial" if is_best else family, legendgroup="best" if is_best else family,
            showlegend=is_best or family not in shown,
            line={"color": "#ff7f0e" if is_best else FATE_COLOURS[family], "width": 4 if is_best else 1.5},
            hovertext=f"{trial.trial_id}: {trial.fate}", hoverinfo="text+y",
        ))  # fmt: skip
        shown.add(family)
    if not fig.data:
        return None
    fig.update_layout(height=420, xaxis_title="epoch", yaxis_title=metric, margin={"t": 20})
    fig.update_xaxes(dtick=1)
    return fig


def _parallel(experiment: Experiment) -> Any:
    import plotly.graph_objects as go

    metric, mode = experiment.metric, experiment.mode
    trials = _scored(experiment)
    if len(trials) < 2:
        return None
    dimensions = []
    for name in sorted({k for t in trials for k in t.config}):
        values = [t.config.get(name) for t in trials]
        if len({_show(v) for v in values}) < 2:
            continue
        dimensions.append(_dimension(name, values))
    scores = [t.best(metric, mode) for t in trials]
    dimensions.append({"label": f"best {metric}", "values": scores})
    fig = go.Figure(go.Parcoords(
        line={"color": scores, "colorscale": "Viridis", "reversescale": mode == "min", "showscale": True,
              "colorbar": {"title": f"best {metric}"}},
        dimensions=dimensions,
    ))  # fmt: skip
    fig.update_layout(height=420, margin={"t": 60, "l": 60, "r": 60})
    return fig


def _dimension(name: str, values: list) -> dict:
    numbers = [v for v in values if isinstance(v, (int, float)) and not isinstance(v, bool)]
    if len(numbers) == len(values):
        if min(numbers) > 0 and max(numbers) / min(numbers) >= LOG_SPAN:
            return {"label": f"{name} (log10)", "values": [math.log10(v) for v in numbers]}
        return {"label": name, "values": numbers}
    labels = sorted({_show(v) for v in values})
    return {"label": name, "values": [labels.index(_show(v)) for v in values],
            "tickvals": list(range(len(labels))), "ticktext": labels}  # fmt: skip


def importance(experiment: Experiment) -> dict[str, float] | None:
    """fANOVA importance of each parameter for each trial's best value (Optuna's evaluator), or None
    when there are too few trials or nothing varies."""
    import optuna
    from optuna.distributions import CategoricalDistribution, FloatDistribution
    from optuna.importance import FanovaImportanceEvaluator

    metric, mode = experiment.metric, experiment.mode
    trials = _scored(experiment)
    names = [n for n in sorted({k for t in trials for k in t.config}) if len({_show(t.config.get(n)) for t in trials}) > 1]
    if len(trials) < 4 or not names:
        return None
    distributions = {}
    for name in names:
        values = [t.config.get(name) for t in trials]
        if all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
            low, high = float(min(values)), float(max(values))
            distributions[name] = FloatDistribution(low, high, log=low > 0 and high / low >= LOG_SPAN)
        else:
            distributions[name] = CategoricalDistribution(sorted({_show(v) for v in values}))
    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(direction="minimize" if mode == "min" else "maximize")
    for t in trials:
        params = {n: (float(t.config[n]) if isinstance(distributions[n], FloatDistribution) else _show(t.config[n]))
                  for n in names}  # fmt: skip
        study.add_trial(optuna.trial.create_trial(params=params, distributions=distributions,
                                                  value=t.best(metric, mode)))  # fmt: skip
    return optuna.importance.get_param_importances(study, evaluator=FanovaImportanceEvaluator(seed=0))


def _importance_section(experiment: Experiment) -> str:
    import plotly.graph_objects as go

    scores = importance(experiment)
    if not scores:
        return "<p class=note>Needs at least 4 trials with results and a parameter that varies.</p>"
    names = list(scores)[::-1]
    fig = go.Figure(go.Bar(x=[scores[n] for n in names], y=names, orientation="h"))
    fig.update_layout(height=120 + 30 * len(names), xaxis_title="share of the variance of the best "
                      f"{experiment.metric} explained", margin={"t": 20})  # fmt: skip
    note = ("<p class=note>fANOVA (Optuna's FanovaImportanceEvaluator): a random forest fitted to each trial's config "
            f"and best {html.escape(experiment.metric)}, the variance of the prediction split by parameter. With few "
            "trials, read it as a hint.</p>")  # fmt: skip
    return _figure(fig) + note


def _fates_table(experiment: Experiment) -> str:
    from tuner.results import trial_rows

    rows = trial_rows(experiment)
    if not rows:
        return "<p class=note>No trials yet.</p>"
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join(
        f'<tr class="{kind(str(row.get("fate", "")) ).replace(" ", "-")}">'
        + "".join(f"<td>{html.escape(_show(row.get(c)))}</td>" for c in columns) + "</tr>"
        for row in rows
    )
    return f"<table class=fates><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _replays_section(experiment: Experiment) -> str:
    """What ``tuner replay`` found for this sweep: one row per saved replay, its whole answer beneath."""
    from tuner.limits import format_seconds
    from tuner.replay.whatif import describe, saved

    replays = saved(experiment)
    if not replays:
        return ""
    head = "<tr><th>replayed under</th><th>epochs</th><th>wall time</th><th>best trial</th><th>stopped earlier</th></tr>"
    rows, details = [], []
    for w in replays:
        name = w.title
        share = f" ({w.epochs / w.used_epochs:.0%})" if w.used_epochs else ""
        rows.append(f"<tr><td>{html.escape(name)}</td><td>{w.epochs} of {w.used_epochs}{share}</td>"
                    f"<td>{format_seconds(w.seconds)} of {format_seconds(w.used_seconds)}</td>"
                    f"<td>{'kept' if w.best_kept else 'lost'}</td><td>{len(w.stopped)}</td></tr>")  # fmt: skip
        lines = "\n".join(describe(w, experiment.config.scheduler))
        details.append(f"<details><summary>{html.escape(name)}</summary><pre>{html.escape(lines)}</pre></details>")
    note = ("<p class=note>Each row replays this sweep's own learning curves and epoch times through another "
            "scheduler on a simulated clock; the sweep's figures are replayed the same way, so both sides compare "
            "like for like.</p>")  # fmt: skip
    return f"<table class=replays>{head}{''.join(rows)}</table>{note}{''.join(details)}"


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _show(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1200px; color: #222; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }}
.note {{ color: #666; font-size: 0.9em; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border: 1px solid #ddd; padding: 3px 8px; text-align: left; }}
table.config th {{ background: #f5f5f5; }}
tr.stopped-early td {{ color: #777; }} tr.errored td {{ color: #b00; }}
</style>
<script type="text/javascript">{plotly}</script>
</head><body>
<h1>{title}</h1>
<p class=note>{settings}</p>
{body}
</body></html>
"""
