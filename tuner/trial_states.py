"""Trial statuses as the sweep really left them, and a fix for the ones Ray saves stale.

Ray re-serialises a trial into its experiment state only when it marks the trial dirty. A trial that
HyperBand paused and later stops without restarting it (it has no live actor) is never marked, so the
saved state keeps calling a finished trial PAUSED: the end-of-sweep summary would count it as
unfinished, ``tuner review`` would show it paused and ``tuner resume`` would train it again.

``StatusRecorder`` keeps the statuses of the controller's last step (after Ctrl-C that is the state the
final checkpoint describes, before Ray's clean-up marks running trials terminated), and
``repair_saved_statuses`` writes the finished ones back into the saved state.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from ray.tune import Callback

FINISHED = ("TERMINATED", "ERROR")
UNFINISHED = ("PENDING", "RUNNING", "PAUSED")

# Last step's statuses per experiment folder. Kept outside the callback because ``tuner resume`` runs
# the unpickled copy that Ray restores from tuner.pkl, not an object this process can hold.
_last_step: dict[str, dict[str, str]] = {}


class StatusRecorder(Callback):
    """Remembers every trial's status at the end of each controller step."""

    def __init__(self, folder: str) -> None:
        self.folder = _key(folder)

    def on_step_end(self, iteration: int, trials: list, **info: Any) -> None:
        _last_step[self.folder] = {t.trial_id: t.status for t in trials}


def _key(folder: str | Path) -> str:
    return str(folder).rstrip("/") if "://" in str(folder) else str(Path(folder).resolve())


def forget(folder: str | Path) -> None:
    """Drop what an earlier run in this process recorded, so a failed start is not read as a finish."""
    _last_step.pop(_key(folder), None)


def last_step(folder: str | Path) -> dict[str, str] | None:
    """Statuses at the sweep's last step, or None when no recorder ran for this folder."""
    return _last_step.get(_key(folder))


def repair_saved_statuses(folder: str | Path, statuses: dict[str, str]) -> list[str]:
    """Mark trials finished in the saved experiment state where the sweep finished them.

    Only moves a trial from an unfinished status to the finished one it really reached; anything else
    in the file is left as it was. ``folder`` may be a storage URI. Returns the ids it changed.
    """
    from tuner import storage
    from tuner.experiment import latest_state_name

    name = latest_state_name(folder)
    if name is None:
        return []
    state = json.loads(storage.read_text(folder, name) or "{}")
    changed = []
    for entry in state.get("trial_data", []):
        trial = json.loads(entry[0])
        real = statuses.get(trial.get("trial_id"))
        if real in FINISHED and trial.get("status") in UNFINISHED:
            trial["status"] = real
            entry[0] = json.dumps(trial, indent=2)
            changed.append(trial["trial_id"])
    if changed:
        _replace(folder, name, json.dumps(state))
    return changed


def _replace(folder: str | Path, name: str, text: str) -> None:
    """Swap the file in one step: a reader (or a crash) never meets half of it."""
    from tuner import storage

    local = storage.local_path(str(folder))
    if local is None:  # an object store replaces whole objects on write
        storage.write_text(folder, name, text)
        return
    scratch = Path(local) / f".{name}.repair"
    scratch.write_text(text, encoding="utf-8")
    os.replace(scratch, Path(local) / name)
