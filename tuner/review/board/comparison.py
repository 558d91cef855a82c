"""Two or more sweeps of one metric side by side: the best so far against epochs trained and against wall
time on one chart, each sweep's row as ``tuner compare`` gives it, their best configs and their settings, with
what differs marked.
"""

from __future__ import annotations

import html
from typing import TYPE_CHECKING

from tuner.review.vocabulary import show

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord

# settings that differ between any two sweeps without telling how they searched
_SAME_ANYWAY = ("name", "storage_path", "origin", "searcher_chosen", "scheduler_chosen", "warm_start")


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


def _heading(key: str) -> str:
    """A column of ``tuner compare``'s rows headed in words (its CSV and JSON keep the keys)."""
    words = {"wall_s": "wall time (s)", "best_trial": "best trial", "epochs_trained": "epochs trained"}
    if key.startswith("best_") and key not in words:
        return "best " + key.removeprefix("best_")  # the metric as the user named it
    return words.get(key, key)


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
    from tuner.review import findings
    from tuner.review.compare import summary_rows
    from tuner.review.report.curves import figure_html

    summary = summary_rows(records)
    head = list(dict.fromkeys(k for row in summary for k in row))
    table = _table(
        [_heading(k) for k in head], [(False, [show(row.get(k)) for k in head]) for row in summary]
    )
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
    figure = figure_html(findings.of(records[0]).chart(records, names))
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
