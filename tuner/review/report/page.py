"""``tuner report``: one self-contained HTML page that explains a sweep.

Drawn with plotly and inlined with its JavaScript (no server, no network): for a sweep on several
objectives, the Pareto front first (tuner/review/report/front_panel.py); the best trial and its config; the
scheduler panel (tuner/review/report/scheduler_panel.py: its settings, each rung's decisions with their reasons,
what it saved); the best value so far against trials and wall time and every learning curve
(tuner/review/report/curves.py); parallel coordinates and importance in real units
(tuner/review/report/params.py) and importance (tuner/review/report/importance.py); every trial's fate; and the replays ``tuner replay`` saved. While a sweep runs
the page is rewritten every few seconds and reloads itself until the sweep ends (tuner/launch/watching/live_report.py).
"""

from __future__ import annotations

import html
from collections import Counter

from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.folder.fates import family, kind
from tuner.review import findings
from tuner.review.report.curves import curves, figure_html, history
from tuner.review.report.params import parallel
from tuner.review.vocabulary import cell
from tuner.review.vocabulary import show as _show
from tuner.value_types import Value


def build(experiment: ExperimentRecord, refresh_s: float | None = None, running: bool = False) -> str:
    """The whole page, as one HTML string; with ``refresh_s``, a live page that reloads itself that often;
    ``running``: a sweep a process runs now, whose open trials are not left to ``tuner resume``."""
    import plotly.offline

    metric = experiment.metric
    found = findings.of(experiment)
    parts = [
        (
            "best",
            found.best_title(),
            _best_section(experiment),
        ),
        (
            "scheduler",
            f"The scheduler ({experiment.config.scheduler}): what it decided and what it saved",
            _scheduler_section(experiment),
        ),
        ("history", "Best so far", figure_html(history(experiment, _scored(experiment)))),
        (
            "curves",
            f"Learning curves ({metric} per epoch, coloured by fate)",
            figure_html(curves(experiment)) + _drawn_note(experiment, "curve") + _labels_note(experiment),
        ),
        (
            "parallel",
            "Parameters, fate and the metric",
            figure_html(parallel(experiment, _scored(experiment))) + _drawn_note(experiment, "line"),
        ),
        ("importance", "Parameter importance", _importance_section(experiment)),
        ("fates", "Every trial, best first", _fates_table(experiment)),
    ]
    parts[:0] = found.sections()
    replays = _replays_section(experiment)
    if replays:
        parts.append(("replays", "Under other schedulers (tuner replay)", replays))
    body = "\n".join(
        f'<section id="{key}"><h2>{html.escape(title)}</h2>\n{content}</section>'
        for key, title, content in parts
    )
    shown = ", ".join(
        f"{o.name} ({'lowest' if o.mode == 'min' else 'highest'} is best)"
        for o in experiment.config.objectives
    )
    title = f"{experiment.config.name}: {len(experiment.trials)} trials, {shown}"
    live: tuple[str, str] | None = None
    if refresh_s:
        import time

        live = (
            f'<meta http-equiv="refresh" content="{int(refresh_s)}">',
            f"<p class=live>Live: the sweep is running; "
            f"this page is rewritten every {int(refresh_s)} s and reloads itself (last written "
            f"{time.strftime('%H:%M:%S')}). The final page replaces it when the sweep ends.</p>",
        )
    return PAGE.format(
        title=html.escape(title),
        plotly=plotly.offline.get_plotlyjs(),
        body=body,
        settings=html.escape(_settings_line(experiment)),
        refresh=live[0] if live else "",
        live=live[1] if live else RUNNING_NOTE if running else _unfinished_note(experiment),
    )


RUNNING_NOTE = "<p class=live>Live: the sweep is running; this is what it has so far.</p>"


