"""Part 24: what Ray's errors say where no field says it. Seen in Ray 2.60, checked on 2.50.0 and 2.55.1.

A trial whose worker process vanished (a signal, the kernel's OOM killer) reaches tuner only as the text of
Ray's ``ActorDiedError`` (tuner/launch/guards/crashes.py reads its cause from the trial's own crash file); a
refused write to a bucket only as a traceback, which counts as the storage refusing the write when it passes
through Ray's storage layer, recognised by these frames (``_upload_to_fs_path`` is private, and so is
pyarrow's ``_fs`` module; tuner/folder/fates.py). A metric reported as a torch tensor (``loss`` where
``loss.item()`` was meant) fails in ``tune.report`` with Ray's advice to report a checkpoint; ``in_words`` says
what to do instead.
"""

from __future__ import annotations

PROCESS_DIED = "worker process has died"  # in Ray's ActorDiedError for a worker that vanished
STORAGE_LAYER = ("persist_current_checkpoint", "_upload_to_fs_path", "pyarrow/_fs", "sync_up")
TENSOR_METRIC = "Torch tensors as metrics"  # Ray's ValueError for a metric reported as a tensor


def process_died(error_text: str) -> bool:
    """Whether a trial's error says its worker process vanished."""
    return PROCESS_DIED in error_text


def through_storage_layer(text: str) -> bool:
    """Whether a traceback passes through Ray's storage layer (a write to the experiment's storage)."""
    return any(frame in text for frame in STORAGE_LAYER)


def in_words(error_line: str) -> str:
    """A failure's last line, in words a user can act on where Ray's own advice misleads."""
    if TENSOR_METRIC in error_line:
        return (
            "a metric was reported as a torch tensor; report a number instead, e.g. loss.item() or float(loss) "
            f"(Ray: {error_line[:120]}{'...' if len(error_line) > 120 else ''})"
        )
    return error_line
