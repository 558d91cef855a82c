"""The Optuna samplers as tuner runs them: the hooks they override, the warp, no repeats, the counted start."""

from __future__ import annotations

import inspect
import math

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import GPSampler
from optuna.trial import TrialState

from tuner.searchers.optuna_samplers import FreshTPE, WarpedGP, power_warp

optuna.logging.set_verbosity(optuna.logging.WARNING)

CHOICES = {
    "a": CategoricalDistribution([1, 2, 4, 8]),
    "b": CategoricalDistribution([0.1, 0.2, 0.3, 0.4]),
    "c": IntDistribution(0, 3),
}  # 64 configs


def bowl(params: dict) -> float:
    return (math.log2(params["a"]) - 2) ** 2 + (params["b"] - 0.3) ** 2 * 10 + abs(params["c"] - 1)


def test_the_gp_hooks_tuner_overrides_keep_their_signatures():
    impl = inspect.signature(GPSampler._sample_relative_impl).parameters
    assert list(impl) == ["self", "study", "completed_trials", "running_trials", "search_space"]
    assert list(inspect.signature(GPSampler._optimize_acqf).parameters) == ["self", "acqf", "best_params"]


def test_power_warp_keeps_the_order_of_results_spanning_decades():
    rng = np.random.default_rng(0)
    positive = 10 ** rng.uniform(-5, -1, size=30)
    mixed = rng.normal(size=30) * 100
    for values in (positive, mixed):
        warped = power_warp(values)
        assert np.array_equal(np.argsort(warped), np.argsort(values))
        assert abs(warped.mean()) < 1e-6 and abs(warped.std() - 1) < 1e-6
    # Decades apart, the good results are told apart after the warp, not crushed beside the worst one.
    def best_five_share(v):  # how much of the whole range the five best results span
        return np.ptp(np.sort(v)[:5]) / np.ptp(v)

    assert best_five_share(power_warp(positive)) > 100 * best_five_share(positive)


def test_power_warp_leaves_too_few_or_equal_values_and_holds_infinities_at_the_worst():
    assert list(power_warp(np.array([3.0, 1.0]))) == [3.0, 1.0]
    assert list(power_warp(np.array([2.0, 2.0, 2.0]))) == [2.0, 2.0, 2.0]
    warped = power_warp(np.array([1.0, 2.0, 3.0, math.inf]))
    assert np.isfinite(warped).all() and warped[3] == warped.max() == warped[2]


@pytest.mark.parametrize("make", [lambda: WarpedGP(5, seed=0), lambda: FreshTPE(5, seed=0, group=True)])
def test_no_config_is_proposed_twice_while_untried_ones_remain(make):
    study = optuna.create_study(sampler=make())
    for _ in range(30):
        trial = study.ask(CHOICES)
        study.tell(trial, bowl(trial.params))
    configs = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(configs)) == len(configs) == 30
    assert study.best_value < sorted(bowl(t.params) for t in study.trials[:5])[0]  # the model found better


def test_running_trials_count_as_tried():
    study = optuna.create_study(sampler=WarpedGP(3, seed=1))
    for _ in range(6):
        trial = study.ask(CHOICES)
        study.tell(trial, bowl(trial.params))
    running = [study.ask(CHOICES) for _ in range(8)]  # eight at once, none told yet
    configs = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(configs)) == len(configs)
    assert len(running) == 8 and all(t.state == TrialState.RUNNING for t in study.trials[-8:])


def test_the_random_start_is_counted_in_proposals_not_results():
    sampler = FreshTPE(4, seed=0)
    study = optuna.create_study(sampler=sampler)
    first = [study.ask(CHOICES) for _ in range(4)]  # four at once: the random start is spent
    study.tell(first[0], bowl(first[0].params))
    study.ask(CHOICES)
    assert not sampler._starting(study, study.trials[-1])  # Optuna's own rule would wait for 4 results


def test_the_gp_waits_for_two_results_before_modelling():
    sampler = WarpedGP(1, seed=0)
    study = optuna.create_study(sampler=sampler)
    first = study.ask(CHOICES)
    study.tell(first, bowl(first.params))
    second = study.ask(CHOICES)
    assert sampler._starting(study, study.trials[-1])
    study.tell(second, bowl(second.params))
    study.ask(CHOICES)
    assert not sampler._starting(study, study.trials[-1])


def test_a_maximised_metric_is_warped_the_right_way_round():
    space = {"x": FloatDistribution(0, 1)}
    study = optuna.create_study(direction="maximize", sampler=WarpedGP(4, seed=0))
    for _ in range(20):
        trial = study.ask(space)
        study.tell(trial, -((trial.params["x"] - 0.7) ** 2))
    assert abs(study.best_params["x"] - 0.7) < 0.05
