"""A full disk stops a sweep as a signal does: resumably, in one line, and never with a truncated file.

Before it happens: after each result the storage's free space is read, and below a reserve (64 MiB, or
four times the largest checkpoint the sweep has saved, whichever is more) the sweep stops in order, so its
last state, checkpoints and results still fit. When it happens anyway (another process filled the disk, or
one checkpoint outgrew the reserve), a trial whose write was refused for lack of space is not a failure: it
is recorded as stopped by the storage, the sweep stops the same way, and ``tuner resume`` runs it again from
its last checkpoint once space is freed. A bucket that refuses writes (a quota, revoked access) is met alike,
and so is a storage that could not be reached for longer than the storage timeout (tuner/storage_outage.py).
Ray's own state is written whole or not at all (tuner/ray_compat/atomic_sync.py).
"""

from __future__ import annotations

import errno
import os
import shutil
from pathlib import Path
from typing import TYPE_CHECKING

from ray.tune import Callback

from tuner.folder.fates import STORAGE, DecisionLog, refusal
from tuner.storage import here, storage_name

if TYPE_CHECKING:
    from ray.tune import Checkpoint
    from ray.tune.experiment import Trial

    from tuner.value_types import Result

# bytes kept free on the storage: the last state and a round of results and checkpoints
RESERVE_MIN = 64 * 2**20
RESERVE_CHECKPOINTS = 4  # ... or this many of the largest checkpoint saved, if that is more


def refusal_of(exc: BaseException) -> str | None:
    """``refusal`` for an exception and the exceptions behind it."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, OSError) and current.errno in (errno.ENOSPC, errno.EDQUOT):
            return refusal(os.strerror(current.errno))
        found = refusal(f"{type(current).__name__}: {current}")
        if found:
            return found
        current = current.__cause__ or current.__context__
    return None


def free_bytes(folder: str | None) -> int | None:
    """Free bytes where a local experiment folder lies (its nearest existing parent); None for a bucket."""
    if folder is None:
        return None
    path = Path(folder)
    while not path.exists() and path != path.parent:
        path = path.parent
    try:
        return shutil.disk_usage(path).free
    except OSError:
        return None


def size_of(path: str) -> int:
    """Bytes in a local folder or file (0 when it cannot be read)."""
    target = Path(path)
    if target.is_file():
        return target.stat().st_size
    total = 0
    for root, _, files in os.walk(target):
        for name in files:
            try:
                total += os.stat(os.path.join(root, name)).st_size
            except OSError:
                continue
    return total


def mib(size: float) -> str:
    return f"{size / 2**20:.1f} MiB"


class StorageWatch(Callback):
    """Stops the sweep in order when the storage runs short of space or refuses a write (module docstring)."""

    def __init__(self, folder: str | None, experiment: str, fate_log: DecisionLog | None = None) -> None:
        self.folder = folder  # the experiment as a local path; None for a bucket
        self.experiment = experiment
        self.fate_log = fate_log
        self.largest_checkpoint = 0
        self.stopped = False

    @property
    def reserve(self) -> int:
        return max(RESERVE_MIN, RESERVE_CHECKPOINTS * self.largest_checkpoint)

    def on_checkpoint(
        self, iteration: int, trials: list[Trial], trial: Trial, checkpoint: Checkpoint, **info: object
    ) -> None:
        path = getattr(checkpoint, "path", None)
        if self.folder is not None and path and os.path.isdir(path):
            self.largest_checkpoint = max(self.largest_checkpoint, size_of(path))

    def on_trial_result(
        self, iteration: int, trials: list[Trial], trial: Trial, result: Result, **info: object
    ) -> None:
        free = free_bytes(here(self.folder))
        if free is not None and free < self.reserve and not self.stopped:
            self._stop(nearly_full(free, here(self.experiment), self.reserve))

    def on_step_end(self, iteration: int, trials: list[Trial], **info: object) -> None:
        from tuner.storage_outage import gave_up

        if self.folder is not None:
            return  # a local folder is never waited for
        # the driver waited the storage timeout out in vain for this experiment's storage (another's, an
        # earlier sweep's in this process, is none of this sweep's business)
        unreachable = gave_up(storage_name(self.experiment))
        if unreachable and not self.stopped:
            self._stop(unreachable)

    def on_trial_error(self, iteration: int, trials: list[Trial], trial: Trial, **info: object) -> None:
        from tuner.launch.guards.crashes import last_failure

        meaning = refusal(last_failure(trial.error_file))
        if meaning is None:
            return
        epoch = int((trial.last_result or {}).get("training_iteration") or 0)
        if self.fate_log is not None:
            self.fate_log.record(
                trial.trial_id,
                STORAGE,
                f"unfinished: {meaning} in epoch {epoch + 1}; tuner resume "
                "runs it again from its last checkpoint",
            )
        if not self.stopped:
            self._stop(meaning)

    def _stop(self, reason: str) -> None:
        from tuner.launch.guards.signals import request_stop

        self.stopped = request_stop(reason)  # handed to Ray between steps (tuner/launch/guards/signals.py)


def room_left(folder: str) -> str | None:
    """Why a sweep should not start writing into ``folder`` now (under the reserve), or None."""
    from tuner import storage

    free = free_bytes(storage.local_path(folder))
    return None if free is None or free >= RESERVE_MIN else nearly_full(free, folder, RESERVE_MIN)


def nearly_full(free: int, where: str, reserve: int) -> str:
    return f"the storage is nearly full ({mib(free)} free where {where} lies, under the {mib(reserve)} a sweep keeps in reserve)"


def stopped_trials(folder: str) -> list[str]:
    """The errored trials whose last failure was a write the storage refused: to be run again, not failed (a
    trial that failed in its own code since is left as it is)."""
    from tuner.ray_compat.state_file import saved_trial_states

    return [
        trial_id
        for trial_id, state in saved_trial_states(folder).items()
        if state["status"] == "ERROR" and refused_write(folder, state["dir"], state["error_file"])
    ]


def refused_write(folder: str, trial_dir: str | None, error_file: str | None) -> bool:
    """Whether an errored trial's last failure was a write the storage refused."""
    from tuner import storage
    from tuner.launch.guards.crashes import last_failure_of

    if not trial_dir:
        return False
    text = storage.read_text(storage.join(folder, trial_dir), error_file or "error.txt") or ""
    return refusal(last_failure_of(text)) is not None
