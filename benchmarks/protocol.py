"""The frozen protocol for search quality on LCBench: which tasks and seeds settings may be tuned on, which are
held out, what is counted and how methods are ranked. Written down before any method is tuned on it; changing
anything here makes earlier held-out figures incomparable, so don't (add a new protocol beside it instead).

- Tasks: LCBench's 34 tasks (YAHPO Gym's surrogate, benchmarks/lcbench.py), split once by ``split()``: a task
  is a development task when the CRC-32 of ``"lcbench-split:" + task`` is among the 17 smallest, else held out.
  Settings may be tuned only on development tasks with seeds 0-9; held-out figures come from seeds 10-29, with
  the commit that produced them named beside them.
- Metric: ``val_balanced_accuracy``, maximised; a run's incumbent is the best value seen at any epoch so far.
  Normalised regret per task: (best - incumbent) / (best - worst), best and worst over every run of every method
  and seed on that task together with a reference (``reference()``): 10,000 random configs of the box for the
  surrogate form, the table itself for the table form.
- Budget: 1,000 epochs in all, however many trials run at once (1, 2 or 8).
- Forms: ``surrogate`` (any config of the box gets the surrogate's curve) and ``table`` (every method picks from
  the same 2,000 configs per task, as tabular LCBench does: a proposed config is replaced by its nearest table
  config, in the box scaled to [0, 1] with the log-scaled parameters in log space). The table form removes the
  surrogate's extrapolation, which a model-based searcher can exploit and random search cannot.
  ``table-told`` (added beside them, not a change to them): the same table, but each proposal is replaced by the
  nearest table config this run has not tried *before the trial starts*, so the method is told the config that
  trained (as a tabular method picks from its candidates); the table form tells it only what it proposed.
- Figures: the anytime mean rank (ranks among methods per task and seed, averaged over seeds, then over tasks) at
  25%, 50% and 100% of the budget; a Friedman test over tasks and Wilcoxon signed-rank tests on per-task mean
  regrets with Holm's correction; the share of its own epochs each method needs to reach another's final regret.

This module imports only numpy, scipy and onnxruntime, so Syne Tune's environment (benchmarks/peers_synetune.py,
numpy < 1.27) reads the same tasks, curves and table.
"""

from __future__ import annotations

import functools
import json
import math
import zlib
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
METRIC = "val_balanced_accuracy"
BUDGET = 1000  # epochs in all
EPOCHS = 52  # LCBench's, per trial
FRACTIONS = (0.25, 0.5, 1.0)
DEV_SEEDS = tuple(range(10))
HELDOUT_SEEDS = tuple(range(10, 30))
TABLE_SIZE = 2000
FORMS = ("surrogate", "table", "table-told")
REFERENCE = HERE / "baselines" / "lcbench_reference_balanced.json"
REFERENCE_SAMPLE, REFERENCE_SEED = 10_000, 12345

# The box, in the surrogate's input order: (lower, upper, log scale, integer), from config_space.json.
BOX: dict[str, tuple[float, float, bool, bool]] = {
    "batch_size": (16, 512, True, True),
    "learning_rate": (1e-4, 1e-1, True, False),
    "momentum": (0.1, 0.99, False, False),
    "weight_decay": (1e-5, 0.1, False, False),
    "num_layers": (1, 5, False, True),
    "max_units": (64, 1024, True, True),
    "max_dropout": (0.0, 1.0, False, False),
}


def split() -> tuple[list[str], list[str]]:
    """(development tasks, held-out tasks), 17 each, by the frozen rule above."""
    from lcbench import tasks

    ordered = sorted(tasks(), key=lambda t: (zlib.crc32(f"lcbench-split:{t}".encode()), t))
    half = len(ordered) // 2
    return sorted(ordered[:half], key=int), sorted(ordered[half:], key=int)


def task_set(name: str) -> list[str]:
    dev, held = split()
    return {"dev": dev, "heldout": held, "all": sorted(dev + held, key=int)}[name]


def seed_set(name: str) -> tuple[int, ...]:
    return {"dev": DEV_SEEDS, "heldout": HELDOUT_SEEDS}[name]


def cell(task: str, seed: int) -> str:
    """Which half of the protocol a run belongs to: "development" (a development task, seeds 0-9), "held-out" (a
    held-out task, seeds 10-29), or "off-protocol" (any other pairing, which no figure may pool with either)."""
    dev, held = split()
    if task in dev and seed in DEV_SEEDS:
        return "development"
    if task in held and seed in HELDOUT_SEEDS:
        return "held-out"
    return "off-protocol"


