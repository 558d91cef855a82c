"""Surrogate learning curves: a model fitted on a recorded table gives any config of the continuous box a curve.

The tables in benchmarks/curves/ are grids (432 configs); a sweep of cheap random trials all but enumerates a
grid, which flatters random search, while users search continuous spaces. As YAHPO Gym's surrogate of
LCBench does, a model maps a config to its whole learning curve at once; here an extremely randomised forest
on the config (learning rate, width and weight decay on log scales) predicts every epoch's log validation
loss, whether the run had diverged by then, and the log seconds an epoch takes.
Each prediction is a weighted average of real recorded curves, so curves keep their real shapes and still
cross (a config good late can be poor early); the trees' random split points make the map smooth between grid
values rather than a grid of cells.

One training run is not the average of its neighbours: each config gets noise fixed by the benchmark seed and
the config. Its scale was measured from reruns of the tables' configs with another torch seed (``--noise`` in
curve_sources.py): a few per cent per run and per epoch, the same both ways; above a learning rate of 0.03 runs
vary more, mostly by spikes, which are drawn upwards only (noise that could go as far down would make lucky
high-rate configs beat every real run). A run diverges with the share of its neighbours that diverged by each
epoch, and stays diverged.
"""

from __future__ import annotations

import functools
import math
import zlib
from typing import Any

DIVERGED = 1e3  # what the tables record for a net whose loss was no longer finite
FLOOR = {"weight_decay": 1e-6}  # log-scaled inputs that the grid has at 0: 0 is read as this floor
# A run's offset and per-epoch spread (log loss) and the per-epoch lag-1 correlation, as curve_sources.py
# --noise measures them at lr <= 0.03 (robust spreads); tables without a measurement take the last. Diabetes
# takes a quarter of its measured spread: its best configs vary less than the rerun sample, and at a quarter
# the held-out runs' bests match the recorded ones (--check; at the full spread its lowest runs were 6% below
# any recorded run, so random search met impossible values).
NOISE = {"breast_cancer": (0.045, 0.04, 0.85), "diabetes": (0.006, 0.006, 0.4), "digits": (0.06, 0.035, 0.9),
         "": (0.045, 0.035, 0.8)}  # fmt: skip
SPIKES = (0.3, 0.3)  # upward spikes' spread at lr >= 0.3 (none at lr <= 0.03) and their lag-1 correlation


def features(config: dict[str, Any]) -> list[float]:
    """A config as the model reads it: learning rate, width, batch size and weight decay on log scales."""
    return [
        math.log10(float(config["lr"])),
        math.log2(float(config["width"])),
        float(config["depth"]),
        math.log2(float(config["batch_size"])),
        math.log10(max(float(config["weight_decay"]), FLOOR["weight_decay"])),
        float(config["dropout"]),
    ]


def targets(curve: Any) -> list[float]:
    """What the model predicts for one recorded curve: each epoch's log loss (a diverged run keeps its last
    finite one, so averages are of training curves), whether the run had diverged by each epoch, and the log
    mean epoch seconds."""
    losses, gone, last, diverged = [], [], math.log(DIVERGED), False
    for row in curve.rows:
        loss = float(row["val_loss"])
        diverged = diverged or loss >= DIVERGED
        if not diverged:
            last = math.log(max(loss, 1e-6))
        losses.append(last)
        gone.append(float(diverged))
    return [*losses, *gone, math.log(max(sum(curve.seconds) / len(curve.seconds), 1e-4))]


def forest(seed: int = 0):
    from sklearn.ensemble import ExtraTreesRegressor

    return ExtraTreesRegressor(n_estimators=100, random_state=seed, n_jobs=1)


def predict_one(model: Any, config: dict[str, Any]) -> list[float]:
    """The forest's outputs for one config, tree by tree without input checks: a replay asks for one config at
    a time, and the forest's own predict spends most of its 20 ms a call on dispatch."""
    import numpy as np

    x = np.asarray([features(config)], dtype=np.float32)
    return np.mean([tree.predict(x, check_input=False)[0] for tree in model.estimators_], axis=0).tolist()


@functools.cache
def fitted(table_name: str):
    """The forest for one table, fitted once per process (well under a second)."""
    import numpy as np
    from recorded import recorded

    loaded = recorded(table_name)
    x = np.array([features(c.config) for c in loaded.curves])
    y = np.array([targets(c) for c in loaded.curves])
    return forest().fit(x, y)


def spikes(lr: float) -> float:
    """The spread of upward spikes at a learning rate: none at 0.03 or below, growing log-linearly to 0.3."""
    return SPIKES[0] * min(max(math.log10(lr / 0.03), 0.0), 1.0)


def wobble(rng: Any, epochs: int, spread: float, rho: float) -> list[float]:
    """A stationary AR(1) series: per-epoch noise correlated from one epoch to the next."""
    out, value = [], 0.0
    for k in range(epochs):
        step = rng.normal(0, spread)
        value = step if k == 0 else rho * value + math.sqrt(1 - rho * rho) * step
        out.append(value)
    return out


