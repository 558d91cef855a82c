"""With one objective, tuner's ASHA, median rule and HyperBand decide as Ray's own schedulers do.

Each rule is one implementation for any number of objectives (tuner/schedulers/comparing.py). Here the same
learning curves (random, ties and nan included) are played through Ray's ``ASHAScheduler``,
``MedianStoppingRule`` and ``HyperBandScheduler`` and through tuner's rule on the replay engine's simulated
Tune loop, and every decision must agree: each result's CONTINUE, PAUSE or STOP, and the epochs each trial
trained.
"""

from __future__ import annotations

import math
import random

import pytest
from packaging.version import Version
from ray import __version__ as ray_version
from ray.tune.schedulers import ASHAScheduler, HyperBandScheduler, MedianStoppingRule

from tuner.objectives import Objective
from tuner.replay.engine import Controller, Curve, FixedOrder
from tuner.schedulers.asha import rungs
from tuner.schedulers.asha_rule import AshaRule
from tuner.schedulers.comparing import Comparison
from tuner.schedulers.hyperband_rule import HyperBandRule
from tuner.schedulers.median_rule import MedianRule

MAX_EPOCHS = 8
pytestmark = pytest.mark.filterwarnings("ignore:All-NaN slice")  # Ray's ASHA at a rung of nan values only


class RandomCurves:
    """Curves drawn once per config: a falling loss with noise, a few ties and an occasional nan."""

    def __init__(self, seed: int, trials: int, nan: bool = True) -> None:
        rng = random.Random(seed)
        self.curves: dict[int, Curve] = {}
        for i in range(trials):
            start, rate = rng.uniform(0.5, 3.0), rng.uniform(0.0, 0.4)
            rows, seconds = [], []
            for epoch in range(1, MAX_EPOCHS + 1):
                loss = round(start * math.exp(-rate * epoch) + rng.gauss(0, 0.05), 1)  # rounding makes ties
                if rng.random() < 0.02 and nan:
                    loss = math.nan
                rows.append({"loss": loss})
                seconds.append(rng.uniform(0.5, 2.0))
            self.curves[i] = Curve({"i": i}, rows, seconds)

    def curve(self, config: dict) -> Curve:
        return self.curves[config["i"]]


def decisions(scheduler, seed: int, trials: int = 24, workers: int = 3, mode: str = "min", nan: bool = True) -> dict:
    source = RandomCurves(seed, trials, nan)
    controller = Controller(
        source,
        scheduler,
        FixedOrder({"i": i} for i in range(trials)),
        workers=workers,
        metric="loss",
        mode=mode,
        num_samples=trials,
        max_epochs=MAX_EPOCHS,
    )
    outcome = controller.run()
    return {t.config["i"]: (t.decisions, t.epochs) for t in outcome.trials}


def one(mode: str = "min") -> Comparison:
    return Comparison.of((Objective("loss", mode),))


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("eta", [2, 3])
@pytest.mark.parametrize("mode", ["min", "max"])
def test_asha_stops_at_the_cutoff_rays_asha_draws(seed, eta, mode):
    ray = ASHAScheduler(
        time_attr="training_iteration", max_t=MAX_EPOCHS, grace_period=1, reduction_factor=eta
    )
    ray.set_search_properties("loss", mode)
    ours = AshaRule(MAX_EPOCHS, rungs(MAX_EPOCHS, 1, eta), eta, one(mode))
    expected = decisions(ray, seed, mode=mode)
    assert decisions(ours, seed, mode=mode) == expected
    assert any(d == "STOP" and epoch < MAX_EPOCHS for ds, _ in expected.values() for epoch, d in ds)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("mode", ["min", "max"])
def test_the_median_rule_stops_where_rays_does(seed, mode):
    ray = MedianStoppingRule(time_attr="training_iteration", grace_period=1, min_samples_required=3)
    ray.set_search_properties("loss", mode)
    ray._on_insufficient_samples = lambda *_: "CONTINUE"  # as tuner's rule: never pause for want of others
    ours = MedianRule(1, 3, one(mode))
    # Ray before 2.60 counted a trial whose running mean is nan and took the median of nan with the rest,
    # which then stopped every trial compared: tuner's rule is 2.60's on every Ray (nan kept out)
    nan = Version(ray_version) >= Version("2.60")
    expected = decisions(ray, seed, mode=mode, nan=nan)
    assert decisions(ours, seed, mode=mode, nan=nan) == expected
    assert any(d == "STOP" for ds, _ in expected.values() for _, d in ds)