# --- the box, scaled --------------------------------------------------------------------------------------


def unit(config: dict[str, Any]):
    """A config in [0, 1]^7, log-scaled parameters in log space: where 'nearest' is measured."""
    import numpy as np

    out = []
    for name, (lo, hi, log, _) in BOX.items():
        v = float(config[name])
        out.append((math.log(v) - math.log(lo)) / (math.log(hi) - math.log(lo)) if log else (v - lo) / (hi - lo))
    return np.array(out)


def from_unit(point) -> dict[str, Any]:
    config: dict[str, Any] = {}
    for (name, (lo, hi, log, integer)), u in zip(BOX.items(), point, strict=True):
        v = math.exp(math.log(lo) + u * (math.log(hi) - math.log(lo))) if log else lo + u * (hi - lo)
        config[name] = int(min(hi, max(lo, round(v)))) if integer else float(v)
    return config


def random_configs(count: int, seed: int) -> list[dict[str, Any]]:
    """Uniform draws of the box in its own scales (integers rounded in their scale)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    return [from_unit(u) for u in rng.random((count, len(BOX)))]


# --- curves ------------------------------------------------------------------------------------------------


class TaskCurves:
    """One task's curves: ``rows_and_seconds(config)`` gives a config's 52 epochs as a trainable reports them
    and the seconds each took. In the table form the config is first replaced by its nearest table config."""

    def __init__(self, task: str, form: str = "surrogate") -> None:
        if form not in FORMS:
            raise ValueError(f"form {form!r}: one of {', '.join(FORMS)}")
        self.task, self.form = task, form
        self._cache: dict[tuple, tuple[list[dict[str, float]], list[float]]] = {}

    @functools.cached_property
    def table(self) -> tuple[list[dict[str, Any]], Any]:
        """The task's 2,000 configs (the same for every method and seed) and their points in the unit box."""
        import numpy as np

        configs = random_configs(TABLE_SIZE, seed=zlib.crc32(f"lcbench-table:{self.task}".encode()))
        return configs, np.stack([unit(c) for c in configs])

    def nearest(self, config: dict[str, Any]) -> dict[str, Any]:
        import numpy as np

        configs, points = self.table
        return configs[int(np.argmin(((points - unit(config)) ** 2).sum(1)))]

    def nearest_untried(self, config: dict[str, Any], tried: set[int]) -> dict[str, Any]:
        """The table-told form's pick: the nearest table config not in ``tried`` (indices, added to)."""
        import numpy as np

        configs, points = self.table
        if len(tried) >= len(configs):
            raise ValueError(f"table-told: every config of task {self.task}'s table was tried")
        distance = ((points - unit(config)) ** 2).sum(1)
        if tried:
            distance[list(tried)] = np.inf
        pick = int(np.argmin(distance))
        tried.add(pick)
        return configs[pick]

    def rows_and_seconds(self, config: dict[str, Any]) -> tuple[list[dict[str, float]], list[float]]:
        from lcbench import evaluate, rows_and_seconds

        used = self.nearest(config) if self.form != "surrogate" else config
        if self.form == "table-told" and float(((unit(used) - unit(config)) ** 2).sum()) > 1e-12:
            raise ValueError(f"table-told: {config} is not a config of task {self.task}'s table")
        key = tuple(float(used[k]) for k in BOX)
        if key not in self._cache:
            self._cache[key] = rows_and_seconds(evaluate(self.task, [used])[0])
        return self._cache[key]


# --- the reference -----------------------------------------------------------------------------------------


def write_reference() -> None:
    """Per task: the best and worst anytime balanced accuracy of 10,000 random configs, and of the table."""
    import sys
    import time

    import numpy as np
    from lcbench import evaluate, tasks

    k = 3  # val_balanced_accuracy in lcbench.OUTPUTS
    configs = random_configs(REFERENCE_SAMPLE, REFERENCE_SEED)
    out: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for task in tasks():
        best = np.concatenate([evaluate(task, configs[i : i + 2000])[:, :, k].max(1) for i in range(0, len(configs), 2000)])
        table = evaluate(task, TaskCurves(task, "table").table[0])[:, :, k].max(1)
        out[task] = {"best": float(best.max()), "worst": float(best.min()), "median": float(np.median(best)),
                     "table_best": float(table.max()), "table_worst": float(table.min())}  # fmt: skip
        print(f"  {task:>7}: sample {best.min():.4f}-{best.max():.4f}, table {table.min():.4f}-{table.max():.4f}",
              file=sys.stderr, flush=True)  # fmt: skip
    REFERENCE.write_text(json.dumps({"sample": REFERENCE_SAMPLE, "seed": REFERENCE_SEED, "metric": f"anytime {METRIC}",
                                     "table": TABLE_SIZE, "tasks": out}, indent=1) + "\n")  # fmt: skip
    print(f"# {REFERENCE.name}: {time.perf_counter() - started:.0f} s", file=sys.stderr)