def one_run(table: str, predicted: list[float], config: dict[str, Any], salt: int) -> tuple[list[float], list[float]]:
    """A training run's curve and epoch seconds from the model's averages (per-epoch log losses, then the share
    of neighbours diverged by each epoch, then log epoch seconds), with noise drawn from ``salt``."""
    import numpy as np

    rng = np.random.default_rng(salt)
    epochs = (len(predicted) - 1) // 2
    log_losses, gone, log_seconds = predicted[:epochs], predicted[epochs : 2 * epochs], predicted[-1]
    offset_sd, epoch_sd, rho = NOISE.get(table, NOISE[""])
    offset, jitter = rng.normal(0, offset_sd), wobble(rng, epochs, epoch_sd, rho)
    spike = [max(0.0, s) for s in wobble(rng, epochs, spikes(float(config["lr"])), SPIKES[1])]
    fate = rng.uniform()  # the run diverges at the first epoch where more than this share of its neighbours had
    losses: list[float] = []
    for k in range(epochs):
        if gone[k] > fate or (losses and losses[-1] >= DIVERGED):
            losses.append(DIVERGED)
        else:
            losses.append(min(math.exp(log_losses[k] + offset + jitter[k] + spike[k]), DIVERGED))
    seconds = [math.exp(log_seconds + rng.normal(0, 0.05)) for _ in range(epochs)]
    return losses, seconds


class SurrogateCurves:
    """Curves for any config of the continuous box, from the table's forest plus one run's noise (fixed by the
    benchmark seed and the config, as one training run would be)."""

    def __init__(self, table_name: str, seed: int) -> None:
        self.table_name, self.seed = table_name, seed
        self.model = fitted(table_name)

    def curve(self, config: dict[str, Any]):
        from fresh import config_key

        from tuner.replay.engine import Curve

        predicted = predict_one(self.model, config)
        salt = zlib.crc32(f"{self.seed}:{config_key(config)}".encode())
        losses, seconds = one_run(self.table_name, predicted, config, salt)
        return Curve(dict(config), [{"val_loss": loss} for loss in losses], seconds)


# --- how good the surrogate is ---------------------------------------------------------------------------


def held_out(table_name: str, folds: int = 5):
    """Every config predicted by a forest that did not see it (``folds``-fold): the recorded log losses and log
    epoch seconds, the model's outputs, and the configs."""
    import numpy as np
    from recorded import recorded
    from sklearn.model_selection import KFold

    loaded = recorded(table_name)
    x = np.array([features(c.config) for c in loaded.curves])
    y = np.array([targets(c) for c in loaded.curves])
    predicted = np.zeros_like(y)
    for train, test in KFold(folds, shuffle=True, random_state=0).split(x):
        predicted[test] = forest().fit(x[train], y[train]).predict(x[test])
    truth = np.log([[min(max(float(r["val_loss"]), 1e-6), DIVERGED) for r in c.rows] for c in loaded.curves])
    return truth, y[:, -1], predicted, [c.config for c in loaded.curves]


def swapped(early, late) -> float:
    """The share of config pairs whose order at one epoch is the reverse of their order at another: how much
    curves cross."""
    import numpy as np

    i, j = np.triu_indices(len(early), 1)
    return float(np.mean(np.sign(early[i] - early[j]) * np.sign(late[i] - late[j]) < 0))


def quality(table_name: str) -> dict[str, float]:
    """Held-out figures. Spearman rank correlations of truth and prediction (the model's average curve, diverged
    where most neighbours had) at the last epoch, at epoch 3, of each config's best, and at the last epoch among
    the better half of configs (where a search spends its time); the same for one noisy run per config. Then
    whether curves cross as much as real ones, and whether noisy runs reach lower than real ones did."""
    import numpy as np
    from scipy.stats import spearmanr

    truth, seconds, predicted, configs = held_out(table_name)
    epochs = truth.shape[1]
    last, third = epochs - 1, min(2, epochs - 1)
    gone = np.maximum.accumulate(predicted[:, epochs : 2 * epochs], axis=1) >= 0.5
    average = np.where(gone, math.log(DIVERGED), predicted[:, :epochs])
    runs = np.log([one_run(table_name, list(p), c, k)[0] for k, (p, c) in enumerate(zip(predicted, configs, strict=True))])
    better = truth[:, last] <= np.median(truth[:, last])

    def rho(a, b) -> float:
        return float(spearmanr(a, b)[0])

    def lowest(curves, q: float) -> float:
        return float(np.exp(np.percentile(curves.min(1), q)))

    return {
        "final": rho(truth[:, last], average[:, last]),
        "epoch 3": rho(truth[:, third], average[:, third]),
        "best": rho(truth.min(1), average.min(1)),
        "final, better half": rho(truth[better, last], average[better, last]),
        "final, one noisy run": rho(truth[:, last], runs[:, last]),
        "epoch 3, one noisy run": rho(truth[:, third], runs[:, third]),
        "best, one noisy run": rho(truth.min(1), runs.min(1)),
        "epoch seconds": rho(seconds, predicted[:, -1]),
        "epoch 3 vs final, truth": rho(truth[:, third], truth[:, last]),
        "epoch 3 vs final, noisy runs": rho(runs[:, third], runs[:, last]),
        "pairs crossing 3->final, truth": swapped(truth[:, third], truth[:, last]),
        "pairs crossing 3->final, noisy runs": swapped(runs[:, third], runs[:, last]),
        "diverged by the end, truth": float(np.mean(truth[:, last] >= math.log(DIVERGED) - 1e-9)),
        "diverged by the end, noisy runs": float(np.mean(runs[:, last] >= math.log(DIVERGED) - 1e-9)),
        "lowest loss of any run, truth": lowest(truth, 0),
        "lowest loss of any run, noisy runs": lowest(runs, 0),
        "5th percentile of run bests, truth": lowest(truth, 5),
        "5th percentile of run bests, noisy runs": lowest(runs, 5),
    }
