"""The report's scheduler panel: what the scheduler was set to, what each rung decided and why, what it saved.

ASHA and HyperBand write down every comparison as they make it (tuner/schedulers/asha_rule.py, hyperband_rule.py): the rung,
the trial's value, the cutoff it met (ASHA: the 1/eta quantile of the values that reached the rung before
it), or the bracket round it was ranked in (HyperBand). Drawn in arrival order, each rung shows why a trial
with a poor value went on (it came first, before any cutoff) while a better one later did not.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tuner.experiment import ExperimentRecord
from tuner.folder.fates import RungRecord
from tuner.review.report.savings import loop_ends_line, savings_line
from tuner.review.vocabulary import CUTOFF_COLOUR

if TYPE_CHECKING:
    import plotly.graph_objects as go


class RungEvent(RungRecord):
    """A rung record with the trial it is of."""

    trial: str


SHARE = {2: "half", 3: "third", 4: "quarter"}


def section(experiment: ExperimentRecord) -> str:
    """The panel's HTML: settings, savings, one figure of the rungs, and the reasons table."""
    parts = [f"<p>{html.escape(line)}</p>" for line in settings_lines(experiment)]
    parts.append(f"<p><b>{html.escape(savings_line(experiment))}</b></p>")
    if experiment.config.scheduler == "fifo":
        from tuner.review.replays import saved

        where = (
            "the replays at the end of this page"
            if saved(experiment)
            else f"'tuner replay {experiment.path} --scheduler asha'"
        )
        parts.append(
            f"<p class=note>What early stopping would have saved here: see {html.escape(where)}.</p>"
        )
    every = _events(experiment)  # the reasons table lists each; the figures draw those with a value
    events = [e for e in every if e.get("value") is not None]
    if every:
        from tuner.review.report.curves import figure_html

        config = experiment.config
        # as the records say the rungs decided: by fronts they keep each objective's value ("values")
        both = events and all(len(e.get("values") or {}) > 1 for e in events)
        if both:
            first, second = config.objectives[:2]
            parts.append(
                f"<p class=note>Each rung decided by fronts of {html.escape(', '.join(map(str, config.objectives)))}"
                f": each rung's results drawn on {html.escape(first.name)} and {html.escape(second.name)}, "
                "a line from each trial stopped there to each trial that dominated it (better on both) among "
                "those that had reached the rung before it.</p>"
            )
            parts.append(figure_html(rung_scatter(experiment, events)))
        elif config.constraints or any("values" in e for e in events):  # as the records say: by fronts
            by = ", ".join(map(str, config.objectives)) + (
                f"; bounds {', '.join(config.constraints)}" if config.constraints else ""
            )
            parts.append(
                f"<p class=note>Each rung decided by fronts of {html.escape(by)}; this view plots "
                f"{html.escape(experiment.metric)} only, so a trial may go on with a worse value there for "
                "its other objectives (the reasons table and the front above say which).</p>"
            )
        if not both and events:
            parts.append(figure_html(rung_figure(experiment, events)))
        parts.append(_reasons_table(experiment, every))
    elif experiment.config.scheduler in ("asha", "hyperband", "bohb"):
        parts.append(
            "<p class=note>No rung comparisons were recorded (a sweep made before tuner recorded them, or "
            "no trial reached the first rung).</p>"
        )
    return "\n".join(parts)


def settings_lines(experiment: ExperimentRecord) -> list[str]:
    """The scheduler as the plan described it before the sweep (its rungs or brackets), and how many trials
    ran at once."""
    from tuner.review.replays import trials_at_once

    plan = experiment.plan_lines()
    start = next((i for i, line in enumerate(plan) if line.startswith("scheduler: ")), None)
    if start is not None:
        lines = [plan[start].removeprefix("scheduler: ")]
        lines += [line.strip() for line in plan[start + 1 :] if line.startswith("  bracket")]
    else:  # a sweep made before its plan was kept
        c = experiment.config
        lines = [
            f"{c.scheduler}: up to {c.max_epochs} epochs a trial, reduction factor {c.reduction_factor}, grace "
            f"period {c.grace_period}"
        ]
    loop_line = loop_ends_line(experiment)
    if loop_line:
        lines.append(loop_line)
    reported = [t for t in experiment.trials if t.rows]
    at_once = experiment.at_once() or (trials_at_once(reported) if reported else 0)
    planned = experiment.planned_at_once()
    allowed = f" (the plan allowed {planned})" if planned and planned > at_once else ""
    return [*lines, f"{len(experiment.trials)} trials, at most {at_once} running at once{allowed}"]


