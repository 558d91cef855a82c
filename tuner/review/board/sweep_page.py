"""A sweep's page in the dashboard: the report ``tuner report`` writes (tuner/review/report/page.py), with the
commands that continue the sweep above it, kept live while the sweep runs.

The report is drawn once per change of the experiment. The page asks every few seconds whether it changed
and, when it did, swaps the report's content in place (its figures drawn again) and keeps the reader where
they were: no reload that would lose the scroll, nor load plotly's script again.
"""

from __future__ import annotations

import html
import json
import shlex

from tuner import storage
from tuner.review.board.catalog import FINISHED, INTERRUPTED, RUNNING, Row

POLL_S = 5  # how often a running sweep's page asks whether it changed


def split_report(page: str) -> tuple[str, str]:
    """The report's head (up to its ``<body>``, plotly's script inside) and the content of its body."""
    head, _, rest = page.partition("<body>")
    content, _, _ = rest.rpartition("</body>")
    return head + "<body>", content


def commands(row: Row) -> list[tuple[str, str]]:
    """What a user would run next on this sweep, in words and as a command."""
    folder = shlex.quote(row.sweep.folder)
    found = []
    if row.state == INTERRUPTED:
        found.append(("continue it where it stopped", f"tuner resume {folder}"))
    if row.state in (FINISHED, INTERRUPTED) and row.grows:
        more = 2 * max(row.trials, row.planned or 0)  # more than it plans, or resume refuses it
        found.append(
            (
                f"grow it to {more} trials (the searcher keeps all it learnt)",
                f"tuner resume {folder} --num-samples {more}",
            )
        )
    if storage.local_path(row.sweep.folder) is not None:
        found.append(("its learning curves in TensorBoard", f"tuner tensorboard {folder}"))
    found.append(("its trials in the terminal", f"tuner results {folder}"))
    return found


def bar(row: Row) -> str:
    """The strip above the report: back to the index, the sweep's state, and the commands."""
    state = html.escape(row.state)
    live = " · this page follows it as results come" if row.state == RUNNING else ""
    items = "".join(
        f"<li>{html.escape(words)}: <code>{html.escape(command)}</code></li>"
        for words, command in commands(row)
    )
    return (
        f"<span class='state {state}'>{state}</span>{live}"
        f"<span class=note id=updated></span><ul class=commands>{items}</ul>"
    )


def page(report: str, row: Row, version: str) -> str:
    """The report with the dashboard's strip above it and the script that keeps it live."""
    head, content = split_report(report)
    script = SCRIPT.replace("POLL_MS", str(POLL_S * 1000))
    settings = json.dumps({"version": version, "running": row.state == RUNNING}).replace("</", "<\\/")
    return (
        f"{head}\n<style>{STYLE}</style>"
        f"<nav class=board><a href='/'>&larr; every experiment</a> · <b>{html.escape(row.sweep.name)}</b>"
        f"<div id=board-bar>{bar(row)}</div></nav>\n"
        f'<div id=report data-version="{html.escape(version)}" data-swaps="0">{content}</div>\n'
        f"<script type='application/json' id=board-settings>{settings}</script>"
        f"<script>{script}</script>\n</body></html>\n"
    )


def update(report: str, row: Row, version: str) -> str:
    """What a live page fetches when the sweep changed: the report's new content and the strip, as JSON."""
    _, content = split_report(report)
    return json.dumps({"version": version, "running": row.state == RUNNING, "bar": bar(row), "html": content})


STYLE = """
nav.board { background: #f6f8fa; border: 1px solid #ddd; padding: 8px 12px; margin-bottom: 1em; }
nav.board ul.commands { margin: 0.4em 0 0 0; padding-left: 1.2em; font-size: 0.9em; }
nav.board code { background: #fff; border: 1px solid #e3e3e3; padding: 0 4px; overflow-wrap: anywhere; }
.state { padding: 1px 6px; border-radius: 3px; margin-right: 0.4em; }
.state.running { background: #dff3df; color: #176117; } .state.interrupted { background: #fff1d6; color: #8a5300; }
.state.failed { background: #fbe0e0; color: #a00; } .state.finished { background: #e5eefa; color: #1f4f8f; }
#updated { margin-left: 1em; }
"""

SCRIPT = """
let board = JSON.parse(document.getElementById('board-settings').textContent);
function runScripts(box) {
  for (const old of box.querySelectorAll('script')) {
    const fresh = document.createElement('script');
    if (old.type) fresh.type = old.type;
    if (old.id) fresh.id = old.id;
    fresh.textContent = old.textContent;
    old.replaceWith(fresh);
  }
}
async function poll() {
  try {
    const response = await fetch(location.pathname + '/update?version=' + encodeURIComponent(board.version),
                                 {cache: 'no-store'});
    if (response.status === 200) {
      const data = await response.json();
      const box = document.getElementById('report');
      const x = window.scrollX, y = window.scrollY;
      box.style.minHeight = box.offsetHeight + 'px';  // the page keeps its height while the figures redraw
      box.innerHTML = data.html;
      runScripts(box);
      document.getElementById('board-bar').innerHTML = data.bar;
      window.scrollTo(x, y);
      setTimeout(() => { box.style.minHeight = ''; }, 2000);
      board = {version: data.version, running: data.running};
      box.dataset.version = data.version;
      box.dataset.swaps = String(Number(box.dataset.swaps) + 1);  // swapped in place: a reload starts at 0
    }
    const stamp = document.getElementById('updated');
    if (stamp) stamp.textContent = 'checked ' + new Date().toLocaleTimeString();
  } catch (error) {
    const stamp = document.getElementById('updated');
    if (stamp) stamp.textContent = 'not reachable: ' + error;
  }
  if (board.running) setTimeout(poll, POLL_MS);
}
if (board.running) setTimeout(poll, POLL_MS);
"""
