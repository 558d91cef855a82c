"""The report while the sweep runs: rewritten every so often, the page reloading itself until the sweep ends.

``LiveReport`` is a Tune callback in the driver. Every ``every_s`` seconds it rebuilds ``EXP/report.html``
from the folder (the same page ``tuner report`` writes) with a refresh tag, so a browser left open on it
follows the sweep. The build runs on a thread of its own: Tune's loop calls its callbacks between results, and
a function trainable waits at each report until that loop takes it, so a page built on the loop (seconds on a
big sweep) would hold every trial that reported meanwhile. The thread shares the driver's interpreter with
Tune's loop, so building never takes more than a tenth of the sweep's time (a slow build stretches the
interval). When the sweep ends, however it ends, the runner waits for
a build in flight (``settle``) and writes the final page over a live one, without the tag (a sweep over before
the first live page has none; ``tuner report`` writes it). Only local folders get a live page (a bucket has no
browser-openable path).
"""

from __future__ import annotations

import logging
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ray.tune import Callback

from tuner import storage
from tuner.folder.names import REPORT_FILE

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

log = logging.getLogger(__name__)
EVERY_S = 30.0
SHARE = 0.1  # of the sweep's time at most spent building the live page
_building: dict[str, threading.Thread] = {}  # experiment folder -> its live page's build in flight


def report_path(folder: str) -> Path | None:
    local = storage.local_path(folder)
    return Path(local) / REPORT_FILE if local else None


def write(folder: str, refresh_s: float | None = None) -> Path | None:
    """Build the page from the folder and replace ``report.html`` in one step; None for a bucket."""
    from tuner.review import experiment
    from tuner.review.report.page import build

    path = report_path(folder)
    if path is None:
        return None
    page = build(experiment.load(folder, running=True if refresh_s else None), refresh_s=refresh_s)
    storage.write_atomically(path, page)
    return path


class _ReportState(TypedDict):
    """What a pickled live report keeps (its timing starts afresh)."""

    folder: str
    every_s: float


class LiveReport(Callback):
    """Rewrites the report while trials run."""

    def __init__(self, folder: str, every_s: float = EVERY_S) -> None:
        self.folder, self.every_s = folder, every_s
        self._next = time.monotonic() + every_s / 3  # a first page soon after the first results
        self._interval = every_s

    def __getstate__(self) -> _ReportState:
        return {"folder": self.folder, "every_s": self.every_s}

    def __setstate__(self, state: _ReportState) -> None:
        self.__dict__.update(type(self)(state["folder"], state["every_s"]).__dict__)

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        now = time.monotonic()
        if now < self._next or not any(t.has_reported_at_least_once for t in trials):
            return
        self._next = float("inf")  # set again when this build ends
        build = threading.Thread(target=self._build, name="tuner-live-report", daemon=True)
        _building[self.folder] = build
        build.start()

    def _build(self) -> None:
        started = time.monotonic()
        try:
            write(storage.here(self.folder), refresh_s=self.every_s)
        except Exception:  # noqa: BLE001 - a page that fails to build must never stop the sweep
            log.debug("live report not written", exc_info=True)
        took = time.monotonic() - started
        self._interval = max(self.every_s, took / SHARE)
        self._next = time.monotonic() + self._interval


def building(folder: str) -> bool:
    """Whether a live page of ``folder`` is being built now."""
    build = _building.get(folder)
    return build is not None and build.is_alive()


def settle(folder: str) -> None:
    """Wait for a live page of ``folder`` in flight, so that nothing writes a live page after the final one."""
    build = _building.pop(folder, None)
    if build is not None:
        build.join()
