"""Every Ray Tune behaviour tuner works around, in one place, each with the Ray version it was seen in.

tests/unit/test_ray_compat.py checks that each behaviour is still there (and fails loudly when an upgrade
changes it), so a Ray upgrade cannot silently break resume, the search plan or the terminal.

1. Stale statuses (Ray 2.60): Ray re-serialises a trial into its experiment state only when it marks the
   trial dirty. A trial that sync HyperBand paused and later stops without restarting it (no live actor)
   is never marked, so the saved state keeps calling a finished trial PAUSED. ``StatusRecorder`` writes
   the controller's statuses at each step into a file beside the experiment (tuner/storage.py's
   ``sidecar``); ``repair_saved_statuses`` writes the finished ones back into Ray's saved state.
2. Completion without a result (Ray 2.60): Tune completes a trial that HyperBand stopped while paused with
   ``result=None``; a model-based searcher then never learns that trial's value (BayesOpt waits forever for
   its random phase to end). ``LastResultOnCompletion`` hands the searcher the trial's last result.
3. A benign sync race (Ray 2.60): Ray saves searcher state to ``.<uuid>-tmp-…`` and renames it while the
   previous upload of the experiment folder may still list files; that upload fails on the vanished
   name, and the next sync (forced at the end of every sweep) copies it anyway. Its traceback is hidden.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path
from typing import Any

from ray.tune import Callback

FINISHED = ("TERMINATED", "ERROR")
UNFINISHED = ("PENDING", "RUNNING", "PAUSED")
STATUS_FILE = ".tuner-statuses.json"


# --- 1. stale statuses ------------------------------------------------------------------------------


def status_file(folder: str) -> str:
    from tuner.storage import sidecar

    return str(sidecar(folder, STATUS_FILE))


class StatusRecorder(Callback):
    """Writes every trial's status at the end of each controller step to ``path`` (when it changed).

    After Ctrl-C that is the state the final checkpoint describes, before Ray's clean-up marks running
    trials terminated. A file, not this object, carries it: ``tuner resume`` runs the copy Ray unpickles
    from tuner.pkl, not an object the driver holds.
    """

    def __init__(self, folder: str) -> None:
        self.path = status_file(folder)
        self._last: dict[str, str] | None = None

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        statuses = {t.trial_id: t.status for t in trials}
        if statuses != self._last:
            self._last = statuses
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
            write_atomically(self.path, json.dumps(statuses))


def forget_last_step(folder: str) -> None:
    """Before a run: what an earlier run recorded must not read as this one's finish."""
    Path(status_file(folder)).unlink(missing_ok=True)


def last_step(folder: str) -> dict[str, str] | None:
    """Statuses at the sweep's last step, or None when no recorder ran for this folder."""
    try:
        return json.loads(Path(status_file(folder)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def repair_saved_statuses(folder: str | Path, statuses: dict[str, str]) -> list[str]:
    """Mark trials finished in Ray's saved experiment state where the sweep finished them.

    Only moves a trial from an unfinished status to the finished one it really reached; anything else
    in the file is left as it was. ``folder`` may be a storage URI. Returns the ids it changed.
    """
    from tuner import storage
    from tuner.ray_state import latest_state_name, read_state

    name = latest_state_name(folder)
    if name is None:
        return []
    state = read_state(folder, name)
    changed = []
    for entry in state.get("trial_data", []):
        trial = json.loads(entry[0])
        real = statuses.get(trial.get("trial_id"))
        if real in FINISHED and trial.get("status") in UNFINISHED:
            trial["status"] = real
            entry[0] = json.dumps(trial, indent=2)
            changed.append(trial["trial_id"])
    if changed:
        local = storage.local_path(str(folder))
        text = json.dumps(state)
        if local is None:  # an object store replaces whole objects on write
            storage.write_text(folder, name, text)
        else:
            write_atomically(str(Path(local) / name), text)
    return changed


def write_atomically(path: str, text: str) -> None:
    """Swap the file in one step: a reader (or a crash) never meets half of it."""
    target = Path(path)
    scratch = target.with_name(f".{target.name}.partial")
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, target)


# --- 2. completion without a result -----------------------------------------------------------------


class LastResultOnCompletion:
    """Mixin for a searcher: remembers each trial's last result and completes with it when Tune gives none."""

    def __init__(self) -> None:
        self.last_results: dict[str, dict] = {}

    def remember(self, trial_id: str, result: dict) -> None:
        self.last_results[trial_id] = result

    def completed(self, trial_id: str, result: dict | None, error: bool) -> dict | None:
        last = self.last_results.pop(trial_id, None)
        return last if result is None and not error else result


# --- 3. a benign sync race --------------------------------------------------------------------------


class _SkipRenamedScratchFileSync(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        if not record.getMessage().startswith("Saving experiment state to storage"):
            return True
        error = record.exc_info[1] if record.exc_info else None
        return not (isinstance(error, FileNotFoundError) and "-tmp-" in str(error))


SYNC_LOGGER = "ray.tune.execution.experiment_state"


def quiet_benign_sync_races() -> None:
    """Install the filter once on the logger Ray reports experiment-state syncs through."""
    ray_logger = logging.getLogger(SYNC_LOGGER)
    if not any(isinstance(f, _SkipRenamedScratchFileSync) for f in ray_logger.filters):
        ray_logger.addFilter(_SkipRenamedScratchFileSync())