def _unfinished_note(experiment: ExperimentRecord) -> str:
    """A sweep that stopped with trials open (a signal, a full disk, a stall): what is left and how to go on,
    which only the terminal said before."""
    open_fates = Counter(family(t.fate) for t in experiment.trials if kind(t.fate) == "running")
    if not open_fates:
        return ""
    left = ", ".join(f"{n} {fate}" for fate, n in open_fates.most_common())
    planned = experiment.config.trials_cap
    if planned and planned > len(experiment.trials):
        left += f"; {planned - len(experiment.trials):,} more to come of the {planned:,} planned"
    return (
        f"<p class=unfinished>Not finished: {html.escape(left)}. <code>tuner resume "
        f"{html.escape(experiment.path)}</code> continues it; this page is written again when it ends.</p>"
    )


def _drawn_note(experiment: ExperimentRecord, what: str) -> str:
    """Which trials a chart of a large sweep draws one by one, and how it shows the others."""
    from tuner.review.report import detail

    detailed, rest = detail.split(experiment)
    if not rest:
        return ""
    if what == "curve":
        others = (
            f"the other {len(rest):,} as bands, one per fate: at each epoch the median (dotted) and the middle 80% "
            "of the values of those that reached it"
        )
    else:
        sampled = min(len(rest), detail.SAMPLED_AT_MOST)
        others = (
            f"{'all' if sampled == len(rest) else f'{sampled:,} drawn at random (a fixed seed) of'} the other "
            f"{len(rest):,} as faint lines without a hover"
        )
    return f"<p class=note>The best {len(detailed):,} trials have a {what} each; {others}.</p>"


def _labels_note(experiment: ExperimentRecord) -> str:
    """Says where the ids not written beside their × are: a rung where many trials stopped names only a few."""
    from tuner.review.report import detail
    from tuner.review.report.curves import LABELS_PER_EPOCH, labelled

    detailed, _ = detail.split(experiment)
    stopped = [t for t in detailed if kind(t.fate) == "stopped early" and t.curve(experiment.metric)]
    if len(labelled(detailed, experiment.metric, experiment.mode)) == len(stopped):
        return ""
    return (
        f"<p class=note>Each trial stopped early ends in an ×; at each epoch the best {LABELS_PER_EPOCH} of "
        "them are named where a name fits, the others in their hover.</p>"
    )


def _scheduler_section(experiment: ExperimentRecord) -> str:
    from tuner.review.report.scheduler_panel import section

    return section(experiment)


def _settings_line(experiment: ExperimentRecord) -> str:
    c = experiment.config
    made = len(experiment.trials)  # a grid makes num_samples trials per point; a budget, as many as it allows
    planned = f" of {c.num_samples} planned" if c.num_samples and made < c.num_samples else ""
    return (
        f"{experiment.path} · scheduler {c.scheduler}, searcher {c.searcher}, {made} trial{'' if made == 1 else 's'}"
        f"{planned} of up to {c.max_epochs} epochs{', on a budget' if c.num_samples is None else ''}, seed {c.seed}"
    )


def _scored(experiment: ExperimentRecord) -> list[TrialRecord]:
    return [t for t in experiment.ranked() if t.best(experiment.metric, experiment.mode) is not None]


def _best_section(experiment: ExperimentRecord) -> str:
    best = experiment.best_trial()
    if best is None:
        return f"<p class=note>No trial has reported {html.escape(experiment.metric)} yet.</p>"
    row = best.best_row(experiment.metric, experiment.mode) or {}
    value = best.best(experiment.metric, experiment.mode)
    items = "".join(
        f"<tr><th>{html.escape(str(k))}</th><td>{html.escape(_show(v))}</td></tr>"
        for k, v in best.config.items()
    )
    kept, note = experiment.checkpoint_choice(best)
    checkpoint = (kept or "(none kept)") + (f" ({note})" if note else "")
    return (
        f"<p><b>Trial {html.escape(best.trial_id)}</b>: {html.escape(experiment.metric)} <b>{value:.4g}</b> at epoch "
        f"{int(float(row.get('training_iteration') or 0))}; {html.escape(best.fate)}.</p>"
        f"<table class=config>{items}</table><p class=note>Checkpoint: {html.escape(str(checkpoint))}</p>"
    )


def _importance_section(experiment: ExperimentRecord) -> str:
    from tuner.review.report.importance import section

    return section(experiment, _scored(experiment))


