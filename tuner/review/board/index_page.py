"""The dashboard's first page: one row per experiment, sortable and filterable, its rows fetched again while
the page is open (a sweep started since appears, a running one moves on).

Every name and value from an experiment is written as escaped text; the script sorts, filters and swaps rows
the server drew, and never turns experiment data into markup itself.
"""

from __future__ import annotations

import html
import time

from tuner.durations import format_seconds
from tuner.review.board.catalog import STATES, Row
from tuner.review.vocabulary import show

REFRESH_S = 10  # how often an open index fetches its rows again
COLUMNS = (
    ("compare", ""),
    ("name", "experiment"),
    ("state", "state"),
    ("space", "space"),
    ("algorithms", "scheduler / searcher"),
    ("fates", "trials by fate"),
    ("best", "best"),
    ("started", "started"),
    ("wall", "wall time"),
    ("epochs", "epochs"),
)


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cell(column: str, text: str, sort: object = None, extra: str = "") -> str:
    """A cell with the value the table sorts it by (its text, unless given)."""
    key = text if sort is None else sort
    return f'<td class="{column}" data-sort="{_e(key)}"{extra}>{text}</td>'


def _best(row: Row) -> tuple[str, object]:
    """The cell's text and its sort key: best first, a maximised value negated (sorting raw values put the worst
    accuracy first, and mixed accuracies among losses); rows are grouped by metric first (``_GROUP``)."""
    if row.front is not None:
        return f"front of {row.front}", row.front
    if row.best is None:
        return "-", ""
    aim = "lowest" if row.mode == "min" else "highest"
    key = row.best if row.mode == "min" else -row.best
    return f"{_e(row.metric)} <b>{_e(show(row.best))}</b> <span class=note>({aim} is best)</span>", key


def row_html(row: Row) -> str:
    """One experiment's row, each value escaped."""
    sweep = row.sweep
    link = f'<a href="/sweep/{_e(sweep.key)}">{_e(sweep.name)}</a>'
    if row.state == "unreadable":
        return (
            f'<tr data-state="{_e(row.state)}" data-name="{_e(sweep.name)}"><td class=compare></td>'
            + _cell("name", link, sweep.name)
            + _cell("state", f"<span class='state unreadable'>{_e(row.state)}</span>", row.state)
            + f'<td colspan="{len(COLUMNS) - 3}" class=note>{_e(row.problem)}</td></tr>'
        )
    fates = "<br>".join(f"{n} {_e(fate)}" for fate, n in row.fates.items()) or "no trials yet"
    best_text, best_key = _best(row)
    started = time.strftime("%Y-%m-%d %H:%M", time.localtime(row.started)) if row.started else "-"
    algorithms = f"{_e(row.scheduler)} / {_e(row.searcher or '-')}"
    tick = f'<input type=checkbox name=sweep value="{_e(sweep.key)}" data-metric="{_e(row.metric)}">'
    return (
        f'<tr data-state="{_e(row.state)}" data-name="{_e(sweep.name)}">'
        + _cell("compare", tick, "")
        + _cell("name", link, sweep.name)
        + _cell("state", f"<span class='state {_e(row.state)}'>{_e(row.state)}</span>", row.state)
        + _cell("space", _e(row.space), row.space)
        + _cell("algorithms", algorithms, f"{row.scheduler}/{row.searcher}")
        + _cell("fates", f"<b>{row.trials}</b> trials<br><span class=note>{fates}</span>", row.trials)
        + _cell(
            "best",
            best_text,
            best_key,
            f' data-group="{_e("~front" if row.front is not None else row.metric)}"',
        )
        + _cell("started", _e(started), row.started or 0)
        + _cell("wall", _e(format_seconds(row.wall)) if row.wall else "-", row.wall)
        + _cell("epochs", str(row.epochs), row.epochs)
        + "</tr>"
    )


def rows_html(rows: list[Row]) -> str:
    return "\n".join(row_html(r) for r in rows) or (
        f'<tr class=empty><td colspan="{len(COLUMNS)}" class=note>No experiments under these storages yet.</td></tr>'
    )


def page(rows: list[Row], storages: list[str]) -> str:
    """The whole index page."""
    head = "".join(f'<th data-column="{c}">{_e(title)}</th>' for c, title in COLUMNS)
    states = "".join(f'<option value="{s}">{s}</option>' for s in STATES)
    where = ", ".join(_e(s) for s in storages)
    return INDEX.format(
        where=where,
        head=head,
        states=states,
        rows=rows_html(rows),
        count=len(rows),
        script=SCRIPT.replace("REFRESH_MS", str(REFRESH_S * 1000)),
        style=STYLE,
    )


STYLE = """
body { font-family: system-ui, sans-serif; margin: 1.5em auto; padding: 0 1em; max-width: 1400px; color: #222; }
h1 { font-size: 1.4em; } .note { color: #666; font-size: 0.9em; }
table { border-collapse: collapse; font-size: 0.88em; width: 100%; }
td, th { border: 1px solid #ddd; padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: #f5f5f5; cursor: pointer; user-select: none; white-space: nowrap; }
th.sorted-up::after { content: " \\25B2"; } th.sorted-down::after { content: " \\25BC"; }
.state { padding: 1px 6px; border-radius: 3px; }
.state.running { background: #dff3df; color: #176117; } .state.interrupted { background: #fff1d6; color: #8a5300; }
.state.failed, .state.unreadable { background: #fbe0e0; color: #a00; } .state.finished { background: #e5eefa; color: #1f4f8f; }
.tools { margin: 0.8em 0; display: flex; gap: 1em; align-items: center; flex-wrap: wrap; }
.wide { overflow-x: auto; }
"""