def _events(experiment: ExperimentRecord) -> list[RungEvent]:
    return [{**r, "trial": t.trial_id} for t in experiment.trials for r in t.rungs]


def reason(event: RungRecord, experiment: ExperimentRecord) -> str:
    """Why a trial went on, or did not, at one rung, in the metric's own terms."""
    if event.get("reason"):  # a scheduler that says why in its own words (freeze-thaw)
        return str(event["reason"])
    rf = experiment.config.reduction_factor
    share = SHARE.get(rf, f"1/{rf}")
    value = event.get("value")
    if "keep" in event and value is not None:  # a HyperBand or BOHB round
        verdict = "kept" if event["kept"] else "stopped"
        return (
            f"{verdict}: {value:.4g} {'among' if event['kept'] else 'not among'} the best {event['keep']} of "
            f"{event['of']} in bracket {event.get('bracket', '?')} at epoch {event['rung']}"
        )
    if "place" in event:  # ranked by fronts (several objectives, or constraints): no cutoff, a place
        return _by_fronts(event, experiment)
    if value is None:
        return f"{'went on' if event['kept'] else 'stopped'}: {experiment.metric} was not a number here (ranked last)"
    cutoff = event.get("cutoff")
    if cutoff is None:
        return f"first at rung {event['rung']}: no cutoff yet"
    better, worse = ("≤", ">") if experiment.mode == "min" else ("≥", "<")
    if event["kept"]:
        return f"in the best {share}: {value:.4g} {better} {cutoff:.4g}"
    return f"stopped: {value:.4g} {worse} {cutoff:.4g}"


def _by_fronts(event: RungEvent | RungRecord, experiment: ExperimentRecord) -> str:
    """A place among the results at a rung, ranked by fronts; a stopped trial's own reason from its fate (who
    dominated it, or the bound it broke)."""
    import math

    place, of = event.get("place", 0), event.get("of", 0)
    keep = max(1, math.ceil(of / experiment.config.reduction_factor))
    values = event.get("values") or {}
    shown = ", ".join(f"{name} {value:.4g}" for name, value in values.items())
    ranked = f"{shown}: ranked {place} of {of} by fronts" if shown else f"ranked {place} of {of} by fronts"
    if event["kept"]:
        return f"went on: {ranked}; {_best_go_on(keep)}"
    trial = next((t for t in experiment.trials if t.trial_id == event.get("trial")), None)
    fate = trial.fate if trial is not None else ""
    why = fate.split(": ", 1)[1] if f"at epoch {event.get('epoch', event['rung'])}:" in fate else ""
    return f"stopped: {ranked}; only {_best_go_on(keep)}" + (f" ({why})" if why else "")


def _best_go_on(keep: int) -> str:
    return "the best one goes on" if keep == 1 else f"the best {keep} go on"


