"""Fixed cost per trial: many one-epoch trials on a tiny set, with and without actor reuse, in one run;
and ``--instant N``: N instant trials through ``tuner sweep`` against the same trials through raw Ray Tune.

Prints, for each variant, the sweep's wall time (Ray start-up included), the summed compute time inside
the trials, and the wall-clock cost each trial adds beyond its compute:
(wall - compute / slots) / trials. With ``--instant``, both run on one Ray started once, alternately
``--rounds`` times (each going first in every other round), and the milliseconds a trial costs each (wall /
trials) are printed side by side, then each side's minimum, median and maximum. With ``--short-sweeps N``:
N rounds of a short sweep as the test suite runs them (6 trials of 4 instant epochs, ASHA + random, 1 CPU a
trial), through raw Ray Tune, through tuner, and through tuner with Tune's own rule of one trial waiting
for a slot (``TUNE_MAX_PENDING_TRIALS_PG=1``, what tuner did before it let random search have one per slot):
the whole sweep's seconds, which a short sweep spends mostly on starting its trials' worker processes.

    python benchmarks/bench_overhead.py [--trials 40] [--cpus 2]
    python benchmarks/bench_overhead.py --instant 400 --rounds 3
    python benchmarks/bench_overhead.py --short-sweeps 8
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
    config = resolve(
        {
            "space": "cifar_small",
            "dataset": "synthetic",
            "synthetic_size": 200,
            "num_samples": trials,
            "max_epochs": 1,
            "scheduler": "fifo",
            "searcher": "random",
            "storage_path": storage,
            "name": f"reuse-{reuse}",
            "cpus_per_trial": 1,
            "gpus_per_trial": 0,
        }
    )  # fmt: skip  (settings completed as a sweep's are: metric and mode from the space)
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        summary = run_sweep(config, out=lambda line: None, num_cpus=cpus, reuse_actors=reuse)
    wall = time.perf_counter() - started
    compute = sum(
        pd.read_csv(p)["time_total_s"].iloc[-1] for p in Path(summary.experiment).glob("*/progress.csv")
    )
    return {"wall": wall, "compute": compute, "trials": summary.trials, "failed": len(summary.failed)}


INSTANT_SPACE = '''"""Instant trials: one report, no work."""
from ray import tune

from tuner import SearchSpace


def instant(config):
    tune.report({"loss": config["x"]})


SPACE = SearchSpace(params={"x": tune.uniform(0, 1)}, trainable=instant, metric="loss", mode="min")
'''


def instant(config: dict) -> None:
    from ray import tune

    tune.report({"loss": config["x"]})


def raw_ray(storage: str, trials: int) -> float:
    """The same instant trials as Ray Tune's own users run them: the wall seconds of ``Tuner.fit``."""
    from ray import tune

    tuner = tune.Tuner(
        instant,
        param_space={"x": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=trials, reuse_actors=True),
        run_config=tune.RunConfig(name=f"raw-{time.time_ns()}", storage_path=storage, verbose=0),
    )
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        results = tuner.fit()
    assert len(results) == trials and not results.errors
    return time.perf_counter() - started


def tuner_instant(storage: str, space: str, trials: int) -> float:
    config = resolve({"space": space, "num_samples": trials, "max_epochs": 1, "scheduler": "fifo",
                      "searcher": "random", "storage_path": storage, "name": f"tuner-{time.time_ns()}",
                      "cpus_per_trial": 1})  # fmt: skip
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        summary = run_sweep(config, out=lambda line: None)
    assert summary is not None and summary.trials == trials and not summary.failed
    return time.perf_counter() - started


def instant_versus_raw(trials: int, rounds: int, cpus: int) -> None:
    import ray

    from tuner.launch.placement.cluster import prepare_environment

    prepare_environment()
    ray.init(
        address="local", num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False
    )
    print(f"# {trials} instant trials (one report each), fifo + random, {cpus} CPUs, 1 CPU a trial, actors reused; "
          f"one Ray for both, alternately; {platform.machine()}, Python {platform.python_version()}")  # fmt: skip
    print(
        f"{'round':<6} {'raw Ray s':>10} {'tuner s':>9} {'raw ms/trial':>13} {'tuner ms/trial':>15} {'tuner adds':>11}"
    )
    with tempfile.TemporaryDirectory() as storage:
        space = Path(storage, "instant_space.py")
        space.write_text(INSTANT_SPACE)
        raw_ray(storage, 8)  # warm: the first fits import what each needs
        tuner_instant(storage, str(space), 8)
        walls: dict[str, list[float]] = {"raw": [], "tuner": []}
        for round_ in range(1, rounds + 1):
            # alternate which goes first, so neither always meets the machine the other left behind
            sides = {
                "raw": lambda: raw_ray(storage, trials),
                "tuner": lambda: tuner_instant(storage, str(space), trials),
            }
            times = {name: sides[name]() for name in (("raw", "tuner") if round_ % 2 else ("tuner", "raw"))}
            raw, ours = times["raw"], times["tuner"]
            walls["raw"].append(raw)
            walls["tuner"].append(ours)
            print(f"{round_:<6} {raw:>10.1f} {ours:>9.1f} {1000 * raw / trials:>13.1f} {1000 * ours / trials:>15.1f} "
                  f"{(ours - raw) / raw:>+10.0%}")  # fmt: skip
    ray.shutdown()
    import statistics

    per = {k: [1000 * w / trials for w in v] for k, v in walls.items()}
    print(f"ms/trial min / median / max: raw Ray {min(per['raw']):.1f} / {statistics.median(per['raw']):.1f} / "
          f"{max(per['raw']):.1f}; tuner {min(per['tuner']):.1f} / {statistics.median(per['tuner']):.1f} / "
          f"{max(per['tuner']):.1f}; medians differ by "
          f"{statistics.median(per['tuner']) / statistics.median(per['raw']) - 1:+.0%}")  # fmt: skip


