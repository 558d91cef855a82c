"""The report while the sweep runs: rewritten every so often, the page reloading itself until the sweep ends.

``LiveReport`` is a Tune callback in the driver. Every ``every_s`` seconds it rebuilds ``EXP/report.html``
from the folder (the same page ``tuner report`` writes) with a refresh tag, so a browser left open on it
follows the sweep. The page is built by a child process (tuner/review/report/page_file.py, which imports no
Ray): Tune's loop calls its callbacks between results, and a function trainable waits at each report until
that loop takes it, so a page built on the loop (seconds on a big sweep) would hold every trial that reported
meanwhile; built on a thread, it would share the driver's interpreter with that loop, and the memory it takes
to read thousands of trials would stay with the driver for the rest of the sweep. Building never takes more
than a tenth of the sweep's time (a slow build stretches the interval). When the sweep ends, however it ends,
the runner stops a live build in flight (``cancel``: the final page replaces it, and waiting for it would
put its seconds after the sweep's) and writes the final page, without the tag, itself: the sweep is over, and
a child would import the page's libraries again, where the driver (a notebook's, a test's) may have them
already. A sweep over before the first live page has none: ``tuner report`` writes it.
Only local folders get a live page (a bucket has no browser-openable path).
"""

from __future__ import annotations

import logging
import os
import subprocess
import time
from pathlib import Path
from typing import TYPE_CHECKING, TypedDict

from ray.tune import Callback

from tuner import storage
from tuner.review.report import page_file

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

log = logging.getLogger(__name__)
EVERY_S = 30.0
SHARE = 0.1  # of the sweep's time at most spent building the live page
_building: dict[str, subprocess.Popen[bytes]] = {}  # experiment folder -> its live page's build in flight


def _env() -> dict[str, str]:
    """The child's environment: it imports this same tuner (a notebook may have put it on the path)."""
    root = str(Path(__file__).resolve().parents[3])  # the folder holding this tuner/
    return {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [root, os.environ.get("PYTHONPATH")]))}


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
        self._started = 0.0  # when the build in flight began
        self._child: subprocess.Popen[bytes] | None = None

    def __getstate__(self) -> _ReportState:
        return {"folder": self.folder, "every_s": self.every_s}

    def __setstate__(self, state: _ReportState) -> None:
        self.__dict__.update(type(self)(state["folder"], state["every_s"]).__dict__)

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        now = time.monotonic()
        child = self._child  # its own, which ``settle`` may have waited for and let go of
        if child is not None:
            if child.poll() is None:
                return  # one build at a time
            self._child = None
            if _building.get(self.folder) is child:
                del _building[self.folder]
            if child.returncode != 0:  # a page that fails to build must never stop the sweep
                log.debug("live report not written (exit code %s)", child.returncode)
            took = now - self._started
            self._interval = max(self.every_s, took / SHARE)
            self._next = now + self._interval
        if now < self._next or not any(t.has_reported_at_least_once for t in trials):
            return
        self._next, self._started = float("inf"), now  # the next is set when this build has ended
        self._child = _building[self.folder] = subprocess.Popen(
            page_file.command(storage.here(self.folder), self.every_s),
            env=_env(),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )


def building(folder: str) -> bool:
    """Whether a live page of ``folder`` is being built now."""
    child = _building.get(folder)
    return child is not None and child.poll() is None


def settle(folder: str) -> None:
    """Wait for a live page of ``folder`` in flight."""
    child = _building.pop(folder, None)
    if child is not None:
        child.wait()


def cancel(folder: str) -> bool:
    """Stop a live build of ``folder`` in flight, which the final page is about to replace (waiting for it
    would only put its seconds after the sweep's); whether a live build was started since the last one ended."""
    child = _building.pop(folder, None)
    if child is None:
        return False
    if child.poll() is None:
        child.terminate()  # the child cleans up its unfinished file on SIGTERM (page_file.py)
    child.wait()
    return True
