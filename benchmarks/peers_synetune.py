"""Syne Tune's multi-fidelity methods under the frozen protocol (benchmarks/protocol.py), each with its published
defaults, through Syne Tune's own simulator backend with LCBench's surrogate as a user's blackbox.

Runs in .venv-peers (``make bench-peers``: Syne Tune 0.13.0 pins numpy < 1.27); benchmarks/bench_protocol.py
calls it with a job as JSON and reads one JSON line back. Alone:

    .venv-peers/bin/python benchmarks/peers_synetune.py '{"method": "st-asha-promotion", "task": "3945", "seed": 0,
        "workers": 2, "form": "surrogate"}'
"""

from __future__ import annotations

import json
import logging
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from protocol import BOX, BUDGET, EPOCHS, METRIC, TaskCurves  # noqa: E402


def config_space() -> dict:
    from syne_tune.config_space import lograndint, loguniform, randint, uniform

    space = {}
    for name, (lo, hi, log, integer) in BOX.items():
        if integer:
            space[name] = (lograndint if log else randint)(int(lo), int(hi))
        else:
            space[name] = (loguniform if log else uniform)(lo, hi)
    return {**space, "epochs": EPOCHS}


def blackbox(task: str, form: str):
    import numpy as np
    from syne_tune.blackbox_repository.blackbox import Blackbox
    from syne_tune.config_space import randint

    class LCBench(Blackbox):
        """One task's curves: every epoch's balanced accuracy and the cumulative seconds of training."""

        def __init__(self) -> None:
            space = {k: v for k, v in config_space().items() if k != "epochs"}
            super().__init__(space, fidelity_space={"epoch": randint(1, EPOCHS)}, objectives_names=[METRIC, "time"])
            self.curves = TaskCurves(task, form)

        def _objective_function(self, configuration, fidelity=None, seed=None):
            rows, seconds = self.curves.rows_and_seconds(configuration)
            table = np.array([[r[METRIC], t] for r, t in zip(rows, np.cumsum(seconds), strict=True)])
            if fidelity is None:
                return table
            return dict(zip(self.objectives_names, table[int(fidelity["epoch"]) - 1], strict=True))

        @property
        def fidelity_values(self):
            return np.arange(1, EPOCHS + 1)

    return LCBench()


def scheduler(method: str, seed: int, task: str = "", form: str = "surrogate"):
    """The method with Syne Tune's defaults; only what it must be told is set (the metric, its direction, the
    epoch attribute, the most epochs, the seed). ``/p0`` after a name: a trainable that keeps no checkpoints, so
    a paused trial that continues trains again from its first epoch (and pays for it)."""
    from syne_tune.optimizer import baselines

    common = {"metric": METRIC, "mode": "max", "resource_attr": "epoch", "max_resource_attr": "epochs",
              "random_seed": seed}  # fmt: skip
    space = config_space()
    made = {
        "st-asha-promotion": lambda: baselines.ASHA(space, type="promotion", **common),
        "st-asha-stopping": lambda: baselines.ASHA(space, type="stopping", **common),
        "st-mobster": lambda: baselines.MOBSTER(space, **common),
        "st-hypertune": lambda: baselines.HyperTune(space, **common),
        "st-dyhpo": lambda: baselines.DyHPO(space, **common),
        "st-syncbohb": lambda: baselines.SyncBOHB(space, **common),
    }
    name = method.removesuffix("/p0")
    if name not in made:
        raise SystemExit(f"peers: error: unknown method {method!r}; known: {', '.join(made)} (each also with /p0)")
    made_one = made[name]()
    if form == "table-told":
        tell_the_table(made_one.searcher, TaskCurves(task, form))
    return made_one


def tell_the_table(searcher, curves: TaskCurves) -> None:
    """The table-told form, as tuner's and Optuna's methods get it: each config the searcher proposes becomes the
    nearest table config not yet tried before its trial starts; the scheduler starts that one and hands it back
    with every result, so the searcher learns from the config that trained."""
    proposes, tried = searcher.get_config, set()

    def get_config(**kwargs):
        config = proposes(**kwargs)
        return config if config is None else {**config, **curves.nearest_untried(config, tried)}

    searcher.get_config = get_config


def run(job: dict) -> dict:
    from syne_tune import Tuner
    from syne_tune.backend.simulator_backend.simulator_callback import SimulatorCallback
    from syne_tune.blackbox_repository.simulated_tabular_backend import UserBlackboxBackend
    from syne_tune.tuner_callback import TunerCallback

    class Record(TunerCallback):
        """Every result in the simulator's time order: the epochs spent and the best value seen so far. It
        also ends the run: Syne Tune's own count of evaluations is not the epochs trained."""

        def __init__(self) -> None:
            self.spent, self.best, self.best_so_far, self.trials = 0, None, [], set()

        def on_trial_result(self, trial, status, result, decision):
            self.spent += 1
            self.trials.add(trial.trial_id)
            value = float(result[METRIC])
            if self.spent <= BUDGET and (self.best is None or value > self.best):
                self.best = value
                self.best_so_far.append((self.spent, value))

    started = time.perf_counter()
    record = Record()
    backend = UserBlackboxBackend(blackbox=blackbox(job["task"], job["form"]), elapsed_time_attr="time",
                                 max_resource_attr="epochs",  # a paused trial runs up to the epochs it was granted
                                 support_checkpointing=not job["method"].endswith("/p0"))
    tuner = Tuner(trial_backend=backend, scheduler=scheduler(job["method"], job["seed"], job["task"], job["form"]),
                  stop_criterion=lambda status: record.spent >= BUDGET, n_workers=job["workers"],
                  sleep_time=0, callbacks=[SimulatorCallback(), record], results_update_interval=1e9,
                  print_update_interval=1e9, save_tuner=False, tuner_name=f"peer-{os.getpid()}",
                  suffix_tuner_name=True)  # fmt: skip
    tuner.run()
    return {**job, "budget": BUDGET, "best_so_far": record.best_so_far, "trials": len(record.trials),
            "epochs": min(record.spent, BUDGET), "seconds": round(time.perf_counter() - started, 2)}  # fmt: skip


def main() -> None:
    logging.disable(logging.WARNING)
    os.environ.setdefault("SYNETUNE_FOLDER", tempfile.mkdtemp(prefix="synetune-"))
    for text in sys.argv[1:]:
        print(json.dumps(run(json.loads(text))), flush=True)


if __name__ == "__main__":
    main()
