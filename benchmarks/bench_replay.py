"""Replay speed: how long tuner's replay engine takes to play many trials through each scheduler.

A synthetic table of learning curves (a config's floor plus a decaying term, a few seconds an epoch) is
replayed under every scheduler a replay takes, with random search proposing from it, on 4 simulated
workers. Printed side by side: trials, epochs the scheduler let run, simulated hours, and the real
seconds the replay took (best of ``--repeat``).

    python benchmarks/bench_replay.py                   # 1,000 trials x 27 epochs
    python benchmarks/bench_replay.py --trials 200 --schedulers asha median
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


class SyntheticCurves:
    """A learning curve for any config of (width, lr): a floor set by both, approached at a rate set by lr."""

    def __init__(self, epochs: int) -> None:
        self.epochs = epochs

    def curve(self, config: dict):
        from tuner.replay.engine import Curve

        floor = abs(math.log10(config["lr"]) + 2.5) + 16 / config["width"]
        rate = 0.2 + 10 * config["lr"]
        rows = [{"loss": floor + 3.0 * math.exp(-rate * e)} for e in range(1, self.epochs + 1)]
        return Curve(config, rows, [2.0 + config["width"] / 64] * self.epochs)


def run(scheduler: str, trials: int, epochs: int, workers: int):
    from ray import tune

    from tuner.objectives import LOSS
    from tuner.replay.engine import replay
    from tuner.replay.setup import build

    params = {"width": tune.choice([4, 8, 16, 32, 64, 128]), "lr": tune.loguniform(1e-4, 1e-1)}
    algorithms = build(params, scheduler, "random" if scheduler != "bohb" else None, objectives=LOSS,
                       max_epochs=epochs, num_samples=trials, seed=0, workers=workers)  # fmt: skip
    if algorithms.searcher is None:  # BOHB brings its own searcher
        algorithms = build(params, scheduler, "bohb", objectives=LOSS, max_epochs=epochs,
                           num_samples=trials, seed=0, workers=workers)  # fmt: skip
    started = time.perf_counter()
    outcome = replay(SyntheticCurves(epochs), algorithms, workers=workers, metric="loss", mode="min",
                     num_samples=trials, max_epochs=epochs)  # fmt: skip
    return outcome, time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=27)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--schedulers", nargs="+", default=["asha", "fifo", "hyperband", "median", "bohb"])
    args = parser.parse_args()
    import ray.tune  # noqa: F401 - imported once, outside the timings

    print(f"# {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
          f"{args.trials} trials x {args.epochs} epochs, {args.workers} simulated workers, best of {args.repeat}")  # fmt: skip
    print(f"{'scheduler':<10} {'trials':>6} {'epochs run':>10} {'simulated h':>11} {'replay s':>9}")
    for scheduler in args.schedulers:
        best, outcome = math.inf, None
        for _ in range(args.repeat):
            outcome, seconds = run(scheduler, args.trials, args.epochs, args.workers)
            best = min(best, seconds)
        print(f"{scheduler:<10} {len(outcome.trials):>6} {outcome.epochs:>10} {outcome.wall / 3600:>11.1f} {best:>9.2f}")


if __name__ == "__main__":
    main()
