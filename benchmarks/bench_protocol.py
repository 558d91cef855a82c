"""Search quality under the frozen protocol (benchmarks/protocol.py): tuner's default and the field's methods side
by side on LCBench's surrogate, 1,000 epochs, on development or held-out tasks and seeds.

Methods, each with its published defaults (none tuned here):
- tuner, replayed through the very scheduler and searcher objects ``tuner sweep`` builds (tuner/replay):
  ``default`` (no --scheduler/--searcher, a trainable that keeps checkpoints), ``default/p0`` (the same for one
  that keeps none), and ``SCHEDULER+SEARCHER`` pairs: ``fifo+random`` (random search), ``asha+random`` (Ray's ASHA,
  stopping, grace 1, halving), ``asha/r3+random`` (reduction factor 3), ``bohb+bohb`` (Ray Tune's BOHB).
- Optuna, driven as its users write it (ask, report each epoch, ``should_prune``), on the same simulated clock:
  ``optuna-tpe`` (no pruning), ``optuna-tpe+hyperband`` and ``optuna-tpe+median`` (its two pruners).
- Syne Tune 0.13.0 in .venv-peers (``make bench-peers``), through its own simulator backend:
  ``st-asha-promotion``, ``st-asha-stopping`` (reduction factor 3), ``st-mobster``, ``st-hypertune``, ``st-dyhpo``,
  ``st-syncbohb``.

    python benchmarks/bench_protocol.py --split                       # the frozen split
    python benchmarks/bench_protocol.py --tasks heldout --seeds heldout --workers 2 --methods default fifo+random ...
    python benchmarks/bench_protocol.py --print benchmarks/baselines/protocol-heldout-*.jsonl.gz --against default
"""

from __future__ import annotations

import argparse
import contextlib
import heapq
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import kernels  # noqa: E402, F401  (before numpy loads: AVX2 kernels wherever the CPU has them)
import protocol  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results"
PEERS_PYTHON = ROOT / ".venv-peers" / "bin" / "python"
EPOCHS = protocol.EPOCHS
OPTUNA = ("optuna-tpe", "optuna-tpe+hyperband", "optuna-tpe+median")
FULL_TRIALS = protocol.BUDGET // EPOCHS  # the whole trials the budget buys: what a searcher plans its start from


class _Curves:
    """A task's curves as the replay engine reads them."""

    def __init__(self, task: str, form: str) -> None:
        self.curves = protocol.TaskCurves(task, form)

    def curve(self, config):
        from tuner.replay.engine import Curve

        rows, seconds = self.curves.rows_and_seconds(config)
        return Curve(dict(config), rows, seconds)


def tuner_run(job: dict) -> dict:
    """One of tuner's schedulers and searchers, replayed on the budget; ``METHOD@MODULE.NAME=VALUE,...`` runs it
    with those module constants changed for this run alone (settings tried on development tasks only)."""
    import numpy as np
    from lcbench import space

    np.random.seed(job["seed"])  # hpbandster's BOHB draws from numpy's global generator
    params = space()
    method, _, settings = job["method"].partition("@")
    with _settings(settings):
        return _tuner_replay(job, method, params)


def _tuner_replay(job: dict, method: str, params: dict) -> dict:
    from bench_search import resolve_pair

    from tuner.objectives import Objective
    from tuner.replay.engine import replay
    from tuner.replay.setup import build

    if method.startswith("default"):
        scheduler, searcher, options = resolve_pair("default", params)
        options = {"can_pause": 0} if method == "default/p0" else {}
    else:
        scheduler, searcher, options = resolve_pair(method, params)
    algorithms = build(params, scheduler, searcher, objectives=(Objective(protocol.METRIC, "max"),), max_epochs=EPOCHS,
                       num_samples=4 * FULL_TRIALS, seed=job["seed"], workers=job["workers"], trials_cap=None,
                       **options)  # fmt: skip
    curves = _Curves(job["task"], job["form"])
    if job["form"] == "table-told":
        _tell_the_table(algorithms.searcher, curves.curves)
    outcome = replay(curves, algorithms, workers=job["workers"], metric=protocol.METRIC,
                     mode="max", max_epochs=EPOCHS, epoch_budget=protocol.BUDGET)  # fmt: skip
    return {"best_so_far": [(spent, value) for spent, _, value in outcome.best_so_far()],
            "trials": len(outcome.trials), "epochs": outcome.epochs}  # fmt: skip


