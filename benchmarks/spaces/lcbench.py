"""LCBench as a real sweep: each trial reports the surrogate's learning curve of its config, epoch by epoch.

    LCBENCH_TASK=7593 tuner sweep --space benchmarks/spaces/lcbench.py --max-epochs 52 --num-samples 64

The sweep runs through Ray Tune like any other (trials, checkpoints, pauses, the report), so what tuner
itself decides is measured, not only its replay. The task is one of LCBench's 34 OpenML task ids
(``LCBENCH_TASK``, 3945 if unset); ``LCBENCH_SECONDS`` (0 if unset) is how many real seconds a trial sleeps for
each second of training the surrogate says an epoch took, so a sweep can keep the curves' relative timing.
Needs onnxruntime (the bench extra: pip install -e '.[bench]').
"""

import json
import os
import sys
import tempfile
import time
from pathlib import Path

from ray import tune

from tuner import SearchSpace

BENCHMARKS = Path(__file__).resolve().parents[1]
if str(BENCHMARKS) not in sys.path:
    sys.path.insert(0, str(BENCHMARKS))

import lcbench  # noqa: E402

TASK = os.environ.get("LCBENCH_TASK", "3945")
if TASK not in lcbench.tasks():
    raise ValueError(f"LCBENCH_TASK={TASK} is not one of LCBench's tasks: {', '.join(lcbench.tasks())}")
PACE = float(os.environ.get("LCBENCH_SECONDS", "0"))


def train(config, *, max_epochs=52):
    """The surrogate's curve of ``config``, one epoch per report, continuing from a checkpoint's epoch."""
    sys.path.insert(0, str(BENCHMARKS))  # a Ray worker imports this file again, not this module's path
    import lcbench as surrogate

    rows, seconds = surrogate.rows_and_seconds(surrogate.evaluate(TASK, [config])[0])
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            start = json.loads(Path(folder, "epoch.json").read_text())["epoch"]
    for epoch in range(start + 1, min(max_epochs, surrogate.EPOCHS) + 1):
        if PACE:
            time.sleep(PACE * seconds[epoch - 1])
        with tempfile.TemporaryDirectory() as folder:
            Path(folder, "epoch.json").write_text(json.dumps({"epoch": epoch}))
            tune.report({**rows[epoch - 1], "task": int(TASK)}, checkpoint=tune.Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=train, metric=lcbench.METRIC, mode="max", params=lcbench.space())