@functools.cache
def reference() -> dict[str, dict[str, float]]:
    return json.loads(REFERENCE.read_text())["tasks"]


# --- figures -----------------------------------------------------------------------------------------------


def incumbent(best_so_far: list, spent: float) -> float | None:
    """The best value seen once ``spent`` epochs were spent (best_so_far: (epochs, value) at each improvement)."""
    value = None
    for at, v in best_so_far:
        if at > spent:
            break
        value = v
    return value


def bounds(runs: list[dict], form: str) -> dict[str, tuple[float, float]]:
    """Per task, (best, worst) over every run's incumbents and the reference."""
    ref = reference()
    out: dict[str, tuple[float, float]] = {}
    for task in {r["task"] for r in runs}:
        values = [v for r in runs if r["task"] == task for _, v in r["best_so_far"]]
        lo_key, hi_key = ("table_worst", "table_best") if form != "surrogate" else ("worst", "best")
        best = max([ref[task][hi_key], *values])
        firsts = [r["best_so_far"][0][1] for r in runs if r["task"] == task and r["best_so_far"]]
        worst = min([ref[task][lo_key], *firsts])
        out[task] = (best, worst)
    return out


def regret_at(run: dict, spent: float, bound: tuple[float, float]) -> float:
    best, worst = bound
    value = incumbent(run["best_so_far"], spent)
    return 1.0 if value is None else (best - value) / max(best - worst, 1e-12)


def table_of(runs: list[dict], form: str):
    """regret[method][task][seed][fraction] for every run, and the methods in the order first seen."""
    limits = bounds(runs, form)
    methods: list[str] = []
    out: dict = {}
    for r in runs:
        if r["method"] not in methods:
            methods.append(r["method"])
        cell = out.setdefault(r["method"], {}).setdefault(r["task"], {})
        cell[r["seed"]] = [regret_at(r, f * r["budget"], limits[r["task"]]) for f in FRACTIONS]
    return out, methods


def complete(regret: dict, methods: list[str]) -> list[tuple[str, int]]:
    """The (task, seed) pairs every method ran: the only ones ranks and tests may use."""
    pairs = None
    for m in methods:
        mine = {(t, s) for t, by_seed in regret[m].items() for s in by_seed}
        pairs = mine if pairs is None else pairs & mine
    return sorted(pairs or [], key=lambda p: (int(p[0]), p[1]))


def mean_ranks(regret: dict, methods: list[str], pairs: list[tuple[str, int]]):
    """Per fraction of the budget: each method's rank (1 best, ties shared) per task and seed, averaged over
    seeds, then over tasks."""
    import numpy as np
    from scipy.stats import rankdata

    tasks = sorted({t for t, _ in pairs}, key=int)
    out = np.zeros((len(FRACTIONS), len(methods)))
    for k in range(len(FRACTIONS)):
        per_task = []
        for task in tasks:
            seeds = [s for t, s in pairs if t == task]
            ranks = [rankdata([regret[m][task][s][k] for m in methods]) for s in seeds]
            per_task.append(np.mean(ranks, axis=0))
        out[k] = np.mean(per_task, axis=0)
    return out


def per_task_regret(regret: dict, methods: list[str], pairs: list[tuple[str, int]], k: int):
    """(tasks, methods): each method's mean regret over the seeds of each task, at fraction index ``k``."""
    import numpy as np

    tasks = sorted({t for t, _ in pairs}, key=int)
    return np.array([[np.mean([regret[m][t][s][k] for tt, s in pairs if tt == t]) for m in methods] for t in tasks])


def friedman(values) -> float:
    """The Friedman test's p-value over tasks (rows) for methods (columns); nan with fewer than 3 methods."""
    from scipy.stats import friedmanchisquare

    if values.shape[1] < 3 or values.shape[0] < 2:
        return float("nan")
    return float(friedmanchisquare(*values.T).pvalue)


