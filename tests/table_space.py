"""A table-lookup trainable: each config reports a recorded learning curve, instantly, with checkpoints.

The same table feeds a real sweep and a replay, so the two can be compared decision by decision. Curves
cross (some configs start badly and end well), so early stopping has real choices to make.
"""

from __future__ import annotations

import itertools
import math
import zlib
from pathlib import Path

from tuner.replay.curves import CurveTable
from tuner.replay.engine import Curve

GRID = {"width": [4, 8, 16, 32], "lr": [1e-4, 1e-3, 1e-2, 1e-1], "batch": [8, 16, 32]}

SPACE_SOURCE = '''"""Recorded curves looked up by config: a sweep that trains nothing."""
import json
import os
import tempfile

from ray import tune

from tuner import SearchSpace
from tuner.replay.curves import CurveTable

TABLE = {table!r}


def train(config, *, max_epochs=8):
    curve = CurveTable.load(TABLE).curve(config)
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            with open(os.path.join(folder, "epoch.json")) as f:
                start = json.load(f)["epoch"]
    for epoch in range(start + 1, min(max_epochs, len(curve.rows)) + 1):
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "epoch.json"), "w") as f:
                json.dump({{"epoch": epoch}}, f)
            tune.report(dict(curve.rows[epoch - 1]), checkpoint=tune.Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=train, metric="loss", mode="min",
                    params={{name: tune.choice(values) for name, values in {grid!r}.items()}})
'''


def curve_for(config: dict, epochs: int) -> Curve:
    """A deterministic curve: a floor set by the config, approached at a config-dependent speed."""
    salt = zlib.crc32(repr(sorted(config.items())).encode()) % 1000 / 1000
    floor = abs(math.log10(config["lr"]) + 2.5) + 8 / config["width"] + config["batch"] / 64
    speed = 0.3 + 1.7 * salt  # slow starters end well too
    rows = [{"loss": floor + 3.0 * math.exp(-speed * e) + 0.01 * salt} for e in range(1, epochs + 1)]
    return Curve(dict(config), rows, [1.0 + salt] * epochs)


def write_table_space(folder: Path, epochs: int = 8, grid: dict | None = None) -> tuple[Path, CurveTable]:
    """The table (every config of ``grid``, GRID by default) and a space file that looks its trials up in it."""
    grid = grid or GRID
    names = list(grid)
    table = CurveTable([curve_for(dict(zip(names, values, strict=True)), epochs) for values in itertools.product(*grid.values())],
                       names)  # fmt: skip
    table_path = Path(folder) / "curves.json"
    table.save(table_path)
    space = Path(folder) / "table_space.py"
    space.write_text(SPACE_SOURCE.format(table=str(table_path), grid=grid))
    return space, table
