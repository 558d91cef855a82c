"""Each checkpoint a trial saves gets its manifest (tuner/folder/checkpoints.py) as Ray registers it, so a
later ``tuner resume`` or ``tuner export`` can tell a whole checkpoint from a damaged one."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from ray.tune import Callback

from tuner.folder.checkpoints import write_manifest

if TYPE_CHECKING:
    from ray.tune import Checkpoint
    from ray.tune.experiment import Trial

log = logging.getLogger(__name__)


def _epoch(trial: Trial) -> int | None:
    """The epoch whose result the checkpoint was saved with: Tune registers a checkpoint before the trial's next
    result is processed."""
    epoch = (trial.last_result or {}).get("training_iteration")
    return epoch if isinstance(epoch, int) else None


class CheckpointManifests(Callback):
    """Writes a local checkpoint's manifest in the driver, after Ray stored the checkpoint whole and before it
    becomes the trial's latest in Ray's saved state (a bucket's checkpoints get none: see the module above)."""

    def __init__(self) -> None:
        self._warned = False

    def on_checkpoint(
        self, iteration: int, trials: list[Trial], trial: Trial, checkpoint: Checkpoint, **info: object
    ) -> None:
        if getattr(checkpoint.filesystem, "type_name", "local") != "local":
            return
        try:
            write_manifest(checkpoint.path, _epoch(trial))
        except Exception as exc:  # noqa: BLE001 - a full disk; never let Ray skip registering the checkpoint
            if not self._warned:
                # the system's words for it ("no space left on device"), not Python's "[Errno 28] ..."
                why = exc.strerror.lower() if isinstance(exc, OSError) and exc.strerror else str(exc)
                log.warning(
                    "could not write a checkpoint's manifest (%s); such checkpoints go unverified", why
                )
                self._warned = True
