"""Several objectives, side by side: the hypervolume each method's trials cover within the same epochs.

Sources: the real learning curves of benchmarks/curves/ (small PyTorch MLPs on scikit-learn's datasets, 432
configs each, 27 epochs) with a second objective every user of such a sweep weighs against the loss: the
net's parameter count in thousands (``params_k``: width, depth, the dataset's inputs and outputs), which a
bigger net pays for whatever it learns. Both minimised. Every method is replayed (tuner/replay: the very
scheduler and searcher objects ``tuner sweep`` builds) with ``--workers`` trials at once and the same budget:
FIFO-random's ``--fifo-trials`` trials times 27 epochs. Methods:

- ``asha-fronts+optuna``: tuner's default for two objectives (ASHA ranking each rung by fronts, Optuna's
  multi-objective TPE);
- ``asha-fronts+random``: the same scheduler with random search (which half of the gain is the scheduler's);
- ``asha+random`` on the loss alone, its trials' front taken afterwards (early stopping that ignores size);
- ``fifo+random``: no early stopping.

The figure: the hypervolume of each run's front (every trial at its last epoch) up to a reference point fixed
per source (the table's median final loss, so only a net better than half the grid counts, and the largest
net plus a tenth of the size range; a diverged net's loss of 1,000 would otherwise swamp every difference), as
a share of the table's own front's (every config's final epoch): 1.0 is the best front the table holds. Median and
quartiles over ``--seeds`` seeds, and how often each method beats the first.

    python benchmarks/bench_pareto.py                 # 3 sources x 4 methods x 10 seeds (about 6 min on 2 cores)
    python benchmarks/bench_pareto.py --seeds 3 --sources digits
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

SOURCES = ["digits", "breast_cancer", "diabetes"]
METHODS = ["asha-fronts+optuna", "asha-fronts+random", "asha+random", "fifo+random"]
SHAPES = {"digits": (64, 10), "breast_cancer": (30, 2), "diabetes": (10, 1)}  # inputs, outputs (make_curves.py)


def params_k(name: str, config: dict) -> float:
    """The MLP's parameter count in thousands, as make_curves.py builds it."""
    inputs, outputs = SHAPES[name]
    width, depth = int(config["width"]), int(config["depth"])
    count, before = 0, inputs
    for _ in range(depth):
        count += before * width + width
        before = width
    return (count + before * outputs + outputs) / 1000


class WithSize:
    """A curve table whose every row also reports the net's size."""

    def __init__(self, name: str, table) -> None:
        self.name, self.table = name, table

    def curve(self, config: dict):
        from tuner.replay.engine import Curve

        found = self.table.curve(config)
        if found is None:
            return None
        size = params_k(self.name, config)
        return Curve(found.config, [{**row, "params_k": size} for row in found.rows], found.seconds)


def reference(name: str, table) -> tuple[tuple[float, float], float]:
    """The source's reference point, and the hypervolume of the table's own front (every config at its end)."""
    from tuner import pareto

    finals = [(c.rows[-1]["val_loss"], params_k(name, c.config)) for c in table.curves]
    losses, sizes = [p[0] for p in finals], [p[1] for p in finals]
    ref = (statistics.median(losses), max(sizes) + 0.1 * (max(sizes) - min(sizes)))
    return ref, pareto.hypervolume(finals, ref)


def job(spec: tuple[str, str, int, int, int, int, int]) -> dict:
    import logging
    import warnings

    from curve_sources import table

    from tuner import pareto
    from tuner.objectives import Objective
    from tuner.replay.engine import replay
    from tuner.replay.setup import build

    warnings.simplefilter("ignore")
    logging.getLogger("ray").setLevel(logging.ERROR)
    name, method, seed, workers, fifo_trials, grace, eta = spec
    src = table(name)
    scheduler, searcher = method.split("+")
    fronts = scheduler.endswith("-fronts")
    scheduler = scheduler.removesuffix("-fronts")
    both = (Objective(src.metric, "min"), Objective("params_k", "min"))
    fifo = method == "fifo+random"
    planned = fifo_trials if fifo else 4 * fifo_trials
    algorithms = build(src.params, scheduler, searcher, max_epochs=src.epochs,
                       num_samples=planned, seed=seed, workers=workers, grace_period=grace, reduction_factor=eta,
                       objectives=both if fronts else both[:1])  # fmt: skip
    started = time.perf_counter()
    outcome = replay(WithSize(name, src.curves), algorithms, workers=workers, metric=src.metric, mode="min",
                     num_samples=fifo_trials if fifo else None, max_epochs=src.epochs,
                     epoch_budget=None if fifo else fifo_trials * src.epochs)  # fmt: skip
    ref, best = reference(name, src.curves)
    covered = pareto.hypervolume(outcome.points(both), ref)
    return {"source": name, "method": method, "seed": seed, "share": covered / best, "trials": len(outcome.trials),
            "epochs": outcome.epochs, "seconds": time.perf_counter() - started}  # fmt: skip


def main() -> None:
    from concurrent.futures import ProcessPoolExecutor

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sources", nargs="+", default=SOURCES)
    parser.add_argument("--methods", nargs="+", default=METHODS)
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--workers", type=int, default=4, help="trials at once in each replay")
    parser.add_argument("--fifo-trials", type=int, default=27, help="FIFO-random's trials: sets the epoch budget")
    parser.add_argument("--jobs", type=int, default=2, help="processes running replays")
    parser.add_argument("--grace-period", type=int, default=1, help="ASHA's first rung, every ASHA method")
    parser.add_argument("--reduction-factor", type=int, default=2, help="ASHA's 1/eta kept, every ASHA method")
    args = parser.parse_args()
    specs = [(s, m, seed, args.workers, args.fifo_trials, args.grace_period, args.reduction_factor)
             for s in args.sources for seed in range(args.seeds) for m in args.methods]  # fmt: skip
    results: dict = {}
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool:
        for done in pool.map(job, specs, chunksize=1):
            results.setdefault(done["source"], {}).setdefault(done["method"], []).append(done)
            print(f"  {done['source']:<14} {done['method']:<19} seed {done['seed']:>2}: {done['trials']:>4} trials, "
                  f"{done['epochs']:>4} epochs, share {done['share']:.3f} ({done['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    print(f"# {len(specs)} replays in {time.perf_counter() - started:.0f} s on {args.jobs} processes; "
          f"{args.workers} trials at once; budget {args.fifo_trials} x 27 epochs; ASHA grace period {args.grace_period}, "
          f"reduction factor {args.reduction_factor}", file=sys.stderr)  # fmt: skip
    first = args.methods[0]
    for name, by_method in results.items():
        print(f"\n{name}: hypervolume of val_loss x params_k as a share of the table's own front "
              f"({args.seeds} seeds, {args.fifo_trials * 27} epochs each; higher is better)")  # fmt: skip
        mine = {r["seed"]: r["share"] for r in by_method.get(first, [])}
        for method in args.methods:
            runs = by_method.get(method, [])
            shares = sorted(r["share"] for r in runs)
            q = statistics.quantiles(shares, n=4) if len(shares) > 1 else [shares[0]] * 3
            beaten = sum(1 for r in runs if mine.get(r["seed"], 0) > r["share"])
            versus = "" if method == first else f"   {first} higher on {beaten}/{len(runs)} seeds"
            print(f"  {method:<19} median {statistics.median(shares):.3f}  [{q[0]:.3f}, {q[2]:.3f}]  "
                  f"{statistics.median(r['trials'] for r in runs):>4.0f} trials{versus}")  # fmt: skip


if __name__ == "__main__":
    main()
