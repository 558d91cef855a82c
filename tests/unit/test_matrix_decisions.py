"""Every scheduler x searcher case of the matrix (tests/matrix_cases.py), decided on the simulated clock.

The replay engine drives the very scheduler and searcher objects a sweep builds (tuner/replay/setup.py) through
Tune's loop as the schedulers see it, in a fraction of a second per case: every trial is created, every trial
ends, no bracket waits for ever on a trial the searcher will not make. On a real Ray,
tests/integration/test_matrix.py runs each algorithm once and every case of the schedulers that pause trials. PBT is left out: it changes a trial's config while it trains, which recorded
curves cannot stand for (replay refuses it), so it runs on a real Ray in the fast tier.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from ray import tune

from tests.matrix_cases import CASES
from tuner.objectives import LOSS
from tuner.replay.engine import Curve, replay
from tuner.replay.setup import build

PARAMS = {
    "width": tune.sample_from(lambda _: 2 ** np.random.randint(2, 6)),
    "lr": tune.loguniform(1e-4, 1e-1),
    "batch": tune.choice([8, 16, 32]),
}
MAX_EPOCHS = 4


class InstantCurves:
    """The instant trainable's curve (tests/instant.py) for any config: a loss falling towards a floor set by
    the config, an epoch lasting longer for wider configs (so results arrive out of order)."""

    def curve(self, config: dict) -> Curve:
        floor = abs(math.log10(config["lr"]) + 2.5) + 16 / config["width"] + config["batch"] / 64
        rows = [{"loss": floor + 2.0 / epoch} for epoch in range(1, MAX_EPOCHS + 1)]
        return Curve(dict(config), rows, [0.5 + config["width"] / 32] * MAX_EPOCHS)


@pytest.mark.parametrize("scheduler, searcher, num_samples", [c for c in CASES if c[0] != "pbt"])
def test_every_case_creates_and_ends_every_trial(scheduler, searcher, num_samples):
    algorithms = build(
        PARAMS,
        scheduler,
        searcher,
        objectives=LOSS,
        max_epochs=MAX_EPOCHS,
        num_samples=num_samples,
        seed=0,
        workers=2,
    )
    outcome = replay(
        InstantCurves(),
        algorithms,
        workers=2,
        metric="loss",
        mode="min",
        num_samples=num_samples,
        max_epochs=MAX_EPOCHS,
    )
    assert not outcome.stalled
    assert len(outcome.trials) == num_samples
    assert all(t.ended is not None and 1 <= t.epochs <= MAX_EPOCHS for t in outcome.trials)
    assert outcome.best_trial() is not None


@pytest.mark.parametrize("scheduler", ["freeze-thaw", "asha"])
def test_the_model_that_takes_earlier_trials_is_found_behind_any_wrapper(scheduler):
    """--warm-start hands earlier trials to the plan's searcher, wherever the pair put it (behind freeze-thaw's
    gate on new trials, or bare)."""
    from tuner import algorithms, searchers
    from tuner.searchers.planned import PlannedSearcher
    from tuner.searchers.wrapping import wrapped

    ctx = algorithms.scheduler_context(params=PARAMS, objectives=LOSS, max_epochs=MAX_EPOCHS,
                                       num_samples=4, seed=0, grace_period=1, reduction_factor=2)  # fmt: skip
    _, search = algorithms.build_pair(
        ctx, scheduler, searchers.plan_search(PARAMS, "optuna", 0), planned_trials=4, max_concurrent=None
    )
    assert isinstance(wrapped(search, PlannedSearcher), PlannedSearcher)