def fate_rows(experiment: ExperimentRecord) -> list[dict[str, Value]]:
    """One row a trial, best first: its rank, with several objectives whether it is on the front, under
    constraints what it breaks (a trial that breaks one ranks after every one that does not), its fate
    (next to the id, so that the explanation is in view on a narrow screen), best value and the epoch it came
    at, epochs run, its config, the order it was made in (as the best-so-far chart counts trials), and the
    other metrics it reported at its best epoch."""
    from tuner.review.plots import reported_metrics
    from tuner.review.results import param_columns

    metric, mode = experiment.metric, experiment.mode
    others = [m for m in reported_metrics(experiment) if m != metric]
    own = ["#", "trial", "on front", "breaks", "fate", f"best {metric}", "at epoch", "epochs", "made"]
    params = param_columns(experiment, [*own, *(f"{name} at best epoch" for name in others)])
    made = {t.trial_id: i for i, t in enumerate(experiment.trials, 1)}
    front = findings.of(experiment).on_front()
    bounded = bool(experiment.config.constraint_list)
    rows = []
    for rank, trial in enumerate(experiment.ranked(), 1):
        best_row = trial.best_row(metric, mode) or {}
        row: dict[str, Value] = {
            "#": rank,
            "trial": trial.trial_id,
            **({"on front": "●" if trial.trial_id in front else ""} if front is not None else {}),
            # under constraints, why a better-looking trial ranks below: what its last result breaks
            **({"breaks": "; ".join(experiment.breaks(trial))} if bounded else {}),
            "fate": trial.fate,
            f"best {metric}": trial.best(metric, mode),
            "at epoch": int(float(best_row["training_iteration"])) if best_row else None,
            "epochs": trial.epochs,
            **{column: trial.config.get(p) for p, column in params.items()},
            "made": made[trial.trial_id],
        }
        for name in others:
            row[f"{name} at best epoch"] = cell(best_row.get(name))
        rows.append(row)
    return rows


def _fates_table(experiment: ExperimentRecord) -> str:
    """Every trial's row, best first; above ``detail.IN_DETAIL`` trials the best ones' written out and the
    others' kept in the page as data, shown on a click (a table of thousands of rows would make the page
    slow to open for rows few read)."""
    import json

    from tuner.review.report import detail

    rows = fate_rows(experiment)
    if not rows:
        return "<p class=note>No trials yet.</p>"
    columns = list(dict.fromkeys(k for row in rows for k in row))
    head = "".join(f"<th class={_css(c)}>{html.escape(c)}</th>" for c in columns)
    shown, later = rows[: detail.IN_DETAIL], rows[detail.IN_DETAIL :]
    body = "".join(
        f'<tr class="{_row_class(row)}">'
        + "".join(f"<td class={_css(c)}>{html.escape(_show(row.get(c)))}</td>" for c in columns)
        + "</tr>"
        for row in shown
    )
    # the table scrolls sideways in a box of its own when its columns do not fit, never the page; the fate
    # is next to the trial's id, in view on a phone too
    table = f"<div class=wide><table class=fates><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table></div>"
    if not later:
        return table
    counts = Counter(kind(str(row.get("fate", ""))) for row in later)
    which = ", ".join(f"{n:,} {family}" for family, n in counts.most_common())
    data = json.dumps(
        [[_row_class(row), *(_show(row.get(c)) for c in columns)] for row in later], separators=(",", ":")
    ).replace("</", "<\\/")  # nothing in the data can close its script element
    classes = json.dumps([_css(c) for c in columns])
    return (
        f"{table}<p class=note>The best {len(shown):,} of {len(rows):,} trials are listed; the other "
        f"{len(later):,} ({which}) are in this page, listed on a click (or, outside it: <code>tuner results "
        f"{html.escape(experiment.path)} --format csv</code>).</p>"
        f'<button id=more-trials onclick="showOtherTrials()">List the other {len(later):,} trials</button>'
        f'<script type="application/json" id=other-trials>{data}</script>'
        "<script>function showOtherTrials() {"
        f"const classes = {classes};"
        "const body = document.querySelector('table.fates tbody');"
        "for (const [rowClass, ...cells] of JSON.parse(document.getElementById('other-trials').textContent)) {"
        "const tr = document.createElement('tr'); tr.className = rowClass;"
        "cells.forEach((text, i) => { const td = document.createElement('td'); td.className = classes[i]; "
        "td.textContent = text; tr.appendChild(td); });"
        "body.appendChild(tr); }"
        "document.getElementById('more-trials').remove(); }</script>"
    )


