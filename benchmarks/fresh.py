"""Freshly trained small nets: each config a search proposes really trains, for the epochs the replay runs it.

The net and its training are make_curves.py's (an MLP, SGD with momentum, on one of scikit-learn's bundled
datasets), at any config of the continuous box, seeded by the benchmark seed and the config: one config, one
training run. Epochs are trained when the replay first reads them, so a trial the scheduler stops at epoch 1
costs one epoch, as in a real sweep; what was trained is kept under benchmarks/cache/ (ignored by git), keyed
by the dataset, the seed, the config and the training code, so a rerun, and every pair that proposes the same
config, reads it.

An epoch's seconds come from a cost model fitted to the tables' measured seconds (per optimiser step: a fixed
cost plus one proportional to batch x weights), not from the clock: the order in which results arrive in a
replay then does not depend on how busy the machine was, and a cold and a cached run give the same figures.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
import os
import zlib
from collections.abc import Sequence
from pathlib import Path
from typing import Any

CACHE = Path(__file__).resolve().parent / "cache"
STEP_SECONDS, WEIGHT_SECONDS = 3.0e-4, 2.4e-10  # fitted to benchmarks/curves/*'s seconds (2-core box)
PARAMS = ("lr", "width", "depth", "batch_size", "weight_decay", "dropout")


def config_key(config: dict[str, Any]) -> str:
    """One config's identity, as a curve table keys it (floats to 12 digits, numpy scalars as plain numbers)."""
    from tuner.replay.curves import key

    return key(config, PARAMS)


@functools.cache
def training_version() -> str:
    """What the cached epochs depend on beyond the config: make_curves.py's code and torch's version. A change
    to either starts a new cache rather than mixing runs of two trainings."""
    import torch

    code = (Path(__file__).resolve().parent / "make_curves.py").read_bytes()
    return hashlib.sha1(code + torch.__version__.encode()).hexdigest()[:10]


def epoch_seconds(dataset: str, config: dict[str, Any]) -> float:
    """What one epoch of this config costs on the 2-core box, from the cost model."""
    from make_curves import REGRESSION, load

    x_train, y_train, _, _ = load(dataset)
    width, depth, batch = int(config["width"]), int(config["depth"]), int(config["batch_size"])
    classes = 1 if dataset in REGRESSION else int(y_train.max()) + 1
    weights = x_train.shape[1] * width + (depth - 1) * width * width + width * classes
    steps = math.ceil(len(x_train) / batch)
    return steps * (STEP_SECONDS + WEIGHT_SECONDS * batch * weights)


class FreshRun(Sequence):
    """One config's training run as a sequence of epochs' metrics: reading epoch k trains up to it (once)."""

    def __init__(self, dataset: str, config: dict[str, Any], seed: int, epochs: int) -> None:
        self.dataset, self.config, self.epochs = dataset, dict(config), epochs
        identity = config_key(config)
        self.salt = zlib.crc32(f"{seed}:{identity}".encode())
        digest = hashlib.sha1(f"{dataset}:{seed}:{identity}".encode()).hexdigest()[:16]
        self.path = CACHE / f"fresh-{dataset}" / training_version() / f"seed-{seed}" / f"{digest}.json"
        self.rows: list[dict[str, float]] = self._cached()
        self._steps: Any = None  # the live training run, once an epoch beyond the cache is read

    def __len__(self) -> int:
        return self.epochs

    def __getitem__(self, index):
        if isinstance(index, slice):
            wanted = range(self.epochs)[index]
            self.train_to(max(wanted, default=-1) + 1)
            return [self.rows[k] for k in wanted]
        epoch = range(self.epochs)[index]
        self.train_to(epoch + 1)
        return self.rows[epoch]

    def train_to(self, epochs: int) -> None:
        """Train until ``epochs`` are known; a run resumed from the cache retrains its known epochs first (the
        run is deterministic, so they come out the same)."""
        if epochs <= len(self.rows):
            return
        if self._steps is None:
            from make_curves import epochs_of

            self._steps = epochs_of(self.dataset, self.config, self.salt)
            self.rows = [row for row, _ in itertools.islice(self._steps, len(self.rows))]
        self.rows += [row for row, _ in itertools.islice(self._steps, epochs - len(self.rows))]
        self._save()

    def _cached(self) -> list[dict[str, float]]:
        try:
            return json.loads(self.path.read_text())["rows"]
        except (OSError, ValueError, KeyError):
            return []

    def _save(self) -> None:
        """Write the epochs trained so far, unless another process already wrote more of the same run."""
        if len(self._cached()) >= len(self.rows):
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        partial = self.path.with_suffix(f".{os.getpid()}.tmp")
        config = dict(zip(PARAMS, json.loads(config_key(self.config)), strict=True))
        partial.write_text(json.dumps({"config": config, "rows": self.rows}))
        partial.replace(self.path)


class FreshCurves:
    """Curves of nets trained on demand: one config, one run, seeded by the benchmark seed and the config."""

    def __init__(self, dataset: str, seed: int, epochs: int) -> None:
        self.dataset, self.seed, self.epochs = dataset, seed, epochs

    def curve(self, config: dict[str, Any]):
        from tuner.replay.engine import Curve

        run = FreshRun(self.dataset, config, self.seed, self.epochs)  # a sequence of rows, trained as read
        return Curve(dict(config), run, [epoch_seconds(self.dataset, config)] * self.epochs)


def cost(dataset: str, configs: list[dict[str, Any]], epochs: int) -> list[tuple[float, float]]:
    """Seconds to train each config's full curve (no cache), on the clock and in this process's CPU time (the
    second is what a busy machine does not inflate): what a fresh curve really costs."""
    import time

    from make_curves import epochs_of

    spent = []
    for k, config in enumerate(configs):
        wall, cpu = time.perf_counter(), time.process_time()
        list(itertools.islice(epochs_of(dataset, config, k), epochs))
        spent.append((time.perf_counter() - wall, time.process_time() - cpu))
    return spent