def rung_figure(experiment: ExperimentRecord, events: list[RungEvent]) -> go.Figure:
    """One panel per rung (per bracket and round under HyperBand and BOHB, whose brackets each keep their own
    best): each value in the order it arrived there, kept or stopped, and the cutoff it met."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    panels = sorted({(int(e.get("bracket") or 0), e["rung"]) for e in events})
    titles = [f"bracket {b}, epoch {r}" if b else f"rung at epoch {r}" for b, r in panels]
    fig = make_subplots(rows=1, cols=len(panels), subplot_titles=titles, shared_yaxes=True)
    for col, panel in enumerate(panels, 1):
        at = sorted(
            (e for e in events if (int(e.get("bracket") or 0), e["rung"]) == panel),
            key=lambda e: (e.get("arrived", 0), e["trial"]),
        )
        xs = list(range(1, len(at) + 1))
        _add_verdicts(fig, experiment, at, [(x, e["value"]) for x, e in zip(xs, at, strict=True)], col)
        cut = [(x, e.get("cutoff")) for x, e in zip(xs, at, strict=True) if e.get("cutoff") is not None]
        if cut:  # each arrival's own cutoff, a tick on its marker
            fig.add_trace(
                go.Scatter(
                    x=[x for x, _ in cut],
                    y=[c for _, c in cut],
                    mode="markers",
                    name="the rung's cutoff",
                    legendgroup="cutoff",
                    showlegend=col == 1,
                    marker={
                        "symbol": "line-ew-open",
                        "size": 18,
                        "color": CUTOFF_COLOUR,
                        "line": {"width": 2, "color": CUTOFF_COLOUR},
                    },
                    hovertext=[f"cutoff {c:.4g}" for _, c in cut],
                    hoverinfo="text",
                ),
                row=1,
                col=col,
            )
        paused = any(
            _verdict(e) == "paused" for e in at
        )  # freeze-thaw weighs a paused trial again at its rung
        fig.update_xaxes(
            # a tick for each arrival while they fit a phone's width; beyond, plotly's own whole-number spacing
            title_text="decisions at this rung, in order (a paused trial weighed again shows again)"
            if paused
            else "arrival order at this rung",
            row=1,
            col=col,
            dtick=1 if len(at) <= 10 else None,
            tickformat="d",
        )
    fig.update_yaxes(title_text=f"{experiment.metric} at the rung", row=1, col=1)
    fig.update_layout(height=380, margin={"t": 50})
    return fig


def dominators(event: RungEvent, events: list[RungEvent], experiment: ExperimentRecord) -> list[RungEvent]:
    """The feasible results at the same rung that arrived before ``event`` and are better on every objective
    (one that breaks a bound dominates no trial: the rule's own comparison, tuner/schedulers/comparing.py)."""
    from tuner.pareto import dominates

    objectives = experiment.config.objectives

    def point(e: RungEvent) -> tuple[float, ...] | None:
        values = e.get("values") or {}
        if any(o.name not in values for o in objectives):
            return None
        return tuple(o.as_min(values[o.name]) for o in objectives)

    mine = point(event)
    if mine is None:
        return []
    return [
        e
        for e in events
        if e["rung"] == event["rung"]
        and e.get("arrived", 0) < event.get("arrived", 0)
        and ("violation" not in e or (e["violation"] is not None and e["violation"] <= 0))
        and (theirs := point(e)) is not None
        and dominates(theirs, mine)
    ]


def rung_scatter(experiment: ExperimentRecord, events: list[RungEvent]) -> go.Figure:
    """Several objectives: one panel per rung, each result there on the first two objectives, kept or stopped,
    with its trial id, and a line from each stopped trial to the trials that dominated it there."""
    import plotly.graph_objects as go
    from plotly.subplots import make_subplots

    first, second = experiment.config.objectives[:2]
    rungs = sorted({e["rung"] for e in events})
    fig = make_subplots(rows=1, cols=len(rungs), subplot_titles=[f"rung at epoch {r}" for r in rungs])
    for col, rung in enumerate(rungs, 1):
        at = [e for e in events if e["rung"] == rung]

        def xy(e: RungEvent) -> tuple[float, float]:
            values = e.get("values") or {}
            return values[first.name], values[second.name]

        for e in at:
            if _verdict(e) != "stopped":
                continue
            for d in dominators(e, at, experiment):
                (x0, y0), (x1, y1) = xy(e), xy(d)
                fig.add_trace(
                    go.Scatter(
                        x=[x0, x1],
                        y=[y0, y1],
                        mode="lines",
                        line={"color": "#bbbbbb", "width": 1},
                        hoverinfo="skip",
                        showlegend=False,
                    ),
                    row=1,
                    col=col,
                )
        _add_verdicts(fig, experiment, at, [xy(e) for e in at], col, named=True)
        fig.update_xaxes(title_text=f"{first.name} at the rung", row=1, col=col)
    fig.update_yaxes(title_text=f"{second.name} at the rung", row=1, col=1)
    fig.update_layout(height=420, margin={"t": 50})
    return fig


def _add_verdicts(
    fig: go.Figure,
    experiment: ExperimentRecord,
    at: list[RungEvent],
    points: list[tuple[float, float | None]],  # (x, y); the events a view draws all have a value
    col: int,
    named: bool = False,
) -> None:
    """One trace per decision at a rung (went on, paused, stopped), each event at its point, its reason on
    hover; ``named``: each point labelled with its trial id."""
    import plotly.graph_objects as go

    epochs = {t.trial_id: t.epochs for t in experiment.trials}
    drawn = [_drawn_as(e, epochs) for e in at]
    for verdict, name, symbol, colour in VERDICTS:
        idx = [i for i, e in enumerate(drawn) if e == verdict]
        if not idx and verdict.startswith("paused"):
            continue  # only freeze-thaw pauses
        labels = (
            {"text": [at[i]["trial"] for i in idx], "textposition": "top center",
             "textfont": {"size": 9, "color": colour}}
            if named
            else {}
        )  # fmt: skip
        fig.add_trace(
            go.Scatter(
                x=[points[i][0] for i in idx],
                y=[points[i][1] for i in idx],
                mode="markers+text" if named else "markers",
                name=name,
                legendgroup=name,
                showlegend=col == 1,
                marker={"symbol": symbol, "size": 9, "color": colour},
                hovertext=[f"{at[i]['trial']}: {reason(at[i], experiment)}" for i in idx],
                hoverinfo="text",
                **labels,
            ),
            row=1,
            col=col,
        )


ROW_CLASS = {"goes on": "kept", "paused": "paused", "stopped": "stopped-early"}
# How each decision at a rung is drawn: ASHA and HyperBand keep or stop; freeze-thaw also pauses.
VERDICTS = (
    ("goes on", "went on", "circle", "#1f77b4"),
    ("paused", "paused here", "diamond-open", "#ff7f0e"),
    ("paused, continued", "paused here, continued later", "diamond", "#ff7f0e"),
    ("stopped", "stopped here", "x", "#888888"),
)


def _verdict(event: RungRecord) -> str:
    return str(event.get("verdict") or ("goes on" if event["kept"] else "stopped"))


def _drawn_as(event: RungEvent, epochs: dict[str, int]) -> str:
    """The verdict as the figure draws it: a pause the trial later went on from is told apart (the best trial of a
    freeze-thaw sweep read as if it had ended paused at its first decision)."""
    verdict = _verdict(event)
    if verdict == "paused" and epochs.get(event["trial"], 0) > int(event["rung"]):
        return "paused, continued"
    return verdict


def _reasons_table(experiment: ExperimentRecord, events: list[RungEvent]) -> str:
    rows = sorted(events, key=lambda e: (e["rung"], e.get("arrived", 0), e["trial"]))
    body = "".join(
        f'<tr class="{ROW_CLASS[_verdict(e)]}"><td>{e["rung"]}</td><td>{html.escape(e["trial"])}'
        f"</td><td>{'not a number' if e.get('value') is None else format(e['value'], '.4g')}</td>"
        f"<td>{html.escape(reason(e, experiment))}</td></tr>"
        for e in rows
    )
    head = (
        f"<tr><th>rung (epoch)</th><th>trial</th><th>{html.escape(experiment.metric)}</th><th>why</th></tr>"
    )
    return f"<details><summary>Every comparison, with its reason</summary><table class=rungs>{head}{body}</table></details>"