def _tell_the_table(searcher, curves: protocol.TaskCurves) -> None:
    """The table-told form: every config the searcher proposes becomes the nearest table config not yet tried
    before its trial starts, so the searcher (and the scheduler, which reads the trial's config) learns from the
    config that trained. Freeze-thaw's record of its own proposals keeps the proposal: in a sweep a proposal is
    tried and never proposed again, and only that record keeps it from being proposed again here (recording the
    table config in its place let the model propose the same point over and over)."""
    proposes, tried = searcher.suggest, set()

    def suggest(trial_id: str):
        config = proposes(trial_id)
        if not isinstance(config, dict):
            return config
        trained = {**config, **curves.nearest_untried(config, tried)}
        told, inner = dict(trained), searcher
        while inner is not None:  # Ray's BOHB learns from what it keeps of its own proposal, in its encoding
            for p in getattr(getattr(inner, "plan", None), "params", ()):
                if p.name in told and p.encode is not None:
                    told[p.name] = p.encode(told[p.name])
            for kept in (getattr(inner, "trial_to_params", {}), getattr(inner, "_drawn_here", {})):
                if trial_id in kept:  # ... and a draw made while it waits, told to it at the trial's end
                    kept[trial_id] = {**kept[trial_id], **{k: told[k] for k in protocol.BOX}}
            inner = getattr(inner, "searcher", None) or getattr(inner, "inner", None)
        return trained

    searcher.suggest = suggest


@contextlib.contextmanager
def _settings(text: str) -> Iterator[None]:
    """``tuner.schedulers.curve_fitting.MIN_TRIALS=3,...`` set for the block, as they were after it (a pool's
    process runs other methods next). Name the module that reads the constant."""
    import importlib

    changed = []
    try:
        for item in filter(None, text.split(",")):
            where, _, value = item.partition("=")
            module_name, _, name = where.rpartition(".")
            module = importlib.import_module(module_name)
            if not hasattr(module, name):
                raise ValueError(f"{module_name} has no {name}")
            before = getattr(module, name)
            changed.append((module, name, before))
            read = value.lower() in ("1", "true", "yes") if isinstance(before, bool) else type(before)(value)
            setattr(module, name, read)
        yield
    finally:
        for module, name, before in reversed(changed):
            setattr(module, name, before)


def optuna_run(job: dict) -> dict:
    """Optuna's TPE with one of its pruners, trials reporting each epoch, ``workers`` at once on the simulated
    clock the replay uses (an epoch ends the surrogate's seconds after it began)."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    pruner = {"optuna-tpe": optuna.pruners.NopPruner(),
              "optuna-tpe+hyperband": optuna.pruners.HyperbandPruner(min_resource=1, max_resource=EPOCHS),
              "optuna-tpe+median": optuna.pruners.MedianPruner()}[job["method"]]  # fmt: skip
    study = optuna.create_study(direction="maximize", sampler=optuna.samplers.TPESampler(seed=job["seed"]),
                                pruner=pruner)  # fmt: skip
    curves = protocol.TaskCurves(job["task"], job["form"])
    clock: list[tuple[float, int, int]] = []
    running: dict[int, list] = {}
    order = iter(range(10**9))

    tried: set[int] = set()

    def proposal(trial) -> dict:
        config = {}
        for name, (lo, hi, log, integer) in protocol.BOX.items():
            suggest = trial.suggest_int if integer else trial.suggest_float
            config[name] = suggest(name, int(lo) if integer else lo, int(hi) if integer else hi, log=log)
        return config

    def start(slot: int, now: float) -> None:
        trial = study.ask()
        config = proposal(trial)
        if job["form"] == "table-told":  # TPE learns only from finished trials: the proposal's trial fails
            trained = curves.nearest_untried(config, tried)  # and the table config's runs in its place
            study.tell(trial, state=optuna.trial.TrialState.FAIL)
            study.enqueue_trial(trained)
            trial = study.ask()
            config = proposal(trial)
        rows, seconds = curves.rows_and_seconds(config)
        running[slot] = [trial, rows, seconds, 0]
        heapq.heappush(clock, (now + seconds[0], next(order), slot))

    for slot in range(job["workers"]):
        start(slot, 0.0)
    spent, best, best_so_far = 0, None, []
    while spent < protocol.BUDGET:
        now, _, slot = heapq.heappop(clock)
        trial, rows, seconds, done = running[slot]
        value = float(rows[done][protocol.METRIC])
        spent, done = spent + 1, done + 1
        if best is None or value > best:
            best = value
            best_so_far.append((spent, value))
        trial.report(value, done)
        if done == EPOCHS:
            study.tell(trial, value)
        elif trial.should_prune():
            study.tell(trial, state=optuna.trial.TrialState.PRUNED)
        else:
            running[slot][3] = done
            heapq.heappush(clock, (now + seconds[done], next(order), slot))
            continue
        start(slot, now)
    ran = [t for t in study.trials if t.state != optuna.trial.TrialState.FAIL]
    return {"best_so_far": best_so_far, "trials": len(ran), "epochs": spent}


def peer_run(job: dict) -> dict:
    """One of Syne Tune's methods, in its own environment."""
    if not PEERS_PYTHON.exists():
        _refuse("Syne Tune's methods need .venv-peers: run `make bench-peers` first")
    done = subprocess.run([str(PEERS_PYTHON), str(ROOT / "benchmarks" / "peers_synetune.py"), json.dumps(job)],
                          capture_output=True, text=True, check=False)  # fmt: skip
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    if done.returncode or not lines:
        raise RuntimeError(f"{job}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else 'no output'}")
    out = json.loads(lines[-1])
    return {k: out[k] for k in ("best_so_far", "trials", "epochs")}


