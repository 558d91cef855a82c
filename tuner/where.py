"""Where an experiment is: a folder path, a storage URI, or a name under the default storage."""

from __future__ import annotations

import os
from pathlib import Path

from tuner import storage
from tuner.errors import UsageError
from tuner.folder.names import CONFIG_FILE
from tuner.settings import DEFAULT_STORAGE


def default_storage() -> Path:
    return Path(os.environ.get("TUNER_STORAGE_PATH", DEFAULT_STORAGE)).expanduser()


def locate(ref: str) -> str:
    """An experiment by path or storage URI, or by name under the default storage (``TUNER_STORAGE_PATH``): a
    plain folder of that name here does not hide an experiment there."""
    if not isinstance(ref, (str, os.PathLike)):
        raise UsageError(f"an experiment is a folder path, a storage URI or a name, not {ref!r}")
    ref = os.fspath(ref)
    if storage.is_uri(ref):
        folder = ref.rstrip("/")
        if not storage.exists(folder, CONFIG_FILE):
            raise UsageError(f"{folder} is not a tuner experiment (no {CONFIG_FILE})")
        return folder
    candidates = [Path(ref).expanduser()]
    if "/" not in ref:
        candidates.append(default_storage() / ref)
    for path in candidates:
        if (path / CONFIG_FILE).is_file():
            return str(path.resolve())
    for path in candidates:
        if path.is_dir():
            raise UsageError(f"{path} is not a tuner experiment (no {CONFIG_FILE})")
    files = [c for c in candidates if c.is_file()]
    if files:
        raise UsageError(f"{files[0]} is a file, not an experiment's folder")
    where = " or ".join(str(c) for c in candidates)
    elsewhere = (
        "; a name is looked for under TUNER_STORAGE_PATH (else ~/tuner_results): set it, or give the path"
        if "/" not in ref
        else ""
    )
    raise UsageError(f"unknown experiment {ref!r}: no folder {where}{elsewhere}")


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
