"""Reading an experiment folder: trials, their configs, metrics per epoch and checkpoints.

Plain files only (YAML, JSON, CSV): no Ray, no torch, so ``tuner results`` is quick and works on a
sweep that is still running or was killed.
"""

from __future__ import annotations

import csv
import json
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tuner.config import CONFIG_FILE, DEFAULT_STORAGE, SweepConfig, load_saved_config
from tuner.errors import UsageError


@dataclass
class TrialRecord:
    """One trial as its folder and the experiment state describe it."""

    trial_id: str
    path: Path
    status: str
    config: dict[str, Any]
    rows: list[dict[str, Any]] = field(default_factory=list)
    error: str = ""

    @property
    def epochs(self) -> int:
        return max((int(r.get("training_iteration") or 0) for r in self.rows), default=0)

    def values(self, metric: str) -> list[float]:
        return [v for v in (_number(r.get(metric)) for r in self.rows) if v is not None]

    def best(self, metric: str, mode: str) -> float | None:
        values = self.values(metric)
        if not values:
            return None
        return min(values) if mode == "min" else max(values)

    def last(self, metric: str) -> float | None:
        values = self.values(metric)
        return values[-1] if values else None

    def best_row(self, metric: str, mode: str) -> dict[str, Any] | None:
        scored = [(v, r) for r in self.rows if (v := _number(r.get(metric))) is not None]
        if not scored:
            return None
        pick = min if mode == "min" else max
        return pick(scored, key=lambda pair: pair[0])[1]


@dataclass
class Experiment:
    path: Path
    config: SweepConfig
    trials: list[TrialRecord]

    @property
    def metric(self) -> str:
        return self.config.metric or "loss"

    @property
    def mode(self) -> str:
        return self.config.mode or "min"

    def ranked(self) -> list[TrialRecord]:
        """Trials by their best metric, best first; trials with no result last."""
        sign = 1 if self.mode == "min" else -1
        return sorted(
            self.trials,
            key=lambda t: (
                t.best(self.metric, self.mode) is None,
                sign * (t.best(self.metric, self.mode) or 0.0),
            ),
        )

    def best_trial(self) -> TrialRecord | None:
        ranked = [t for t in self.ranked() if t.best(self.metric, self.mode) is not None]
        return ranked[0] if ranked else None

    def best_checkpoint(self, trial: TrialRecord) -> Path | None:
        """The checkpoint saved at the trial's best epoch, else its latest one still on disk."""
        row = trial.best_row(self.metric, self.mode)
        if row and row.get("checkpoint_dir_name") and (trial.path / row["checkpoint_dir_name"]).is_dir():
            return trial.path / row["checkpoint_dir_name"]
        kept = sorted(trial.path.glob("checkpoint_*"))
        return kept[-1] if kept else None


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def default_storage() -> Path:
    return Path(os.environ.get("TUNER_STORAGE_PATH", DEFAULT_STORAGE)).expanduser()


def locate(ref: str) -> Path:
    """An experiment by path, or by name under the default storage (``TUNER_STORAGE_PATH``)."""
    from tuner.storage import local_path

    plain = local_path(ref)
    if plain is None:
        raise UsageError(
            f"{ref} is in remote storage; this command reads a local folder: copy the experiment down "
            "(e.g. aws s3 sync, gsutil rsync) and pass that folder"
        )
    ref = plain
    candidates = [Path(ref).expanduser()]
    if "/" not in ref:
        candidates.append(default_storage() / ref)
    for path in candidates:
        if path.is_dir():
            if not (path / CONFIG_FILE).is_file():
                raise UsageError(f"{path} is not a tuner experiment (no {CONFIG_FILE})")
            return path.resolve()
    where = " or ".join(str(c) for c in candidates)
    raise UsageError(f"unknown experiment {ref!r}: no folder {where}")


def latest_state_name(folder: str | Path) -> str | None:
    """The newest of Ray's ``experiment_state-*.json`` files in the folder (one per driver session)."""
    from tuner import storage

    names = [n for n in storage.list_names(folder, "experiment_state-") if n.endswith(".json")]
    return names[-1] if names else None


def saved_trial_states(folder: str | Path) -> dict[str, dict[str, Any]]:
    """Status, folder and error per trial id, from Ray's experiment state (absent early in a run).

    ``folder`` may be a storage URI: this is what ``tuner resume`` reads from a bucket.
    """
    from tuner import storage

    name = latest_state_name(folder)
    if name is None:
        return {}
    where = f"{str(folder).rstrip('/')}/{name}"
    try:
        state = json.loads(storage.read_text(folder, name) or "")
        out = {}
        for trial_json, runtime_json in state["trial_data"]:
            trial, runtime = json.loads(trial_json), json.loads(runtime_json)
            out[trial["trial_id"]] = {
                "status": trial["status"],
                "dir": trial.get("relative_logdir"),
                "error_file": runtime.get("error_filename"),
            }
        return out
    except (ValueError, KeyError, TypeError) as exc:
        raise UsageError(
            f"{where} is corrupted ({type(exc).__name__}: {exc}); the experiment cannot be read"
        ) from None


def _read_rows(progress: Path) -> list[dict[str, Any]]:
    if not progress.is_file():
        return []
    with progress.open(newline="", encoding="utf-8") as f:
        return list(csv.DictReader(f))


def _last_error_line(trial_dir: Path, error_file: str | None) -> str:
    path = trial_dir / (error_file or "error.txt")
    if not path.is_file():
        return ""
    lines = [
        line.strip()
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines()
        if line.strip()
    ]
    return lines[-1] if lines else ""


def _trial_id(trial_dir: Path, rows: list[dict[str, Any]], known: dict[str, str]) -> str:
    """The trial id from Ray's state, else from the trial's own results, else from its folder name."""
    if trial_dir.name in known:
        return known[trial_dir.name]
    if rows and rows[0].get("trial_id"):
        return rows[0]["trial_id"]
    return trial_dir.name


def load(ref: str) -> Experiment:
    folder = locate(ref)
    config = load_saved_config(folder)
    states = saved_trial_states(folder)
    known = {state["dir"]: trial_id for trial_id, state in states.items() if state["dir"]}
    dirs = {p for p in folder.iterdir() if p.is_dir() and (p / "params.json").exists()}
    dirs |= {folder / d for d in known}
    trials = []
    for trial_dir in sorted(dirs):
        rows = _read_rows(trial_dir / "progress.csv")
        trial_id = _trial_id(trial_dir, rows, known)
        state = states.get(trial_id, {})
        params = trial_dir / "params.json"
        try:
            trial_config = json.loads(params.read_text(encoding="utf-8")) if params.is_file() else {}
        except ValueError:
            trial_config = {}
        status = state.get("status") or ("RUNNING" if rows else "PENDING")
        error = _last_error_line(trial_dir, state.get("error_file")) if status == "ERROR" else ""
        trials.append(TrialRecord(trial_id, trial_dir, status, trial_config, rows, error))
    return Experiment(folder, config, trials)
