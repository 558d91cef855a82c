"""Part 23: Ray's own files in an experiment, their names, and the one parser of its saved state.

Ray's ``experiment_state-*.json`` is undocumented (``trial_data``: each trial's JSON and its run metadata JSON);
ExperimentAnalysis reads the same file but unpickles every config and loads every result. Read by the experiment
reader (statuses, error files), the resume and the status repair (statuses.py); through tuner/storage.py, so a
bucket URI reads like a folder. Seen in Ray 2.60, checked on 2.50.0 and 2.55.1.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TypedDict

from tuner import storage
from tuner.errors import UsageError
from tuner.value_types import Value

# Ray's file names in an experiment folder
OPEN_STATUSES = ("PENDING", "RUNNING", "PAUSED")  # a trial's status in Ray's state while it is not done
STATE_PREFIX = "experiment_state-"
TUNER_PICKLE = "tuner.pkl"
SEARCH_STATE_PREFIX = "search_gen_state-"
VARIANT_STATE_PREFIX = "basic-variant-state-"

# Keys Ray adds to every result; they say nothing about what the trainable itself reported.
BOOKKEEPING_KEYS = {
    "done",
    "training_iteration",
    "trial_id",
    "date",
    "timestamp",
    "time_this_iter_s",
    "time_total_s",
    "pid",
    "hostname",
    "node_ip",
    "config",
    "time_since_restore",
    "iterations_since_restore",
    "checkpoint_dir_name",
    "should_checkpoint",
    "experiment_tag",
    "timesteps_total",
    "episodes_total",
    "timesteps_since_restore",
    "warmup_time",
    "logdir",
}


class RayState(TypedDict):
    """Ray's ``experiment_state-*.json`` as tuner reads it: ``trial_data`` holds, per trial, its JSON and its run
    metadata's JSON (the file's other parts are Ray's alone, kept as they are when it is rewritten)."""

    trial_data: list[list[str]]


class TrialState(TypedDict, total=False):
    """One trial as Ray's state saves it, the parts tuner reads (``saved_trial_states`` gives them all; a
    reader takes an empty one for a trial the state does not list)."""

    status: str
    dir: str | None  # its folder, inside the experiment
    error_file: str | None
    made: int | None  # where it came in the order Tune made the trials
    config: dict[str, Value] | None


def bookkeeping(key: str) -> bool:
    """Whether a result key is Ray's bookkeeping rather than something the trainable reported."""
    return key in BOOKKEEPING_KEYS or key.startswith("config/")


def latest_state_name(folder: str | Path) -> str | None:
    """The newest of Ray's ``experiment_state-*.json`` files in the folder (one per driver session)."""
    names = [n for n in storage.list_names(folder, STATE_PREFIX) if n.endswith(".json")]
    return names[-1] if names else None


def read_state(folder: str | Path, name: str) -> RayState:
    """Ray's saved experiment state, parsed; a file that does not parse is a one-line error."""
    where = f"{str(folder).rstrip('/')}/{name}"
    try:
        state = json.loads(storage.read_text(folder, name) or "")
        if not isinstance(state.get("trial_data"), list):
            raise ValueError("no trial_data list")
        return state
    except (ValueError, AttributeError) as exc:
        raise UsageError(
            f"{where} is corrupted ({type(exc).__name__}: {exc}); the experiment cannot be read"
        ) from None


def saved_trial_states(folder: str | Path, name: str | None = None) -> dict[str, TrialState]:
    """Status, folder and error file per trial id, from Ray's experiment state (absent early in a run);
    the newest state file unless ``name`` picks another."""
    name = name or latest_state_name(folder)
    if name is None:
        return {}
    where = f"{str(folder).rstrip('/')}/{name}"
    out: dict[str, TrialState] = {}
    try:
        for trial_json, runtime_json in read_state(folder, name)["trial_data"]:
            trial = json.loads(trial_json)
            out[trial["trial_id"]] = {
                "status": trial["status"],
                "dir": trial.get("relative_logdir"),
                "error_file": error_filename(runtime_json),
                "made": _made(trial.get("experiment_tag")),
                "config": trial.get("config") if isinstance(trial.get("config"), dict) else None,
            }
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{where} is corrupted ({type(exc).__name__}: {exc}); the experiment cannot be read"
        ) from None
    return out


# Ray's runtime record of a trial: its error file's name comes first, before the last result (kilobytes a trial)
_ERROR_FILENAME = re.compile(r'^\s*"error_filename": (null|"(?:[^"\\]|\\.)*"),?$', re.M)


def error_filename(runtime_json: str) -> str | None:
    """The error file's name in a trial's runtime record, read without parsing the rest of it when Ray wrote it as
    it does (a top-level key on a line of its own, before the last result); parsed whole otherwise."""
    last_result = runtime_json.find('"last_result"')
    found = _ERROR_FILENAME.search(runtime_json, 0, last_result if last_result >= 0 else len(runtime_json))
    if found is None:
        return json.loads(runtime_json).get("error_filename")
    return json.loads(found.group(1))


def _made(tag: str | None) -> int | None:
    """Where a trial came in the order Tune made them: its experiment tag starts with that number
    (``3_lr=0.01,...``); the state file itself lists trials in no particular order."""
    head = str(tag or "").split("_", 1)[0]
    return int(head) if head.isdigit() else None


def replaced_trial_dirs(folder: str | Path) -> set[str]:
    """Trial folders an earlier driver session saved that the newest one no longer lists: trials that
    ``tuner resume --errored restart`` replaced with a new trial (in a new folder)."""
    names = [n for n in storage.list_names(folder, STATE_PREFIX) if n.endswith(".json")]
    if len(names) < 2:
        return set()
    latest = saved_trial_states(folder, names[-1])
    current = {s["dir"] for s in latest.values()}
    earlier = {s["dir"] for name in names[:-1] for s in saved_trial_states(folder, name).values()}
    return {d for d in earlier - current if d}
