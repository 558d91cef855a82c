"""LCBench: real learning curves of funnel-shaped MLPs on 34 OpenML tasks, through YAHPO Gym's surrogate.

The surrogate (benchmarks/surrogates/lcbench/, see its README) gives any config of LCBench's 7-parameter box a
whole 52-epoch curve in about a millisecond: validation accuracy, cross-entropy and balanced accuracy, and the
cumulative seconds of training. A replay hands the epochs out one at a time, each taking the seconds the
surrogate says it took, so a trial paused and continued costs what it would have cost in one go.

Regret is normalised per task against a committed reference (``--reference``): the best and worst anytime
validation accuracy of a large random sample of the box. 0 is that sample's best, 1 its worst; a search that
beats the sample's best goes below 0.

    python benchmarks/lcbench.py --check              # every task: what random configs reach, the evaluation's cost
    python benchmarks/lcbench.py --reference 20000    # write the per-task reference (a few minutes)
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

FILES = HERE / "surrogates" / "lcbench"
REFERENCE = HERE / "baselines" / "lcbench_reference.json"
EPOCHS = 52
METRIC = "val_accuracy"  # 0-100, to maximise; the best seen at any epoch counts (some curves overfit)
# The surrogate's inputs after the epoch, in its order, with the box config_space.json gives them.
INPUTS = ("batch_size", "learning_rate", "momentum", "weight_decay", "num_layers", "max_units", "max_dropout")
OUTPUTS = ("time", "val_accuracy", "val_cross_entropy", "val_balanced_accuracy", "test_cross_entropy",
           "test_balanced_accuracy")  # fmt: skip


def tasks() -> list[str]:
    """The 34 OpenML task ids of config_space.json, in its order."""
    space = json.loads((FILES / "config_space.json").read_text())
    return list(next(h for h in space["hyperparameters"] if h["name"] == "OpenML_task_id")["choices"])


def space() -> dict[str, Any]:
    """LCBench's box as Ray's docs write spaces: log scales where config_space.json says so, integers as
    integers (``randint``'s upper bound is exclusive)."""
    from ray import tune

    return {
        "batch_size": tune.lograndint(16, 513),
        "learning_rate": tune.loguniform(1e-4, 1e-1),
        "momentum": tune.uniform(0.1, 0.99),
        "weight_decay": tune.uniform(1e-5, 0.1),
        "num_layers": tune.randint(1, 6),
        "max_units": tune.lograndint(64, 1025),
        "max_dropout": tune.uniform(0.0, 1.0),
    }


@functools.cache
def _session():
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = 1  # benchmarks run one replay per core
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    return ort.InferenceSession(str(FILES / "model.onnx"), options, providers=["CPUExecutionProvider"])


@functools.cache
def _codes() -> dict[str, int]:
    return json.loads((FILES / "encoding.json").read_text())["OpenML_task_id"]


def evaluate(task: str, configs: list[dict[str, Any]]):
    """Every epoch of every config: an array (configs, 52 epochs, outputs) in ``OUTPUTS``' order."""
    import numpy as np

    n = len(configs)
    x = np.zeros((n * EPOCHS, 1 + len(INPUTS)), np.float32)
    x[:, 0] = np.tile(np.arange(1, EPOCHS + 1), n)
    x[:, 1:] = np.repeat(np.array([[float(c[k]) for k in INPUTS] for c in configs], np.float32), EPOCHS, 0)
    code = np.full((n * EPOCHS, 1), _codes()[task], np.int32)
    out = _session().run(None, {"x_cat": code, "x_cont": x})[0]
    return out.reshape(n, EPOCHS, len(OUTPUTS)).astype(float)


def rows_and_seconds(curve) -> tuple[list[dict[str, float]], list[float]]:
    """One config's epochs as a trainable reports them, and the seconds each took. The surrogate's time is
    cumulative and dips now and then (a model, not a clock): an epoch takes what the running maximum grew."""
    import numpy as np

    rows = [{name: float(curve[e, k]) for k, name in enumerate(OUTPUTS) if name != "time"} for e in range(EPOCHS)]
    elapsed = np.maximum.accumulate(np.maximum(curve[:, 0], 0.0))
    seconds = np.diff(np.concatenate([[0.0], elapsed]))
    return rows, [max(float(s), 1e-3) for s in seconds]


class LCBenchCurves:
    """The curve source of one task: a config's whole curve from the surrogate, once per config."""

    def __init__(self, task: str) -> None:
        self.task = task
        self._cache: dict[str, Any] = {}

    def curve(self, config: dict[str, Any]):
        from tuner.replay.engine import Curve

        key = json.dumps([float(config[k]) for k in INPUTS])
        if key not in self._cache:
            rows, seconds = rows_and_seconds(evaluate(self.task, [config])[0])
            self._cache[key] = Curve(dict(config), rows, seconds)
        return self._cache[key]


@functools.cache
def reference() -> dict[str, dict[str, float]]:
    """Per task: the best and worst anytime validation accuracy of the committed random sample."""
    return json.loads(REFERENCE.read_text())["tasks"]


def regret(task: str, accuracy: float) -> float:
    """Normalised regret of a best-seen accuracy: 0 at the reference sample's best, 1 at its worst."""
    ref = reference()[task]
    return (ref["best"] - accuracy) / (ref["best"] - ref["worst"])


def random_configs(count: int, seed: int) -> list[dict[str, Any]]:
    import numpy as np

    rng = np.random.RandomState(seed)
    box = space()
    return [{k: d.sample(random_state=rng) for k, d in box.items()} for _ in range(count)]


def write_reference(count: int) -> None:
    """The best and worst anytime accuracy of ``count`` random configs per task (seeded: the same each time)."""
    import numpy as np

    configs = random_configs(count, seed=12345)
    out: dict[str, dict[str, float]] = {}
    started = time.perf_counter()
    for task in tasks():
        best = np.concatenate([evaluate(task, configs[i:i + 2000])[:, :, 1].max(1) for i in range(0, count, 2000)])
        out[task] = {"best": round(float(best.max()), 4), "worst": round(float(best.min()), 4),
                     "median": round(float(np.median(best)), 4)}  # fmt: skip
        print(f"  {task:>7}: best {best.max():6.2f}  median {np.median(best):6.2f}  worst {best.min():6.2f}",
              file=sys.stderr, flush=True)  # fmt: skip
    REFERENCE.parent.mkdir(parents=True, exist_ok=True)
    REFERENCE.write_text(json.dumps({"sample": count, "seed": 12345, "metric": f"anytime {METRIC}", "tasks": out},
                                    indent=1) + "\n")  # fmt: skip
    print(f"# {REFERENCE.relative_to(HERE.parent)}: {count} random configs x {len(out)} tasks in "
          f"{time.perf_counter() - started:.0f} s", file=sys.stderr)  # fmt: skip


# --- the figures of a bench_search run on LCBench ------------------------------------------------------------


def summary(results: dict, counted: str = "epochs", versus: str = "asha+random") -> None:
    """Per task, each pair's normalised regret at the budget's end; then each pair against ``versus``: on how
    many tasks its median regret is lower, and the share of ``versus``'s spend it needed to reach the regret
    ``versus`` ended with (per seed, the same seed's; median over seeds, then over tasks)."""
    import numpy as np

    tasks_seen = [name for name in results if name.startswith("lcbench-")]
    if not tasks_seen:
        return
    unit = "epochs" if counted == "epochs" else "s of training"
    pairs = [p for p in next(iter(results[n] for n in tasks_seen)) if p != "fifo+random"]
    finals: dict = {}  # (task, pair) -> {seed: regret at the end}
    curves: dict = {}  # (task, pair) -> {seed: [(spent, regret)]}
    for name in tasks_seen:
        task = name.removeprefix("lcbench-")
        for pair, runs in results[name].items():
            for run in runs:
                steps = [(spent, regret(task, -value)) for spent, value in run["best_so_far"]]
                curves.setdefault((task, pair), {})[run["seed"]] = steps
                finals.setdefault((task, pair), {})[run["seed"]] = steps[-1][1] if steps else 1.0
    print(f"\nLCBench: normalised regret at the budget's end (0: the best of {_sample()} random configs, 1: the "
          f"worst; median over seeds [90% bootstrap interval]); budget in {unit}")  # fmt: skip
    print(f"  {'task':>7}  " + "  ".join(f"{p:>24}" for p in pairs))
    for name in tasks_seen:
        task = name.removeprefix("lcbench-")
        cells = []
        for pair in pairs:
            values = list(finals.get((task, pair), {}).values())
            lo, hi = _interval(values)
            cells.append(f"{np.median(values):7.4f} [{lo:.3f}, {hi:.3f}]" if values else "-")
        print(f"  {task:>7}  " + "  ".join(f"{c:>24}" for c in cells))
    if versus not in pairs:
        return
    print(f"\nAgainst {versus} ({len(tasks_seen)} tasks): tasks where the median regret at the end is lower (and "
          f"where the paired 90% interval of the difference lies wholly below 0); the share of {versus}'s {unit} "
          f"needed to reach the regret {versus} ended with (per seed; median over seeds, then over tasks; a seed "
          f"that never reached it counts as twice the budget)")  # fmt: skip
    for pair in pairs:
        if pair == versus:
            continue
        ahead = surely = 0
        shares = []
        for name in tasks_seen:
            task = name.removeprefix("lcbench-")
            mine, theirs = finals.get((task, pair), {}), finals.get((task, versus), {})
            seeds = sorted(set(mine) & set(theirs))
            if not seeds:
                continue
            diff = [mine[s] - theirs[s] for s in seeds]
            ahead += np.median([mine[s] for s in seeds]) < np.median([theirs[s] for s in seeds])
            surely += _interval(diff)[1] < 0
            per_seed = []
            for seed in seeds:
                target = theirs[seed]
                took = next((spent for spent, r in curves[(task, versus)][seed] if r <= target + 1e-12), None)
                got = next((spent for spent, r in curves[(task, pair)][seed] if r <= target + 1e-12), None)
                budget = max(curves[(task, versus)][seed][-1][0], 1)
                per_seed.append((got if got is not None else 2 * budget) / max(took or budget, 1))
            shares.append(float(np.median(per_seed)))
        print(f"  {pair:<24} ahead on {ahead}/{len(tasks_seen)} ({surely} beyond the interval); reached {versus}'s "
              f"final regret with {np.median(shares):.2f} of its {unit} (median over tasks; quartiles "
              f"{np.percentile(shares, 25):.2f}-{np.percentile(shares, 75):.2f})")  # fmt: skip


def _interval(values: list[float], level: float = 0.9, resamples: int = 2000) -> tuple[float, float]:
    import numpy as np

    if not values:
        return float("nan"), float("nan")
    rng = np.random.default_rng(0)
    sample = np.asarray(values, float)
    medians = np.median(rng.choice(sample, (resamples, len(sample))), axis=1)
    lo, hi = np.percentile(medians, [(1 - level) / 2 * 100, (1 + level) / 2 * 100])
    return float(lo), float(hi)


def _sample() -> int:
    return json.loads(REFERENCE.read_text())["sample"]


def check() -> None:
    """What random configs reach on each task, how well early epochs rank them, and what a curve costs."""
    import numpy as np
    from scipy.stats import spearmanr

    configs = random_configs(500, seed=1)
    started = time.perf_counter()
    LCBenchCurves(tasks()[0]).curve(configs[0])
    print(f"one curve: {(time.perf_counter() - started) * 1000:.1f} ms (first call, the session included)")
    print(f"{'task':>7} {'best':>6} {'median':>6}  rank correlation with the final best at epoch 1 / 4 / 8   "
          f"share peaking before epoch 40   seconds of 52 epochs (median)")  # fmt: skip
    for task in tasks():
        out = evaluate(task, configs)
        best = np.maximum.accumulate(out[:, :, 1], axis=1)
        rho = [spearmanr(best[:, e - 1], best[:, -1])[0] for e in (1, 4, 8)]
        print(f"{task:>7} {best[:, -1].max():6.2f} {np.median(best[:, -1]):6.2f}  "
              f"{rho[0]:+.2f} / {rho[1]:+.2f} / {rho[2]:+.2f}                              "
              f"{(out[:, :, 1].argmax(1) < 39).mean():4.0%}                          {np.median(out[:, -1, 0]):7.0f}")  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="per task: random configs' accuracy, early ranking, cost")
    parser.add_argument("--reference", type=int, metavar="CONFIGS", help="write the per-task reference from this "
                        "many random configs")  # fmt: skip
    args = parser.parse_args()
    if args.reference:
        write_reference(args.reference)
    if args.check:
        check()
    if not (args.check or args.reference):
        parser.print_help()


if __name__ == "__main__":
    main()
