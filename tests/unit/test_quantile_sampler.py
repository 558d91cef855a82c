"""The quantile-regression sampler behind ``--searcher cqr`` (tuner/searchers/quantile_sampler.py), on Optuna
studies run directly: its configs stay in their domains, it never proposes one twice, it learns from trials
stopped early, and its calibrated quantiles are ordered."""

from __future__ import annotations

import math

import numpy as np
import optuna
import pytest
from optuna.distributions import CategoricalDistribution, FloatDistribution, IntDistribution

from tuner.searchers.quantile_sampler import QUANTILES, QuantileSampler, _Codec, _fit, _normal_scores

optuna.logging.set_verbosity(optuna.logging.WARNING)

DISTRIBUTIONS = [
    FloatDistribution(1e-4, 1e-1, log=True),
    FloatDistribution(0.0, 0.5, step=0.1),
    IntDistribution(16, 256, log=True),
    IntDistribution(1, 9, step=2),
    CategoricalDistribution(["relu", "tanh", None]),
]


def test_random_and_nearby_configs_lie_in_their_domains_on_their_grids_and_round_trip():
    codec, rng = _Codec(DISTRIBUTIONS), np.random.RandomState(0)
    points = np.vstack([codec.random(500, rng), codec.near(codec.random(1, rng)[0], 500, rng)])
    for point in points:
        values = codec.values(point)
        assert 1e-4 <= values[0] <= 1e-1
        assert 0.0 <= values[1] <= 0.5 and math.isclose(values[1] * 10, round(values[1] * 10), abs_tol=1e-9)
        assert isinstance(values[2], int) and 16 <= values[2] <= 256
        assert values[3] in {1, 3, 5, 7, 9}
        assert values[4] in ("relu", "tanh", None)
        assert np.allclose(codec.points([values]), point)  # a config read back is the same point
    features = codec.features(points)
    assert features.shape == (len(points), 4 + 3) and features.min() >= 0 and features.max() <= 1


def test_it_never_proposes_a_config_twice_in_a_space_of_choices():
    study = optuna.create_study(sampler=QuantileSampler(warmup=4, seed=1))

    def objective(trial: optuna.Trial) -> float:
        x = trial.suggest_int("x", 0, 4)
        y = trial.suggest_categorical("y", ["a", "b", "c", "d"])
        return (x - 3) ** 2 + "abcd".index(y)

    study.optimize(objective, n_trials=20)  # the space holds exactly 20 configs
    configs = {(t.params["x"], t.params["y"]) for t in study.trials}
    assert len(configs) == 20


def _proposals_after(history: list[tuple[float, list[float], bool]], seed: int, n: int) -> list[float]:
    """The next ``n`` values of x the sampler proposes after ``history``: (x, values per epoch, ran to the end)."""
    study = optuna.create_study(sampler=QuantileSampler(warmup=0, seed=seed))
    distribution = FloatDistribution(0.0, 1.0)
    for x, curve, finished in history:
        trial = optuna.trial.create_trial(
            params={"x": x},
            distributions={"x": distribution},
            intermediate_values=dict(enumerate(curve, 1)),
            value=curve[-1] if finished else None,
            state=optuna.trial.TrialState.COMPLETE if finished else optuna.trial.TrialState.PRUNED,
        )
        study.add_trial(trial)
    out = []
    for _ in range(n):
        trial = study.ask({"x": distribution})
        out.append(trial.params["x"])
        study.tell(trial, state=optuna.trial.TrialState.FAIL)  # no result: each proposal sees the same model
    return out


def test_it_learns_from_trials_stopped_at_the_first_epoch():
    """As under ASHA: a few trials ran to the end, most stopped at epoch 1; the good region (x near 0.8) shows
    only in the epoch-1 values of stopped trials. The proposals go there."""
    rng = np.random.RandomState(0)
    history = []
    for x in rng.rand(40):
        first = (x - 0.8) ** 2 + 1.0  # epoch 1: worse than any final value, same shape
        history.append((float(x), [first], False))
    for x in (0.05, 0.3):  # the only finished trials, both far from the good region
        history.append((x, [(x - 0.8) ** 2 + 1.0, (x - 0.8) ** 2], True))
    proposals = _proposals_after(history, seed=3, n=12)
    assert np.median(np.abs(np.array(proposals) - 0.8)) < 0.15, proposals


def test_calibrated_quantiles_keep_their_order_and_widen_where_the_model_is_unsure():
    rng = np.random.RandomState(0)
    x = rng.rand(60, 2)
    y = _normal_scores(np.sin(6 * x[:, 0]) + 0.3 * rng.randn(60))
    models = _fit(x, y, rng)
    shifts = [shift for _, shift in models]
    assert len(models) == len(QUANTILES)
    assert all(s <= 0 for s in shifts[: len(QUANTILES) // 2]) and all(s >= 0 for s in shifts[-(len(QUANTILES) // 2) :])
    grid = rng.rand(200, 2)
    predicted = np.stack([m.predict(grid) + s for m, s in models])
    assert (predicted[-1] - predicted[0]).mean() > 0  # the outer pair encloses the median


@pytest.mark.parametrize("direction", ["minimize", "maximize"])
def test_it_searches_the_right_way_round(direction):
    sign = 1 if direction == "minimize" else -1
    study = optuna.create_study(direction=direction, sampler=QuantileSampler(warmup=8, seed=0))
    study.optimize(lambda t: sign * (t.suggest_float("x", -2, 2) - 1.0) ** 2, n_trials=30)
    later = [t.params["x"] for t in study.trials[-10:]]
    assert np.median(np.abs(np.array(later) - 1.0)) < 0.3, later