def run(job: dict) -> dict:
    import logging
    import warnings

    warnings.simplefilter("ignore")
    logging.getLogger("ray").setLevel(logging.ERROR)
    started = time.perf_counter()
    method = job["method"]
    runner = peer_run if method.startswith("st-") else optuna_run if method in OPTUNA else tuner_run
    out = runner(job)
    return {**job, "budget": protocol.BUDGET, **out, "seconds": round(time.perf_counter() - started, 2)}


def _commit() -> str:
    done = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    dirty = subprocess.run(["git", "-C", str(ROOT), "status", "--porcelain", "tuner", "benchmarks/protocol.py"],
                           capture_output=True, text=True).stdout.strip()  # fmt: skip
    return done.stdout.strip() + ("+changes" if dirty else "")


def sweep(args: argparse.Namespace) -> Path:
    """Every method on every task and seed of the chosen sets; each run appended to a results file as it ends,
    so a long run that is stopped keeps what it did."""
    from concurrent.futures import ProcessPoolExecutor

    tasks = protocol.task_set(args.tasks) if args.tasks in ("dev", "heldout", "all") else args.tasks.split(",")
    seeds = protocol.seed_set(args.seeds) if args.seeds in ("dev", "heldout") else _seeds(args.seeds)
    tried = [m for m in args.methods if "@" in m]
    if tried and any(protocol.cell(t, s) != "development" for t in tasks for s in seeds):
        _refuse(f"{tried[0]} changes settings: settings are tried on development tasks and seeds only "
                "(--tasks dev --seeds dev or a part of them), never on held-out ones")  # fmt: skip
    off = sorted({(t, s) for t in tasks for s in seeds if protocol.cell(t, s) == "off-protocol"})
    if off and not args.off_protocol:
        _refuse(f"the protocol pairs development tasks with seeds 0-9 and held-out tasks with "
                         f"seeds 10-29 (task {off[0][0]} with seed {off[0][1]} is neither); --off-protocol runs it "
                         "anyway, and its figures are printed apart")  # fmt: skip
    untold = [m for m in args.methods if not _told_in_table(m)]
    if args.form == "table-told" and untold:
        _refuse(f"{untold[0]}: its searcher keeps its own proposal where the table-told form cannot rewrite it "
                "(told: tuner's default, random and bohb searchers, Optuna's TPE, Syne Tune's methods)")  # fmt: skip
    jobs = [{"method": m, "task": t, "seed": s, "workers": w, "form": args.form}
            for w in args.workers for s in seeds for t in tasks for m in args.methods]  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = Path(args.out) if args.out else RESULTS / f"protocol-{time.strftime('%Y%m%d-%H%M%S')}.jsonl"
    commit = _commit()
    started = time.perf_counter()
    with ProcessPoolExecutor(max_workers=args.jobs) as pool, path.open("a") as out:
        for done in pool.map(run, jobs, chunksize=1):
            out.write(json.dumps({**done, "commit": commit}) + "\n")
            out.flush()
            print(f"  {done['method']:<22} {done['task']:>6} seed {done['seed']:>2} x{done['workers']}: "
                  f"{done['best_so_far'][-1][1]:.4f}, {done['trials']} trials ({done['seconds']:.1f} s)",
                  file=sys.stderr, flush=True)  # fmt: skip
    print(f"# {len(jobs)} runs in {time.perf_counter() - started:.0f} s on {args.jobs} processes -> {path}",
          file=sys.stderr)  # fmt: skip
    return path


