"""The report's file in an experiment folder: where it lies, and writing it in one step.

Run as a module (``python -m tuner.review.report.page_file FOLDER REFRESH_S``), it is the child process that
writes the live page while a sweep runs (tuner/launch/watching/live_report.py): it imports the page's
libraries and not Ray's, which a page has no use for (a second and a half of a core at every build, on the
cores the trials run on), and it runs at a lower CPU priority than the trials (``LIVE_NICENESS``): a page late
by a second costs nothing, a trial held by it costs the sweep's time.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from tuner import storage
from tuner.folder.names import REPORT_FILE

if TYPE_CHECKING:
    from tuner.experiment import ExperimentRecord

LIVE_NICENESS = 10  # added to a live page's niceness: on busy cores the trials and the driver go first


def report_path(folder: str) -> Path | None:
    """``FOLDER/report.html``; None for a bucket (it has no browser-openable path)."""
    local = storage.local_path(folder)
    return Path(local) / REPORT_FILE if local else None


def write(
    folder: str,
    refresh_s: float | None = None,
    running: bool | None = None,
    record: ExperimentRecord | None = None,
) -> Path | None:
    """Build the page from the folder (or from ``record``, the experiment as just read) and replace
    ``report.html`` in one step; None for a bucket. ``running`` says whether the sweep runs now (default: yes
    for a live page, else as the experiment's claim says)."""
    from tuner import experiment
    from tuner.review.report.page import build

    path = report_path(folder)
    if path is None:
        return None
    running = running if running is not None else (True if refresh_s else None)
    page = build(record or experiment.load(folder, running=running), refresh_s=refresh_s)
    storage.write_atomically(path, page)
    return path


def command(folder: str, refresh_s: float | None) -> list[str]:
    """The child that writes the page: a live one while the sweep runs (``refresh_s``), else the final one."""
    return [sys.executable, "-m", __name__, folder, str(float(refresh_s or 0))]


if __name__ == "__main__":
    import signal

    # a live page stopped because the final one replaces it: SystemExit lets the unfinished file be removed
    signal.signal(signal.SIGTERM, lambda signum, _frame: sys.exit(128 + signum))
    refresh = float(sys.argv[2])
    if refresh:
        import os

        os.nice(LIVE_NICENESS)
    write(sys.argv[1], refresh_s=refresh or None, running=bool(refresh))