@pytest.mark.parametrize("seed", range(6))
@pytest.mark.parametrize("workers", [1, 3, 8])
def test_hyperband_keeps_the_trials_rays_hyperband_keeps(seed, workers):
    """Max epochs a power of the reduction factor, where Ray's rounds are tuner's (tuner/schedulers/brackets.py)."""
    ray = HyperBandScheduler(time_attr="training_iteration", max_t=MAX_EPOCHS, reduction_factor=2)
    ray.set_search_properties("loss", "min")
    ours = HyperBandRule(MAX_EPOCHS, 2, one())
    expected = decisions(ray, seed, trials=20, workers=workers)
    assert decisions(ours, seed, trials=20, workers=workers) == expected
    assert any(d == "PAUSE" for ds, _ in expected.values() for _, d in ds)


def test_a_hyperband_bracket_finished_by_a_trial_that_ended_itself_stops_the_one_paused_there():
    """A trial paused at the last round, whose bracket-mate then returned by itself, must not wait for ever
    (Ray's bracket is decided once on a removal, and it had been)."""
    from types import SimpleNamespace

    from ray.tune.experiment import Trial

    stopped: list[str] = []
    controller = SimpleNamespace(stop_trial=lambda t: stopped.append(t.trial_id), get_trials=lambda: [])
    scheduler = HyperBandRule(2, 2, one())
    first, second = (Trial("t", config={}, trial_id=name, stub=True) for name in ("first", "second"))
    for trial in (first, second):
        scheduler.on_trial_add(controller, trial)
        trial.set_status(Trial.RUNNING)
    bracket = scheduler.of[first]
    assert scheduler.of[second] is bracket and bracket.rounds == [2]  # one round: the end
    assert scheduler.on_trial_result(controller, first, {"training_iteration": 2, "loss": 1.0}) == "PAUSE"
    first.set_status(Trial.PAUSED)
    # the live status line counts them in the review's words, not Tune's PAUSED and RUNNING
    assert scheduler.debug_string().splitlines()[0].startswith(
        "bracket 1: 2 trial(s) (1 paused until the others reach epoch 2, 1 running)"
    ), scheduler.debug_string()
    bracket.update(second, {"training_iteration": 2, "loss": 2.0})
    scheduler.on_trial_complete(controller, second, {"training_iteration": 2, "loss": 2.0})
    assert stopped == ["first"]


def test_a_trial_that_ends_before_its_bracket_fills_leaves_its_place_empty():
    """Quick trials (a Trainable class's instant steps) end before the sweep makes the next ones: a bracket
    whose only round is the last epoch must not give their places to later trials, or it runs every trial of
    the sweep to the end and the plan's other brackets never start."""
    from ray.tune.experiment import Trial

    scheduler = HyperBandRule(4, 2, one())  # brackets of 3 (epoch 4), 3 (epochs 2, 4) and 4 (1, 2, 4)
    trials = [Trial("t", config={}, trial_id=f"t{n}", stub=True) for n in range(1, 8)]
    for trial in trials[:3]:
        scheduler.on_trial_add(None, trial)
    scheduler.on_trial_complete(None, trials[0], {"training_iteration": 4, "loss": 1.0})
    for trial in trials[3:]:
        scheduler.on_trial_add(None, trial)
    assert [len(b.trials) for b in scheduler.bands[0]] == [3, 3, 1]


def test_the_plan_fills_brackets_in_the_order_each_rule_does():
    from tuner.schedulers import REGISTRY
    from tuner.schedulers.hyperband_rule import BohbRule

    assert REGISTRY["hyperband"].largest_first is HyperBandRule.largest_first is False
    assert REGISTRY["bohb"].largest_first is BohbRule.largest_first is True
