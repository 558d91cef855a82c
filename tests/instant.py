"""An instant trainable for sweeps that test the service, not the training: no torch, per-epoch reports.

Its loss falls with the epochs towards a floor set by the config, so schedulers and searchers see a real
signal; it checkpoints every epoch and continues from a checkpoint, so resume and PBT work on it. Test
options: ``sleep`` seconds per epoch (something to kill mid-sweep), ``loop``: a loop of its own that ends at
that epoch whatever ``max_epochs`` says (as ``for epoch in range(5)`` does), a crash at an epoch of the first
trial to get there (once, a marker file records it), a hang at an epoch (the first trial to get there
blocks for ever, once), a fatal signal at an epoch (once), a NaN loss at an epoch.
"""

from __future__ import annotations

from pathlib import Path

SPACE_SOURCE = '''"""Instant trials: a loss shaped by the config, falling with the epochs."""
import json
import math
import os
import signal
import tempfile
import threading
import time

import numpy as np
from ray import tune

from tuner import SearchSpace

SLEEP = {sleep!r}
LOOP = {loop!r}
CRASH_AT, CRASH_MARKER = {crash_at!r}, {crash_marker!r}
NAN_AT = {nan_at!r}
HANG_AT, HANG_MARKER = {hang_at!r}, {hang_marker!r}
SIGNAL_AT, SIGNAL, SIGNAL_MARKER = {signal_at!r}, {signal!r}, {signal_marker!r}


def once(marker):
    """True the first time a trial gets here (the marker file records it)."""
    try:
        os.close(os.open(marker, os.O_CREAT | os.O_EXCL))
    except FileExistsError:
        return False
    return True


def train({signature}):
    start, floor = 0, abs(math.log10(config["lr"]) + 2.5) + 16 / config["width"] + config["batch"] / 64
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            with open(os.path.join(folder, "state.json")) as f:
                start = json.load(f)["epoch"]
    for epoch in range(start + 1, (LOOP or max_epochs) + 1):
        time.sleep(SLEEP)
        if epoch == CRASH_AT and CRASH_MARKER and not os.path.exists(CRASH_MARKER):
            open(CRASH_MARKER, "w").close()
            raise RuntimeError(f"crash at epoch {{epoch}}")
        if epoch == HANG_AT and once(HANG_MARKER):
            threading.Event().wait()  # a stuck data loader: no report, ever
        if epoch == SIGNAL_AT and once(SIGNAL_MARKER):
            if SIGNAL == "SIGSEGV":
                import ctypes
                ctypes.string_at(0)
            os.kill(os.getpid(), getattr(signal, SIGNAL))
        loss = float("nan") if epoch == NAN_AT else floor + 2.0 / epoch
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "state.json"), "w") as f:
                json.dump({{"epoch": epoch}}, f)
            tune.report({{"loss": loss, "accuracy": 1 / (1 + loss), "epoch": epoch}},
                        checkpoint=tune.Checkpoint.from_directory(folder))


SPACE = SearchSpace(
    trainable=train,
    params={{
        "width": tune.sample_from(lambda _: 2 ** np.random.randint(2, 6)),
        "lr": tune.loguniform(1e-4, 1e-1),
        "batch": tune.choice([8, 16, 32]),
    }},
)
'''


def instant_space(
    folder: Path,
    *,
    sleep: float = 0.0,
    loop: int | None = None,
    crash_at: int | None = None,
    nan_at: int | None = None,
    hang_at: int | None = None,
    signal_at: int | None = None,
    signal: str = "SIGKILL",
    name: str = "instant_space.py",
) -> Path:
    """Write the instant space into ``folder``; a crash, hang or signal needs a marker, which goes beside it."""
    path = Path(folder) / name
    marker = str(Path(folder) / f"{name}.crashed") if crash_at else None
    path.write_text(SPACE_SOURCE.format(
        # a loop of its own is not given max_epochs (given it, a loop that ends sooner ends for a reason of its own)
        signature="config" if loop else "config, *, max_epochs=3",
        sleep=sleep, loop=loop, crash_at=crash_at, crash_marker=marker, nan_at=nan_at,
        hang_at=hang_at, hang_marker=str(Path(folder) / f"{name}.hung"),
        signal_at=signal_at, signal=signal, signal_marker=str(Path(folder) / f"{name}.signalled"),
    ))  # fmt: skip
    return path
