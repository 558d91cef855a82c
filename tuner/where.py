"""Where an experiment is: a folder path, a storage URI, or a name under the default storage."""

from __future__ import annotations

import os
from pathlib import Path

from tuner import storage
from tuner.errors import UsageError
from tuner.folder.names import CONFIG_FILE
from tuner.settings import DEFAULT_STORAGE


def default_storage() -> str:
    """Where a name is looked for when no storage path is given: ``TUNER_STORAGE_PATH``, else ~/tuner_results."""
    return os.environ.get("TUNER_STORAGE_PATH") or DEFAULT_STORAGE


def locate(ref: str, storage_path: str | None = None) -> str:
    """An experiment by path or storage URI, or by name under ``storage_path`` (a folder or a URI; by default
    ``TUNER_STORAGE_PATH``, else ~/tuner_results): a plain folder of that name here does not hide an experiment
    there, and an experiment here beside one there is refused as ambiguous."""
    if not isinstance(ref, (str, os.PathLike)):
        raise UsageError(f"an experiment is a folder path, a storage URI or a name, not {ref!r}")
    ref = os.fspath(ref)
    if storage.is_uri(ref):
        folder = ref.rstrip("/")
        if not storage.exists(folder, CONFIG_FILE):
            raise UsageError(f"{folder} is not a tuner experiment (no {CONFIG_FILE})")
        return folder
    here = Path(ref).expanduser()
    local = str(here.resolve()) if (here / CONFIG_FILE).is_file() else None
    under = storage_path or default_storage()
    named = None
    if "/" not in ref:
        named = (
            under.rstrip("/") + "/" + ref if storage.is_uri(under) else str(Path(under).expanduser() / ref)
        )
        if storage.exists(named, CONFIG_FILE):
            stored = named if storage.is_uri(named) else str(Path(named).resolve())
            if local is not None and local != stored:  # a copy here beside the one stored: which is meant?
                raise UsageError(
                    f"{ref!r} names two experiments, {local} here and {stored} in the storage path; give the "
                    f"one meant by its path (./{ref}, or {stored})"
                )
            return stored
    if local is not None:
        return local
    for path in [here, *([Path(named)] if named and not storage.is_uri(named) else [])]:
        if path.is_dir():
            raise UsageError(f"{path} is not a tuner experiment (no {CONFIG_FILE}){_held_in(path)}")
        if path.is_file():
            raise UsageError(f"{path} is a file, not an experiment's folder")
    where = " or ".join(str(c) for c in [here, *([named] if named else [])])
    elsewhere = (
        f"; a name is looked for under --storage-path (storage_path= from Python; else TUNER_STORAGE_PATH, else "
        f"{DEFAULT_STORAGE}): pass the storage path, or the experiment's path"
        if "/" not in ref
        else ""
    )
    raise UsageError(f"unknown experiment {ref!r}: no folder {where}{elsewhere}")


def _held_in(folder: Path, shown: int = 3) -> str:
    """The experiments a storage folder holds, named, where one was given for an experiment."""
    try:
        held = sorted(d.name for d in folder.iterdir() if (d / CONFIG_FILE).is_file())
    except OSError:
        return ""
    if not held:
        return ""
    named = ", ".join(held[:shown]) + (f" and {len(held) - shown} more" if len(held) > shown else "")
    return f"; it holds {len(held)} experiment(s): {named} (tuner results {folder / held[0]}; tuner dashboard {folder} shows them all)"


def experiment_above(path: str | Path) -> Path | None:
    """The experiment a local path lies in (itself or a folder above it holds an experiment's settings), if any."""
    here = Path(path).expanduser().resolve()
    return next((p for p in [here, *here.parents] if (p / CONFIG_FILE).is_file()), None)


def local_folder(experiment: str, what: str) -> Path:
    """The experiment (its path or URI) as a local folder, for tools that only read local files (TensorBoard)."""
    plain = storage.local_path(experiment)
    if plain is None:
        raise UsageError(
            f"{what} reads a local folder and {experiment} is in remote storage: copy it down first "
            "(e.g. aws s3 sync, gsutil rsync) and pass that folder"
        )
    return Path(plain)
