"""Fixed cost per trial: many one-epoch trials on a tiny set, with and without actor reuse, in one run.

Prints, for each variant, the sweep's wall time (Ray start-up included), the summed compute time inside
the trials, and the wall-clock cost each trial adds beyond its compute:
(wall - compute / slots) / trials.

    python benchmarks/bench_overhead.py [--trials 40] [--cpus 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from tuner.launch.resolve import resolve  # noqa: E402
from tuner.launch.runner import run_sweep  # noqa: E402


def one_sweep(storage: str, trials: int, cpus: int, reuse: bool) -> dict:
    config = resolve({
        "space": "cifar_small", "dataset": "synthetic", "synthetic_size": 200, "num_samples": trials, "max_epochs": 1,
        "scheduler": "fifo", "searcher": "random", "storage_path": storage, "name": f"reuse-{reuse}",
        "cpus_per_trial": 1, "gpus_per_trial": 0,
    })  # fmt: skip  (settings completed as a sweep's are: metric and mode from the space)
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        summary = run_sweep(config, out=lambda line: None, num_cpus=cpus, reuse_actors=reuse)
    wall = time.perf_counter() - started
    compute = sum(
        pd.read_csv(p)["time_total_s"].iloc[-1] for p in Path(summary.experiment).glob("*/progress.csv")
    )
    return {"wall": wall, "compute": compute, "trials": summary.trials, "failed": len(summary.failed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    args = parser.parse_args()
    print(f"# {args.trials} one-epoch trials, 160 training images each, {args.cpus} CPUs, 1 CPU per trial; "
          f"{platform.machine()}, Python {platform.python_version()}")  # fmt: skip
    print(f"{'variant':<16} {'wall s':>7} {'compute s':>10} {'per-trial cost s':>17}")
    rows = {}
    with tempfile.TemporaryDirectory() as storage:
        for reuse in (False, True):
            r = one_sweep(storage, args.trials, args.cpus, reuse)
            per_trial = (r["wall"] - r["compute"] / args.cpus) / r["trials"]
            rows[reuse] = per_trial
            name = "reuse_actors" if reuse else "fresh actors"
            print(f"{name:<16} {r['wall']:>7.1f} {r['compute']:>10.1f} {per_trial:>17.3f}"
                  + (f"   ({r['failed']} failed)" if r["failed"] else ""))  # fmt: skip
    print(f"ratio fresh / reuse per-trial cost: {rows[False] / rows[True]:.1f}x")


if __name__ == "__main__":
    main()
