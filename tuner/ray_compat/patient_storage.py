"""Ray behaviour tuner works around, seen in Ray 2.60 and checked on 2.50.0 and 2.55.1 (see tuner/ray_compat/__init__.py
for the index and for how).

27. A storage that cannot be reached for a while (Ray 2.60): Ray makes the filesystem of a bucket itself
(``ray.train._internal.storage.get_fs_and_path``, a plain ``pyarrow.fs.FileSystem.from_uri``) and tries each
call once; an outage of seconds fails the trial whose folder or checkpoint it was writing, and the driver logs
a traceback for each experiment state it could not save. ``wait_out_storage_outages`` hands Ray the same
filesystem waiting out outages (tuner/patient_filesystem.py) wherever it makes one from a URI: its trials,
checkpoints and experiment state wait for the storage as long as tuner's own files do, in the driver and, as
the filesystem is pickled into each trial, in the trials' processes. Past the storage timeout the call fails
with tuner's one line (tuner/storage_outage.py), which the sweep's storage watch turns into an orderly stop;
what Ray logs of it then (a state not saved, a folder not made, a checkpoint not registered, each with its
traceback) is left out, in the driver and in the trials.
(Ray's public way, ``RunConfig(storage_filesystem=...)``, takes the path without its scheme, and every path Ray
hands back then names no storage.)
"""

from __future__ import annotations

import importlib
import logging
from typing import TYPE_CHECKING, Any

from tuner import storage_outage
from tuner.patient_filesystem import PatientHandler, patient
from tuner.ray_compat.logfilters import install_filter

if TYPE_CHECKING:
    from collections.abc import Callable

    from pyarrow.fs import FileSystem

# the modules that call get_fs_and_path by a name of their own
MODULES = (
    "ray.train._internal.storage",
    "ray.tune.tuner",
    "ray.tune.impl.tuner_internal",
    "ray.tune.execution.experiment_state",
    "ray.tune.analysis.experiment_analysis",
)
FUNCTION = "get_fs_and_path"
# where Ray logs, with a traceback, what failed when tuner gave up waiting: a state it could not save, a
# folder it could not make, a checkpoint it could not register, the error of a trial it no longer awaited
LOGGERS = (
    "ray.tune.execution.experiment_state",
    "ray.train._internal.storage",
    "ray.train._internal.syncer",
    "ray.tune.execution.tune_controller",
    "ray._private.worker",
)


def wait_out_storage_outages(bound: float | None = None) -> None:
    """Ray's filesystems of a storage URI wait out outages for ``bound`` seconds (this process's storage
    timeout when None) from now on in this process (installed once; the bound is set each call)."""
    if bound is not None:
        storage_outage.set_timeout(bound)
    _quiet_here()
    original = getattr(importlib.import_module(MODULES[0]), FUNCTION)
    if getattr(original, "_tuner_patient", False):
        return

    def get_fs_and_path(
        storage_path: Any, storage_filesystem: FileSystem | None = None
    ) -> tuple[FileSystem, str]:
        fs, path = original(storage_path, storage_filesystem)
        text = str(storage_path)
        if storage_filesystem is not None or "://" not in text:
            return fs, path
        return patient(fs, text.partition("://")[0], handler=RayPatientHandler), path

    vars(get_fs_and_path)["_tuner_patient"] = True  # a mark on the function: installed once
    for name in MODULES:
        module = importlib.import_module(name)
        if hasattr(module, FUNCTION):
            setattr(module, FUNCTION, get_fs_and_path)


class RayPatientHandler(PatientHandler):
    """The waiting filesystem as Ray's trials get it: unpickled in a trial's process, it quiets Ray's loggers
    there too."""

    def __reduce__(self) -> tuple[Callable[..., PatientHandler], tuple[FileSystem, str, float]]:
        return _arrive, (self.inner, self.scheme, self.bound)


def _arrive(inner: FileSystem, scheme: str, bound: float) -> RayPatientHandler:
    _quiet_here()
    return RayPatientHandler(inner, scheme, bound)


def _quiet_here() -> None:
    for logger in LOGGERS:
        install_filter(logger, _DropGivenUp())


class _DropGivenUp(logging.Filter):
    """What Ray logs, traceback and all, of a call tuner gave up waiting for: tuner says it in one line
    (the sweep's stop), and a trial it failed is run again on resume."""

    def filter(self, record: logging.LogRecord) -> bool:
        error = record.exc_info[1] if record.exc_info else None
        text = record.getMessage() + (f" {error}" if error is not None else "")
        if isinstance(error, FileNotFoundError) and all(mark in text for mark in GONE_CHECKPOINT):
            return False  # an old checkpoint deleted before the stop, which the saved state still lists
        return storage_outage.gave_up_in(text) is None


# Ray deleting an old checkpoint that is gone already: one deleted before a stop the storage forced, which the
# last saved state (saved before the deletion) still lists, is deleted again on resume
GONE_CHECKPOINT = ("Error handling checkpoint", "Path not found")