def _told_in_table(method: str) -> bool:
    """Whether the table-told form can tell this method the config that trained (``_tell_the_table``): Ray's
    OptunaSearch and BayesOptSearch keep the trial they proposed, whose parameters cannot be changed after."""
    name = method.partition("@")[0]
    return name.startswith(("default", "st-")) or name in OPTUNA or name.partition("+")[2] in ("random", "bohb")


def _refuse(message: str) -> None:
    """Bad input: one line and exit code 2, as the rest of tuner does."""
    print(f"bench: error: {message}", file=sys.stderr)
    raise SystemExit(2)


def _seeds(text: str) -> tuple[int, ...]:
    lo, _, hi = text.partition("-")
    return tuple(range(int(lo), int(hi or lo) + 1))


def _text(path: Path) -> str:
    """A results file, as written or gzipped (the committed ones under benchmarks/baselines/)."""
    import gzip

    return gzip.decompress(path.read_bytes()).decode() if path.suffix == ".gz" else path.read_text()


def _runs(paths: Sequence[str]) -> list[dict]:
    return [json.loads(line) for p in paths for line in _text(Path(p)).splitlines() if line.strip()]


def show(paths: list[str], against: str | None, methods: list[str] | None, before: Sequence[str] = ()) -> None:
    """The tables of every protocol cell (form, trials at once, task and seed set) in the given results; the
    default's runs in ``before`` files are shown as "default (before)", beside the default of the newer runs."""
    runs = _runs(paths) + [
        {**r, "method": f"{r['method']} (before)"} if r["method"].startswith("default") else r for r in _runs(before)
    ]
    if methods:
        runs = [r for r in runs if r["method"] in methods]
    cells: dict = {}
    for r in runs:
        cells.setdefault((r["form"], r["workers"], protocol.cell(r["task"], r["seed"])), []).append(r)
    for (form, workers, kind), cell in sorted(cells.items()):
        commits = sorted({r.get("commit", "?") for r in cell})
        label = f"{kind} tasks, {form} form, {workers} at once, {protocol.BUDGET} epochs (commit {', '.join(commits)})"
        print("\n" + protocol.report(cell, label, against))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", action="store_true", help="print the frozen split of the tasks")
    parser.add_argument("--reference", action="store_true", help="write the per-task reference (minutes)")
    parser.add_argument("--tasks", default="dev", help="dev, heldout, all or task ids joined by commas")
    parser.add_argument("--seeds", default="dev", help="dev (0-9), heldout (10-29) or a range such as 10-14")
    parser.add_argument("--workers", type=int, nargs="+", default=[2], help="trials at once (1, 2, 8)")
    parser.add_argument("--form", choices=protocol.FORMS, default="surrogate", help="see "
                        "benchmarks/protocol.py")  # fmt: skip
    parser.add_argument("--methods", nargs="+", help="methods to run (default: default fifo+random asha+random); "
                        "with --print, the methods to tabulate")  # fmt: skip
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="processes")
    parser.add_argument("--off-protocol", action="store_true", help="allow tasks and seeds the protocol does not "
                        "pair (a check, never a figure)")  # fmt: skip
    parser.add_argument("--out", help="results file (appended to); default benchmarks/results/protocol-TIME.jsonl")
    parser.add_argument("--print", nargs="+", metavar="RESULTS", help="print the tables of recorded results")
    parser.add_argument("--against", help="the method the tests and shares compare with (default: the leader)")
    parser.add_argument("--before", nargs="+", default=[], metavar="RESULTS", help="with --print: results whose "
                        "default ran before a change to it, shown as 'default (before)'")  # fmt: skip
    args = parser.parse_args()
    if args.split:
        dev, held = protocol.split()
        print(f"development ({len(dev)}): {' '.join(dev)}\nheld-out ({len(held)}): {' '.join(held)}")
        return
    if args.reference:
        protocol.write_reference()
        return
    if args.print:
        show(args.print, args.against, args.methods, args.before)
        return
    args.methods = args.methods or ["default", "fifo+random", "asha+random"]
    path = sweep(args)
    show([str(path)], args.against, None)


if __name__ == "__main__":
    main()
