"""Real learning curves for the search benchmarks: small PyTorch nets on scikit-learn's bundled datasets.

Every config of a grid (learning rate, width, depth, batch size, weight decay, dropout) trains an MLP with
SGD and momentum for 27 epochs on a fixed train/validation split, and each epoch's validation loss (cross
entropy; for the regression set, the mean squared error of the standardised target), validation accuracy
where it applies, and seconds are recorded. The result is one compact table per dataset in
``benchmarks/curves/`` (gzipped JSON read by ``tuner.replay.curves.CurveTable``), generated once and
committed, so multi-fidelity benchmarks rest on real curves that cross, plateau and diverge as real
training does, and replay them in seconds.

    python benchmarks/make_curves.py                    # every dataset (about 4 min on 2 cores)
    python benchmarks/make_curves.py --datasets diabetes --jobs 1
"""

from __future__ import annotations

import argparse
import functools
import itertools
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
OUT = ROOT / "benchmarks" / "curves"
EPOCHS = 27
GRID = {
    "lr": [0.001, 0.003, 0.01, 0.03, 0.1, 0.3],
    "width": [16, 64, 256],
    "depth": [1, 2],
    "batch_size": [16, 64],
    "weight_decay": [0.0, 0.0001, 0.01],
    "dropout": [0.0, 0.3],
}
DATASETS = ("digits", "breast_cancer", "diabetes")
REGRESSION = {"diabetes"}


@functools.cache
def load(dataset: str):
    """Standardised features and labels, split 80/20 once (seeded): the same split for every config (and read
    once per process, as fresh nets trained during a replay ask for it again and again)."""
    import numpy as np
    from sklearn import datasets
    from sklearn.model_selection import train_test_split
    from sklearn.preprocessing import StandardScaler

    x, y = getattr(datasets, f"load_{dataset}")(return_X_y=True)
    regression = dataset in REGRESSION
    x_train, x_val, y_train, y_val = train_test_split(x, y, test_size=0.2, random_state=0,
                                                      stratify=None if regression else y)  # fmt: skip
    scaler = StandardScaler().fit(x_train)
    if regression:
        mean, std = y_train.mean(), y_train.std()
        y_train, y_val = ((y_train - mean) / std).astype(np.float32), ((y_val - mean) / std).astype(np.float32)
    else:
        y_train, y_val = y_train.astype(np.int64), y_val.astype(np.int64)
    return scaler.transform(x_train).astype(np.float32), y_train, scaler.transform(x_val).astype(np.float32), y_val


def train(dataset: str, config: dict, seed: int = 0, epochs: int = EPOCHS) -> dict:
    """One config's epochs: validation loss and accuracy per epoch, and the seconds each took. ``seed`` sets the
    initial weights, dropout and batch order (the tables are seed 0; another seed is another training run)."""
    run = list(itertools.islice(epochs_of(dataset, config, seed), epochs))
    return {"config": config, "rows": [row for row, _ in run], "seconds": [took for _, took in run]}


def epochs_of(dataset: str, config: dict, seed: int = 0):
    """One training run, an epoch at a time: yields (metrics, seconds) for ever. Each run keeps its own random
    stream, so runs trained a few epochs at a time, interleaved in one process (as a replay asks for them),
    give the same epochs as runs trained alone."""
    import torch
    from torch import nn

    torch.set_num_threads(1)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        model = mlp(dataset, config)
        stream = torch.get_rng_state()
    x_train, y_train, x_val, y_val = (torch.from_numpy(a) for a in load(dataset))
    regression = dataset in REGRESSION
    optimiser = torch.optim.SGD(model.parameters(), lr=float(config["lr"]), momentum=0.9,
                                weight_decay=float(config["weight_decay"]))  # fmt: skip
    loss_fn = nn.MSELoss() if regression else nn.CrossEntropyLoss()
    generator = torch.Generator().manual_seed(seed + 1)
    batch_size = int(config["batch_size"])
    while True:
        started = time.perf_counter()
        model.train()
        order = torch.randperm(len(x_train), generator=generator)
        with torch.random.fork_rng(devices=[]):  # dropout draws from this run's stream only
            torch.set_rng_state(stream)
            for i in range(0, len(order), batch_size):
                batch = order[i : i + batch_size]
                optimiser.zero_grad(set_to_none=True)
                out = model(x_train[batch])
                loss_fn(out.squeeze(1) if regression else out, y_train[batch]).backward()
                optimiser.step()
            stream = torch.get_rng_state()
        model.eval()
        with torch.no_grad():
            logits = model(x_val)
            loss = loss_fn(logits.squeeze(1) if regression else logits, y_val).item()
            accuracy = None if regression else (logits.argmax(1) == y_val).float().mean().item()
        took = round(time.perf_counter() - started, 4)
        loss = loss if math.isfinite(loss) else 1e3  # a diverged net: a large loss, as a sweep would see it
        row = {"val_loss": float(f"{min(loss, 1e3):.5g}")}
        if accuracy is not None:
            row["val_accuracy"] = float(f"{accuracy:.5g}")
        yield row, took


def mlp(dataset: str, config: dict):
    """The net a config describes: ``depth`` hidden layers of ``width`` units, ReLU and dropout after each."""
    from torch import nn

    x_train, y_train, _, _ = load(dataset)
    classes = 1 if dataset in REGRESSION else int(y_train.max()) + 1
    layers: list[nn.Module] = []
    width_in = x_train.shape[1]
    for _ in range(int(config["depth"])):
        layers += [nn.Linear(width_in, int(config["width"])), nn.ReLU(), nn.Dropout(float(config["dropout"]))]
        width_in = int(config["width"])
    return nn.Sequential(*layers, nn.Linear(width_in, classes))


def _one(job: tuple[str, dict]) -> dict:
    return train(*job)


def make(dataset: str, jobs: int) -> Path:
    import gzip
    import json

    configs = [dict(zip(GRID, values, strict=True)) for values in itertools.product(*GRID.values())]
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        curves = list(pool.map(_one, [(dataset, c) for c in configs], chunksize=4))
    OUT.mkdir(parents=True, exist_ok=True)
    path = OUT / f"{dataset}.json.gz"
    data = {"params": list(GRID), "metric": "val_loss", "mode": "min", "epochs": EPOCHS,
            "source": f"sklearn {dataset}: MLP, SGD momentum 0.9, 80/20 split, {len(configs)} configs",
            "curves": curves}  # fmt: skip
    with gzip.open(path, "wt", encoding="utf-8") as f:
        json.dump(data, f, separators=(",", ":"))
    print(f"{dataset}: {len(configs)} configs x {EPOCHS} epochs in {time.perf_counter() - started:.0f} s -> {path} "
          f"({path.stat().st_size // 1024} KiB)")  # fmt: skip
    return path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=list(DATASETS), choices=DATASETS)
    parser.add_argument("--jobs", type=int, default=2, help="processes training configs at once")
    args = parser.parse_args()
    for dataset in args.datasets:
        make(dataset, args.jobs)


if __name__ == "__main__":
    main()