SCRIPT = """
const table = document.getElementById('sweeps');
const body = table.querySelector('tbody');
let sortColumn = null, sortDown = false;
function value(tr, column) {
  const td = tr.querySelector('td.' + column);
  const text = td ? td.dataset.sort : '';
  const number = Number(text);
  return text !== '' && !Number.isNaN(number) ? number : text.toLowerCase();
}
function arrange() {
  const name = document.getElementById('name-filter').value.toLowerCase();
  const state = document.getElementById('state-filter').value;
  const rows = Array.from(body.querySelectorAll('tr:not(.empty)'));
  let shown = 0;
  for (const tr of rows) {
    const keep = (tr.dataset.name || '').toLowerCase().includes(name) && (!state || tr.dataset.state === state);
    tr.hidden = !keep; shown += keep ? 1 : 0;
  }
  if (sortColumn) {
    rows.sort((a, b) => {
      const group = (tr) => (tr.querySelector('td.' + sortColumn) || {dataset: {}}).dataset.group || '';
      const byGroup = group(a).localeCompare(group(b));  // the best of one metric beside each other
      if (byGroup) return sortDown ? -byGroup : byGroup;
      const x = value(a, sortColumn), y = value(b, sortColumn);
      const order = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === 'number' ? -1 : 1);
      return sortDown ? -order : order;
    });
    for (const tr of rows) body.appendChild(tr);
  }
  document.getElementById('count').textContent = shown + ' of ' + rows.length + ' experiments';
}
for (const th of table.querySelectorAll('th')) {
  th.addEventListener('click', () => {
    const column = th.dataset.column;
    if (column === 'compare') return;
    sortDown = sortColumn === column ? !sortDown : false; sortColumn = column;
    for (const other of table.querySelectorAll('th')) other.classList.remove('sorted-up', 'sorted-down');
    th.classList.add(sortDown ? 'sorted-down' : 'sorted-up');
    arrange(); remember();
  });
}
const nameFilter = document.getElementById('name-filter'), stateFilter = document.getElementById('state-filter');
function remember() {
  // the address keeps the view (a link to it shows the same), never the token: the cookie holds that
  const kept = new URLSearchParams();
  if (nameFilter.value) kept.set('q', nameFilter.value);
  if (stateFilter.value) kept.set('state', stateFilter.value);
  if (sortColumn) { kept.set('sort', sortColumn); if (sortDown) kept.set('order', 'desc'); }
  const query = kept.toString();
  history.replaceState(null, '', location.pathname + (query ? '?' + query : ''));
}
nameFilter.addEventListener('input', () => { arrange(); remember(); });
stateFilter.addEventListener('change', () => { arrange(); remember(); });
{
  const asked = new URLSearchParams(location.search);
  nameFilter.value = asked.get('q') || '';
  stateFilter.value = asked.get('state') || '';
  const th = table.querySelector('th[data-column="' + CSS.escape(asked.get('sort') || '') + '"]');
  if (th && th.dataset.column !== 'compare') {
    sortColumn = th.dataset.column; sortDown = asked.get('order') === 'desc';
    th.classList.add(sortDown ? 'sorted-down' : 'sorted-up');
  }
  remember();
}
function ticked() { return Array.from(body.querySelectorAll('input[name=sweep]:checked')).map(i => i.value); }
document.getElementById('compare').addEventListener('click', () => {
  const keys = ticked();
  if (keys.length < 2) { alert('Tick two or more experiments of the same metric to compare them.'); return; }
  location.href = '/compare?' + keys.map(k => 'sweep=' + encodeURIComponent(k)).join('&');
});
async function refresh() {
  try {
    const response = await fetch('/rows', {cache: 'no-store'});
    if (response.ok) {
      const keep = new Set(ticked());
      body.innerHTML = await response.text();
      for (const box of body.querySelectorAll('input[name=sweep]')) box.checked = keep.has(box.value);
      arrange();
      document.getElementById('updated').textContent = 'updated ' + new Date().toLocaleTimeString();
    }
  } catch (error) { document.getElementById('updated').textContent = 'not reachable: ' + error; }
  setTimeout(refresh, REFRESH_MS);
}
arrange();
setTimeout(refresh, REFRESH_MS);
"""

INDEX = """<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>tuner dashboard</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>{style}</style></head><body>
<h1>tuner dashboard</h1>
<p class=note>Every experiment under {where}. Click a column to sort; tick two or more sweeps of one metric to
compare them.</p>
<div class=tools>
<label>name <input id=name-filter type=search placeholder="filter by name"></label>
<label>state <select id=state-filter><option value="">any</option>{states}</select></label>
<button id=compare type=button>Compare ticked</button>
<span id=count class=note>{count} experiments</span> <span id=updated class=note></span>
</div>
<div class=wide><table id=sweeps><thead><tr>{head}</tr></thead>
<tbody>
{rows}
</tbody></table></div>
<script>{script}</script>
</body></html>
"""
