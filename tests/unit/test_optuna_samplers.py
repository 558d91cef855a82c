"""The Optuna samplers as tuner runs them: the hooks they override, the warp, no repeats, the counted start."""

from __future__ import annotations

import inspect
import math
import subprocess
import sys

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution
from optuna.samplers import GPSampler, TPESampler
from optuna.trial import TrialState

from tuner.searchers.optuna_samplers import FreshTPE, at_furthest_epoch
from tuner.searchers.quantile_sampler import QuantileSampler
from tuner.searchers.warped_gp import WarpedGP, power_warp

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
    assert list(inspect.signature(TPESampler._sample).parameters) == [
        "self",
        "study",
        "trial",
        "search_space",
    ]
    assert "study._get_trials(" in inspect.getsource(TPESampler._sample)  # where the epoch view is read


def _stopped(study: optuna.Study, curve: list[float]) -> None:
    """A trial that reported ``curve`` (epochs 1, 2, ...) and was stopped there by a scheduler."""
    trial = study.ask({"x": FloatDistribution(0, 1)})
    for epoch, value in enumerate(curve, start=1):
        trial.report(value, epoch)
    study.tell(trial, state=TrialState.PRUNED)


def test_trials_are_ranked_at_the_furthest_epoch_enough_of_them_reached():
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=0))
    for i in range(30):  # stopped at epoch 1
        _stopped(study, [1.0 + i])
    for i in range(10):  # stopped at epoch 4: value 0.5 + i there
        _stopped(study, [2.0, 1.5, 1.0, 0.5 + i])
    done = study.ask({"x": FloatDistribution(0, 1)})
    for epoch in range(1, 9):  # ran all 8 epochs; its value at epoch 4 is the worst there
        done.report(20.0 - epoch, epoch)
    study.tell(done, 12.0)
    views = at_furthest_epoch(study.trials)  # 41 finished: TPE's good group is 5, and 11 reached epoch 4
    ranked = [v for v in views if v.state == TrialState.COMPLETE]
    assert len(ranked) == 11 and sorted(v.value for v in ranked)[:2] == [0.5, 1.5]
    assert [v.value for v in ranked if v.number == done.number] == [16.0]  # valued at epoch 4, not at its end
    assert all(v.state == TrialState.PRUNED for v in views[:30])
    assert (
        study.trials[-1].state == TrialState.COMPLETE and study.trials[-1].value == 12.0
    )  # the study unchanged


def test_tpe_follows_the_trials_best_at_that_epoch_not_the_one_that_ran_to_the_end():
    space = {"x": FloatDistribution(0, 1)}
    study = optuna.create_study(sampler=FreshTPE(0, seed=3))
    for _ in range(40):  # good near x = 0.2 by epoch 4; stopped there by the scheduler
        trial = study.ask(space)
        for epoch in range(1, 5):
            trial.report(abs(trial.params["x"] - 0.2) + 1 / epoch, epoch)
        study.tell(trial, state=TrialState.PRUNED)
    for x in (0.9, 0.95):  # two trials near x = 0.9 ran to the end with middling values
        study.enqueue_trial({"x": x})
        trial = study.ask(space)
        for epoch in range(1, 9):
            trial.report(0.8 + 1 / epoch, epoch)
        study.tell(trial, 0.8)
    proposals = [study.ask(space).params["x"] for _ in range(20)]
    assert np.median(proposals) < 0.5  # Optuna's own ranking puts both finished trials in its good group


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


@pytest.mark.parametrize(
    "make", [lambda: WarpedGP(12, seed=2), lambda: FreshTPE(12, seed=2), lambda: QuantileSampler(12, seed=2)]
)
def test_the_random_start_repeats_no_config_of_a_small_space(make):
    """12 configs and a random start of 12: drawn independently, seed 2 repeated one within the first four."""
    small = {
        "w": CategoricalDistribution([4, 8, 16]),
        "lr": CategoricalDistribution([1e-3, 1e-2]),
        "n": IntDistribution(0, 1),
    }
    study = optuna.create_study(sampler=make())
    running = [study.ask(small) for _ in range(2)]  # two at once, as a sweep runs them
    for _ in range(10):
        done = running.pop(0)
        study.tell(done, done.params["w"] * done.params["lr"])
        running.append(study.ask(small))
    configs = [tuple(sorted(t.params.items())) for t in study.trials]
    assert len(set(configs)) == len(configs) == 12


def test_a_continuous_random_start_is_optunas_own():
    """Where a repeat cannot happen, the random start is drawn as Optuna draws it: the same configs."""
    space = {"x": FloatDistribution(0, 1), "y": FloatDistribution(1e-3, 1, log=True)}
    ours, theirs = (
        optuna.create_study(sampler=FreshTPE(5, seed=3)),
        optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3)),
    )
    for study in (ours, theirs):
        for _ in range(5):
            trial = study.ask(space)
            study.tell(trial, trial.params["x"])
    assert [t.params for t in ours.trials] == [t.params for t in theirs.trials]


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


@pytest.mark.parametrize("make", [lambda: WarpedGP(5, seed=0), lambda: FreshTPE(5, seed=0, group=True)])
def test_an_earlier_sweeps_configs_teach_the_model_but_are_not_barred(make):
    sampler = make()
    study = optuna.create_study(sampler=sampler)
    grid = [{"a": a, "b": b, "c": c} for a in (1, 2, 4, 8) for b in (0.1, 0.2, 0.3, 0.4) for c in range(4)]
    for params in grid[::2]:  # half the configs, from an earlier sweep (--warm-start)
        study.add_trial(optuna.trial.create_trial(params=params, distributions=CHOICES, value=bowl(params)))
    for _ in range(12):
        trial = study.ask(CHOICES)
        study.tell(trial, bowl(trial.params))
    running = study.ask(CHOICES)
    own = study.trials[len(grid[::2]) :]
    assert not sampler._starting(study, running)  # 32 earlier results: no random start
    assert [t.number for t in sampler._tried_here(study, running)] == [t.number for t in own[:-1]]
    configs = [tuple(sorted(t.params.items())) for t in own]
    assert len(set(configs)) == len(configs)  # its own trials are still never repeated


def test_a_gp_pickled_before_it_moved_to_its_own_module_still_loads(monkeypatch):
    import pickle

    from tuner.searchers import optuna_samplers

    monkeypatch.setattr(WarpedGP, "__module__", "tuner.searchers.optuna_samplers")  # as older sweeps saved it
    old = pickle.dumps(WarpedGP(3, seed=0))
    monkeypatch.undo()
    assert b"tuner.searchers.optuna_samplers" in old and b"warped_gp" not in old
    assert optuna_samplers.WarpedGP is WarpedGP and isinstance(pickle.loads(old), WarpedGP)
    # and in a fresh interpreter, as `tuner resume` meets it, where nothing has imported the GP's new module
    load = "import pickle, sys; print(type(pickle.loads(sys.stdin.buffer.read())).__module__)"
    fresh = subprocess.run([sys.executable, "-c", load], input=old, capture_output=True, check=True)
    assert fresh.stdout.decode().strip() == "tuner.searchers.warped_gp"


def test_the_sampler_rules_load_without_the_gp():
    """tuner.moved answers the old name, so the rules' module never imports the GP's (no import circle)."""
    check = "import sys, tuner.searchers.optuna_samplers; print('tuner.searchers.warped_gp' in sys.modules)"
    fresh = subprocess.run([sys.executable, "-c", check], capture_output=True, check=True)
    assert fresh.stdout.decode().strip() == "False"
