"""``auto``: the searcher chosen for the space, the budget and the scheduler, with the reason in the plan.

The rules follow what was measured on replay (BENCHMARKS.md: "Search that beats Optuna", "TPE under early
stopping", "Early stopping on continuous spaces"): tuner's Gaussian process (``gp``: results power-transformed,
no config twice) places few trials that run all their epochs best; under a scheduler that stops trials early
the models that learn from the stopped trials do better than a GP that leaves them out, and on spaces with a
continuous parameter quantile regression (``cqr``) reached good configs sooner than TPE under ASHA and the
median rule. So:
``cqr`` under ASHA or the median rule for a space with a continuous parameter (one objective, no conditional
parameters); ``gp`` for at most ``GP_MAX_PARAMS`` parameters (numbers, or choices with or without an order: on NAS-Bench-201's
choices of operations too it reached better configs than TPE at 1, 2 and 8 trials at once), ``GP_MIN_TRIALS``
to ``GP_MAX_TRIALS`` trials and trials that run all their epochs; ``optuna`` otherwise (more parameters, larger
budgets, other early stopping, conditional spaces; several objectives: tuner/algorithms.py).
A space with nothing to model gets ``random``; a scheduler that brings its own searcher keeps it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.value_types import Space

if TYPE_CHECKING:
    from tuner.searchers.plan import ParamPlan

GP_MAX_PARAMS = 10  # measured up to HPOLib's 9
# fewer, and the GP has too few results past its random start to beat TPE (Hartmann, 16 trials)
GP_MIN_TRIALS = 20
GP_MAX_TRIALS = 100
STOPS_EARLY = ("asha", "hyperband", "median", "freeze-thaw")  # freeze-thaw's own model aside (--warm-start)
QUANTILES_UNDER = ("asha", "median")  # where cqr was measured ahead of TPE on continuous spaces


def choose(
    params: Space,
    scheduler: str,
    planned_trials: int,
    budgeted: bool = False,
    warm_start: bool = False,
) -> tuple[str, str]:
    """The searcher ``auto`` stands for here on one objective, and why (the plan prints it); with
    ``warm_start``, one that takes earlier sweeps' trials (the model of the learning curves does not).
    tuner/algorithms.py's ``for_objectives`` turns it into one that decides by fronts for several."""
    from tuner import schedulers

    entry = schedulers.REGISTRY[scheduler]
    if entry.takes_no_searcher:
        return "random", f"{scheduler} explores by perturbing trials, over random draws"
    if entry.requires_searcher:
        return entry.requires_searcher, f"--scheduler {scheduler} brings its own"
    if entry.gates_new_trials:
        if not warm_start:
            return "curves", f"{scheduler}'s model of the learning curves also proposes every other config"
        name, why = _for_the_space(params, scheduler, planned_trials, budgeted)
        return name, f"--warm-start, which {scheduler}'s model of the learning curves does not take; {why}"
    return _for_the_space(params, scheduler, planned_trials, budgeted)


def _for_the_space(params: Space, scheduler: str, planned_trials: int, budgeted: bool) -> tuple[str, str]:
    """The searcher for the space's parameters, the scheduler's early stopping and the sweep's size."""
    from tuner import searchers
    from tuner.errors import UsageError
    from tuner.searchers.plan import SEARCHED, is_grid

    grids = [name for name, value in params.items() if is_grid(value)]
    if grids:
        return "random", (
            f"{', '.join(grids)} {'is a grid' if len(grids) == 1 else 'are grids'}: every value is "
            "crossed with random draws of the others, which only random search does"
        )
    try:
        plan = searchers.plan_search(params, "optuna")
    except UsageError:
        return "random", "nothing in the space for a model to search"
    searched = [p for p in plan.params if p.treatment in SEARCHED]
    if plan.conditionals:
        names = ", ".join(p.name for p in plan.conditionals)
        return "optuna", f"{names} depends on another parameter, which TPE models as the space is drawn"
    continuous = [p.name for p in searched if _continuous(p)]
    if scheduler in QUANTILES_UNDER and continuous:
        return "cqr", (
            f"{scheduler} stops trials early and {', '.join(continuous)} "
            f"{'is' if len(continuous) == 1 else 'are'} continuous: conformalised quantile regression learns from "
            "every trial at the epoch it reached"
        )
    if scheduler in STOPS_EARLY:
        return "optuna", f"{scheduler} stops trials early and TPE ranks them where they stopped"
    if budgeted and planned_trials > GP_MAX_TRIALS:
        return "optuna", "a budget without a trial cap may run many trials, where TPE scales"
    if len(searched) <= GP_MAX_PARAMS and GP_MIN_TRIALS <= planned_trials <= GP_MAX_TRIALS:
        return "gp", (
            f"{len(searched)} parameter(s) and {planned_trials} trials that run all their epochs: "
            "a Gaussian process places few trials best"
        )
    if len(searched) > GP_MAX_PARAMS:
        why = f"{len(searched)} parameters"
    elif planned_trials < GP_MIN_TRIALS:
        why = f"only {planned_trials} trials, too few for a Gaussian process past its random start"
    else:
        why = f"{planned_trials} trials"
    return "optuna", f"{why}: multivariate TPE"


def _continuous(p: ParamPlan) -> bool:
    """A parameter searched over a range of floats (not choices, not integers)."""
    from ray.tune.search.sample import Float

    return isinstance(p.encoded, Float)