def _row_class(row: dict[str, Value]) -> str:
    return kind(str(row.get("fate", ""))).replace(" ", "-")


def _css(column: str) -> str:
    """A column's class: the fate is read as a sentence and gets room for one."""
    return "fate" if column == "fate" else "cell"


def _replays_section(experiment: ExperimentRecord) -> str:
    """What ``tuner replay`` found for this sweep: one row per saved replay, its whole answer beneath."""
    from tuner.durations import format_seconds
    from tuner.review.replays import describe, saved, saving

    replays = saved(experiment)
    if not replays:
        return ""
    head = "<tr><th>replayed under</th><th>epochs</th><th>wall time</th><th>best trial</th><th>stopped earlier</th></tr>"
    rows = []
    # what the columns say is not said again: the rest of the answer (rungs, the best trial, who stopped
    # earlier and why) opens under the row's title
    said = ("replayed under ", "  epochs: ", "  wall time: ")
    for w in replays:
        name = html.escape(w.title)
        base = w.baseline_epochs if w.baseline_epochs is not None else w.used_epochs
        low = "at least " if w.cut_short else ""
        rest = "\n".join(
            line for line in describe(w, experiment.config.scheduler) if not line.startswith(said)
        )
        title = (
            f"<details><summary>{name}</summary><pre>{html.escape(rest)}</pre></details>" if rest else name
        )
        rows.append(
            f"<tr><td>{title}</td><td>{low}{w.epochs} of {base}"
            f"{'' if w.cut_short else saving(w.epochs, base)}</td><td>{low}{format_seconds(w.seconds)} of "
            f"{format_seconds(w.used_seconds)}{'' if w.cut_short else saving(w.seconds, w.used_seconds)}</td>"
            f"<td>{'kept' if w.best_kept else 'lost'}</td><td>{len(w.stopped)}</td></tr>"
        )
    note = (
        "<p class=note>Each row plays this sweep's own learning curves, with the time each epoch took, through "
        "another scheduler on a simulated clock. The sweep's own time is simulated the same way (its scheduler, "
        "the same trials at once), not read off the clock, so both columns compare like for like. Open a row's "
        "title for the rest of its answer.</p>"
    )
    return f"<table class=replays>{head}{''.join(rows)}</table>{note}"


PAGE = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">{refresh}<title>{title}</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; padding: 0 1em; max-width: 1200px; color: #222; }}
h1 {{ font-size: 1.5em; }} h2 {{ font-size: 1.15em; margin-top: 2em; border-bottom: 1px solid #ddd; }}
p, summary {{ overflow-wrap: anywhere; }}
.note {{ color: #666; font-size: 0.9em; }}
.wide {{ overflow-x: auto; max-width: 100%; }}
table {{ border-collapse: collapse; font-size: 0.85em; }}
td, th {{ border: 1px solid #ddd; padding: 3px 8px; text-align: left; }}
table.config th {{ background: #f5f5f5; }}
table.fates td.fate, table.fates th.fate {{ min-width: 16em; max-width: 30em; }}
table.fates td.cell {{ white-space: nowrap; }}
table.fates th {{ vertical-align: bottom; }}
@media (max-width: 600px) {{
  body {{ margin: 1em auto; }}
  table.fates td.fate, table.fates th.fate {{ min-width: 11em; }}
}}
tr.stopped-early td {{ color: #777; }} tr.paused td {{ color: #a65d00; }} tr.errored td {{ color: #b00; }}
.live {{ background: #eef6ee; border: 1px solid #9c9; padding: 6px 10px; }}
.unfinished {{ background: #fff1d6; border: 1px solid #e0b060; padding: 6px 10px; }}
</style>
<script type="text/javascript">{plotly}</script>
</head><body>
<h1>{title}</h1>
{live}
<p class=note>{settings}</p>
{body}
</body></html>
"""
