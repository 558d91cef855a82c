"""Optuna's GPSampler through Ray's OptunaSearch: a Gaussian process with log expected improvement.

A GP models every pair of points through its kernel, so on a few numeric parameters and a small budget it
often places trials better than TPE; for trials running at once it fantasises their outcomes (a kriging
believer, batch log EI), so trials started together spread out. It takes floats, integers and choices
(ordered choices as integers); unbounded normals it cannot. Trials a scheduler stopped early are told to it
as pruned, which a GP leaves out of its model; multi-fidelity searches suit TPE better.
"""

from __future__ import annotations

from typing import Any

from tuner.searchers.optuna_tpe import OptunaTPE


class OptunaGP(OptunaTPE):
    name = "gp"
    summary = "Optuna's Gaussian process (log EI; fantasised outcomes for trials running at once)"
    model = "a Gaussian process"
    models_conditionals = False  # Optuna's GPSampler draws a parameter outside every trial's space at random

    def build_inner(self, space: Any, metric: str, mode: str, warmup: int, seed: int) -> Any:
        import warnings

        import optuna
        from ray.tune.search.optuna import OptunaSearch

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        warnings.filterwarnings("ignore", category=optuna.exceptions.ExperimentalWarning)
        sampler = optuna.samplers.GPSampler(n_startup_trials=warmup, seed=seed)
        return OptunaSearch(space=space if callable(space) else OptunaSearch.convert_search_space(space), metric=metric,
                            mode=mode, sampler=sampler)  # fmt: skip