def wilcoxon_holm(values, methods: list[str], against: str) -> dict[str, float]:
    """Holm-corrected p-values of Wilcoxon signed-rank tests on per-task values: ``against`` versus each other."""
    from scipy.stats import wilcoxon

    j = methods.index(against)
    raw: dict[str, float] = {}
    for i, m in enumerate(methods):
        if i == j:
            continue
        diff = values[:, i] - values[:, j]
        raw[m] = 1.0 if not diff.any() else float(wilcoxon(values[:, i], values[:, j]).pvalue)
    ordered = sorted(raw, key=raw.get)
    out, running = {}, 0.0
    for rank, m in enumerate(ordered):
        running = max(running, min(1.0, raw[m] * (len(ordered) - rank)))
        out[m] = running
    return out


def share_to_reach(regret_runs: list[dict], mine: str, theirs: str, form: str) -> float | None:
    """The share of its own epochs ``mine`` needs to reach the regret ``theirs`` ended with (per task and seed,
    a seed that never reached it counting as twice the budget; median over seeds, then over tasks)."""
    import numpy as np

    limits = bounds(regret_runs, form)
    by = {(r["method"], r["task"], r["seed"]): r for r in regret_runs}
    shares: dict[str, list[float]] = {}
    for (method, task, seed), run in by.items():
        if method != theirs or (mine, task, seed) not in by:
            continue
        target = regret_at(run, run["budget"], limits[task])
        best, worst = limits[task]
        value_needed = best - target * max(best - worst, 1e-12)
        got = next((at for at, v in by[(mine, task, seed)]["best_so_far"] if v >= value_needed - 1e-12), None)
        budget = run["budget"]
        shares.setdefault(task, []).append((got if got is not None else 2 * budget) / budget)
    if not shares:
        return None
    return float(np.median([np.median(v) for v in shares.values()]))


def report(runs: list[dict], label: str, against: str | None = None) -> str:
    """The tables of one protocol cell (a form, a concurrency, a task and seed set) as markdown."""
    import numpy as np

    form = runs[0]["form"]
    regret, methods = table_of(runs, form)
    pairs = complete(regret, methods)
    if not pairs:
        return f"{label}: no task and seed that every method ran\n"
    tasks = sorted({t for t, _ in pairs}, key=int)
    seeds = sorted({s for _, s in pairs})
    ranks = mean_ranks(regret, methods, pairs)
    finals = per_task_regret(regret, methods, pairs, len(FRACTIONS) - 1)
    halves = per_task_regret(regret, methods, pairs, FRACTIONS.index(0.5))
    order = sorted(range(len(methods)), key=lambda i: (ranks[-1][i], ranks[1][i]))
    leader = methods[order[0]]
    versus = against if against in methods else leader
    p_final = wilcoxon_holm(finals, methods, versus)
    p_half = wilcoxon_holm(halves, methods, versus)
    lines = [f"{label}: {len(tasks)} tasks x {len(seeds)} seeds ({seeds[0]}-{seeds[-1]}), {len(methods)} methods; "
             f"Friedman p = {friedman(finals):.2g} at the end, {friedman(halves):.2g} at half the budget", "",
             "| method | mean rank 25% | 50% | 100% | median regret at the end (tasks' mean over seeds) | "
             f"Wilcoxon-Holm p against {versus}, 50% / 100% | share of epochs to reach {versus}'s final regret |",
             "|---|---:|---:|---:|---:|---:|---:|"]  # fmt: skip
    for i in order:
        m = methods[i]
        share = share_to_reach(runs, m, versus, form) if m != versus else 1.0
        p = "–" if m == versus else f"{p_half[m]:.2g} / {p_final[m]:.2g}"
        lines.append(f"| {m} | {ranks[0][i]:.2f} | {ranks[1][i]:.2f} | {ranks[2][i]:.2f} | "
                     f"{np.median(finals[:, i]):.4f} | {p} | {'–' if share is None else f'{share:.2f}'} |")  # fmt: skip
    rival = next((methods[i] for i in order if methods[i] != versus), None)
    if rival:
        share = share_to_reach(runs, versus, rival, form)
        lines.append(f"\n{versus} reaches the final regret of {rival} (the best other method at the end) with "
                     f"{'–' if share is None else f'{share:.2f}'} of the budget (median over seeds, then tasks; "
                     "2.00: not within the budget)")  # fmt: skip
    return "\n".join(lines) + "\n"