SHORT_SPACE = '''"""Short trials: a few instant epochs, a loss set by the config."""
from ray import tune

from tuner import SearchSpace


def epochs(config, *, max_epochs=4):
    for epoch in range(1, max_epochs + 1):
        tune.report({"loss": config["x"] + 1 / epoch, "epoch": epoch})


SPACE = SearchSpace(params={"x": tune.uniform(0, 1)}, trainable=epochs, metric="loss", mode="min")
'''
SHORT = {"trials": 6, "epochs": 4}


def short_raw(storage: str) -> float:
    from ray import tune
    from ray.tune.schedulers import ASHAScheduler

    def epochs(config: dict) -> None:
        for epoch in range(1, SHORT["epochs"] + 1):
            tune.report({"loss": config["x"] + 1 / epoch, "epoch": epoch})

    tuner = tune.Tuner(
        tune.with_resources(epochs, {"cpu": 1}),
        param_space={"x": tune.uniform(0, 1)},
        tune_config=tune.TuneConfig(metric="loss", mode="min", num_samples=SHORT["trials"], reuse_actors=True,
                                    scheduler=ASHAScheduler(max_t=SHORT["epochs"], grace_period=1)),
        run_config=tune.RunConfig(name=f"raw-{time.time_ns()}", storage_path=storage, verbose=0),
    )  # fmt: skip
    started = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        assert len(tuner.fit()) == SHORT["trials"]
    return time.perf_counter() - started


def short_tuner(storage: str, space: str, waiting: str | None = None) -> float:
    from tuner.ray_compat.waiting import SETTING

    config = resolve({"space": space, "num_samples": SHORT["trials"], "max_epochs": SHORT["epochs"],
                      "scheduler": "asha", "searcher": "random", "storage_path": storage,
                      "name": f"tuner-{time.time_ns()}", "cpus_per_trial": 1})  # fmt: skip
    if waiting is not None:
        os.environ[SETTING] = waiting  # a value set outside is left as it is
    started = time.perf_counter()
    try:
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            summary = run_sweep(config, out=lambda line: None)
    finally:
        os.environ.pop(SETTING, None)
    assert summary is not None and summary.trials == SHORT["trials"] and not summary.failed
    return time.perf_counter() - started


def short_sweeps(rounds: int, cpus: int) -> None:
    import statistics

    import ray

    from tuner.launch.placement.cluster import prepare_environment

    prepare_environment()
    ray.init(
        address="local", num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False
    )
    print(f"# short sweeps: {SHORT['trials']} trials x {SHORT['epochs']} instant epochs, ASHA + random, {cpus} CPUs, "
          f"1 CPU a trial, actors reused; one Ray for all, sides rotating; {platform.machine()}, "
          f"Python {platform.python_version()}")  # fmt: skip
    names = ("raw Ray", "tuner", "tuner, 1 waiting")
    print(f"{'round':<6}" + "".join(f"{n + ' s':>20}" for n in names))
    with tempfile.TemporaryDirectory() as storage:
        space = str(Path(storage, "short_space.py"))
        Path(space).write_text(SHORT_SPACE)
        sides = {
            "raw Ray": lambda: short_raw(storage),
            "tuner": lambda: short_tuner(storage, space),
            "tuner, 1 waiting": lambda: short_tuner(storage, space, waiting="1"),
        }
        for side in sides.values():
            side()  # warm: the first sweeps import what each needs
        walls: dict[str, list[float]] = {n: [] for n in names}
        for round_ in range(rounds):
            order = names[round_ % 3 :] + names[: round_ % 3]  # each side goes first in turn
            for name in order:
                walls[name].append(sides[name]())
            print(f"{round_ + 1:<6}" + "".join(f"{walls[n][-1]:>20.2f}" for n in names))
    ray.shutdown()
    for name in names:
        w = walls[name]
        print(f"{name}: min {min(w):.2f} s, median {statistics.median(w):.2f} s, max {max(w):.2f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=40)
    parser.add_argument("--cpus", type=int, default=os.cpu_count())
    parser.add_argument(
        "--instant", type=int, metavar="N", help="N instant trials: tuner against raw Ray Tune"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--short-sweeps", type=int, metavar="N", help="N rounds of short sweeps (see above)")
    args = parser.parse_args()
    if args.short_sweeps:
        short_sweeps(args.short_sweeps, args.cpus)
        return
    if args.instant:
        instant_versus_raw(args.instant, args.rounds, args.cpus)
        return
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
