"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

1. Stale statuses (Ray 2.60): Ray re-serialises a trial into its experiment state only when it marks the
trial dirty. A trial that sync HyperBand paused and later stops without restarting it (no live actor)
is never marked, so the saved state keeps calling a finished trial PAUSED. ``StatusRecorder`` writes
the controller's statuses at each step into a file beside the experiment (tuner/storage.py's
``sidecar``); ``repair_saved_statuses`` writes the finished ones back into Ray's saved state; ``reopen_saved_trials``
marks paused the trials a refused write (a full disk) errored, which Ray would otherwise never continue;
``settle_saved_statuses`` does both in one read at a sweep's end.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from ray.tune import Callback

from tuner.folder.names import STATUS_SIDECAR as STATUS_FILE
from tuner.open_trials import view_of
from tuner.ray_compat.state_file import OPEN_STATUSES
from tuner.storage import write_atomically

if TYPE_CHECKING:
    from ray.tune.experiment import Trial

FINISHED = ("TERMINATED", "ERROR")
UNFINISHED = OPEN_STATUSES


def status_file(folder: str) -> str:
    from tuner.storage import sidecar

    return str(sidecar(folder, STATUS_FILE))


class StatusRecorder(Callback):
    """Keeps every trial's status at the end of each controller step, and writes the last step's to ``path``
    when the run ends (Ray ends its callbacks after its clean-up, on a stop and on an error too).

    After Ctrl-C that is the state the final checkpoint describes, before Ray's clean-up marks running
    trials terminated. A file, not this object, carries it: ``tuner resume`` runs the copy Ray unpickles
    from tuner.pkl, not an object the driver holds. Written once, not at each step: instant trials change
    a status at almost every step, and a file rewritten each time cost a millisecond or two a trial. Each step
    looks only at the trials still open (``OpenTrials``): a finished trial's status is kept from its last step.
    """

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._last: dict[str, str] | None = None

    @property
    def path(self) -> str:
        from tuner.storage import sidecar_of

        return sidecar_of(self.__dict__, STATUS_FILE) or ""

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        view = view_of(self)
        view.update(trials)
        self._last = view.statuses

    def on_experiment_end(self, trials: list[Trial], **info: object) -> None:
        if self._last is None:
            return
        Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        write_atomically(self.path, json.dumps(self._last))


def forget_last_step(folder: str) -> None:
    """Before a run: what an earlier run recorded must not read as this one's finish."""
    Path(status_file(folder)).unlink(missing_ok=True)


def last_step(folder: str) -> dict[str, str] | None:
    """Statuses at the sweep's last step, or None when no recorder ran for this folder."""
    try:
        return json.loads(Path(status_file(folder)).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def reopen_saved_trials(folder: str | Path, trial_ids: list[str]) -> list[str]:
    """Mark errored trials paused in Ray's saved state, so ``Tuner.restore`` continues them from their last
    checkpoint: trials whose error was the storage refusing a write, not their own code. Returns those changed."""
    return _set_saved_statuses(
        folder,
        lambda trial, _: "PAUSED" if trial["trial_id"] in trial_ids and trial["status"] == "ERROR" else None,
    )


def repair_saved_statuses(folder: str | Path, statuses: dict[str, str]) -> list[str]:
    """Mark trials finished in Ray's saved experiment state where the sweep finished them.

    Only moves a trial from an unfinished status to the finished one it really reached; anything else
    in the file is left as it was. ``folder`` may be a storage URI. Returns the ids it changed.
    """
    return _set_saved_statuses(folder, lambda trial, _: _finished(statuses, trial))


def settle_saved_statuses(
    folder: str | Path,
    statuses: dict[str, str] | None,
    refused_write: Callable[[str | None, str | None], bool],
) -> list[str]:
    """A sweep's end in one read (and at most one write) of Ray's saved state, the two changes above together:
    trials finished where ``statuses`` (the last step's, when kept) says so, and errored trials whose last failure
    ``refused_write(trial_dir, error_file)`` marked paused. Returns the trials reopened. At 8,000 trials each
    read of the state takes a third of a second of a Ctrl-C's end."""
    from tuner.ray_compat.state_file import error_filename

    reopened: list[str] = []

    def settle(trial: dict[str, object], runtime_json: str) -> str | None:
        if statuses is not None and (finished := _finished(statuses, trial)):
            return finished
        where = trial.get("relative_logdir")
        if trial["status"] == "ERROR" and refused_write(
            str(where) if where else None, error_filename(runtime_json)
        ):
            reopened.append(str(trial["trial_id"]))
            return "PAUSED"
        return None

    _set_saved_statuses(folder, settle)
    return reopened


def _finished(statuses: dict[str, str], trial: dict[str, object]) -> str | None:
    real = statuses.get(str(trial["trial_id"]))
    return real if real in FINISHED and trial["status"] in UNFINISHED else None


def _set_saved_statuses(
    folder: str | Path, new_status: Callable[[dict[str, object], str], str | None]
) -> list[str]:
    """Rewrite Ray's newest saved state where ``new_status(trial, runtime_json)`` names another status for a
    trial (its saved JSON, parsed; written whole, only when something changed); returns the trial ids changed."""
    from tuner import storage
    from tuner.ray_compat.state_file import latest_state_name, read_state

    name = latest_state_name(folder)
    if name is None:
        return []
    state = read_state(folder, name)
    changed = []
    for entry in state.get("trial_data", []):
        trial = json.loads(entry[0])
        status = new_status(trial, entry[1])
        if status is not None:
            trial["status"] = status
            entry[0] = json.dumps(trial, indent=2)
            changed.append(str(trial["trial_id"]))
    if changed:
        storage.write_text(folder, name, json.dumps(state))  # whole or not at all, folder or bucket
    return changed
