"""Each sweep's report as the dashboard serves it, drawn again only when the experiment changed.

A report takes a second or more on a large sweep; a live page asks every few seconds, and several readers
may have it open. One drawing per change of the experiment's signature (tuner/review/board/catalog.py) serves
them all, and a running sweep is drawn again at most every ``LIVE_EVERY_S``.
"""

from __future__ import annotations

import html
import logging
import shlex
import threading
import time
from collections.abc import Hashable
from dataclasses import dataclass

from tuner.review.board.catalog import LIVE_EVERY_S, Catalog, Row, Sweep, signature, summarize

log = logging.getLogger(__name__)
KEPT_AT_MOST = 16  # reports kept drawn at once
# One drawing at a time: the first ones import plotly, numpy and scipy, which two threads must never do at
# once (one finds the other's module half made); on the GIL, drawings side by side gain nothing anyway.
DRAWING = threading.Lock()
# what drawing imports (a second on a small box): imported while nobody waits, not at the first page
_DRAWING_MODULES = (
    "tuner.review.report.page",
    "tuner.review.report.importance",
    "tuner.review.report.scheduler_panel",
    "plotly.graph_objects",
    "plotly.subplots",
    "plotly.offline",
    "scipy.special",
)


def warm_up() -> None:
    """Import what drawing needs, before the first page asks (the server does it before it gives its address)."""
    import importlib

    with DRAWING:
        for name in _DRAWING_MODULES:
            try:
                importlib.import_module(name)
            except ImportError:  # the drawing says so where it matters
                return


@dataclass(frozen=True)
class Drawn:
    """A sweep's report as drawn from one state of its folder, and that state's row."""

    mark: Hashable
    version: str
    at: float
    report: str
    row: Row


class Reports:
    """The latest report of each sweep asked for."""

    def __init__(self, catalog: Catalog) -> None:
        self._catalog = catalog  # its last reading of an experiment serves when the experiment is unchanged
        self._drawn: dict[str, Drawn] = {}
        self._lock = threading.Lock()

    def current(self, sweep: Sweep) -> Drawn:
        """The sweep's report as its folder is now (drawn again if it changed)."""
        from tuner.claim import held_elsewhere

        running = held_elsewhere(sweep.folder)
        mark = signature(sweep.folder, running)
        kept = self._kept(sweep.folder, mark, running)
        if kept is not None:
            return kept
        with DRAWING:
            kept = self._kept(sweep.folder, mark, running)  # drawn while this one waited its turn
            return kept if kept is not None else self._draw(sweep, mark, running)

    def _kept(self, folder: str, mark: Hashable, running: bool) -> Drawn | None:
        with self._lock:
            drawn = self._drawn.get(folder)
        if drawn is not None and (
            drawn.mark == mark and mark is not None or running and time.monotonic() - drawn.at < LIVE_EVERY_S
        ):
            return drawn
        return None

    def _draw(self, sweep: Sweep, mark: Hashable, running: bool) -> Drawn:
        from tuner import experiment
        from tuner.review.report.page import build

        now = time.monotonic()
        record = self._catalog.record(sweep.folder, mark) or experiment.load(sweep.folder, running=running)
        version = f"{abs(hash((mark, now if mark is None else 0))):x}"
        try:
            report = build(record, running=running)
        except Exception as exc:  # noqa: BLE001 - the sweep's row and commands are still worth showing
            log.warning("the report of %s could not be drawn: %s", sweep.folder, exc)
            log.debug("where", exc_info=True)
            report = unreadable(sweep, exc)
        drawn = Drawn(mark, version, now, report, summarize(sweep, record, running))
        with self._lock:
            self._drawn[sweep.folder] = drawn
            if len(self._drawn) > KEPT_AT_MOST:  # each holds plotly's script: a few MB
                oldest = min(self._drawn, key=lambda folder: self._drawn[folder].at)
                del self._drawn[oldest]
        return drawn


def unreadable(sweep: Sweep, problem: Exception) -> str:
    """A page in the report's place that says why the report could not be drawn."""
    why = html.escape(f"{type(problem).__name__}: {problem}".rstrip("."))
    again = html.escape(f"tuner report {shlex.quote(sweep.folder)} --debug")
    return (
        f"<!DOCTYPE html><html lang=en><head><meta charset=utf-8><title>{html.escape(sweep.name)}</title></head>"
        f"<body><p>The report of this sweep could not be drawn: {why}. <code>{again}</code> shows where.</p>"
        "</body></html>"
    )
