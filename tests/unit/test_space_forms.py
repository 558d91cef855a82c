"""Every space form Ray Tune documents is planned as it is searched: draws followed, branches, nesting, grids."""

from __future__ import annotations

import random

import numpy as np
import pytest
from ray import tune

from tuner.nesting import flatten, unflatten
from tuner.objectives import LOSS
from tuner.searchers import SearcherContext, build_searcher, plan_search
from tuner.searchers.plan import COMPUTED, CONDITIONAL, DERIVED, ENCODED, RANDOM, grid_points
from tuner.searchers.traced import Draw, Traced, replay, trace
from tuner.spec import SearchSpace


def plan_of(plan, name):
    return next(p for p in plan.params if p.name == name)


@pytest.mark.parametrize(
    "function, kind, args",
    [
        (lambda _: 10 ** np.random.uniform(-4, -1), "uniform", (-4.0, -1.0)),
        (lambda _: np.random.uniform(100), "uniform", (1.0, 100.0)),  # Ray's docs: uniform(100) is 1..100
        (lambda _: 2 ** np.random.randint(2, 200), "randint", (2, 200)),
        (lambda _: random.randint(1, 500), "randint", (1, 501)),  # Python's upper bound is included
        (lambda _: np.random.normal(3, 2), "normal", (3.0, 2.0)),
        (lambda _: random.gauss(0, 1) * 0.1, "normal", (0.0, 1.0)),
        (lambda _: np.random.lognormal(0, 1), "lognormal", (0.0, 1.0)),
        (lambda spec: round(np.random.rand(), 3), "uniform", (0.0, 1.0)),
    ],
)  # fmt: skip
def test_a_function_of_one_draw_is_followed_and_replayed_exactly(function, kind, args):
    domain = tune.sample_from(function)
    traced = trace(domain, seed=0)
    assert isinstance(traced, Traced)
    assert (traced.draw.kind, traced.draw.args) == (kind, args)
    # a draw from the searched domain gives a value the function itself gives: each within what was seen
    for searched in [traced.draw.domain().sample() for _ in range(20)]:
        value = replay(domain, {}, traced.draw.value(searched))
        assert isinstance(value, (int, float))
    if kind in ("uniform", "randint"):  # bounded: the whole range maps into the values seen, ends included
        ends = [replay(domain, {}, args[0]), replay(domain, {}, args[1] - (1 if kind == "randint" else 0))]
        assert min(ends) <= traced.low and traced.high <= max(ends)


def test_replay_gives_the_function_of_the_searched_draw():
    domain = tune.sample_from(lambda _: 10 ** np.random.uniform(-4, -1))
    assert replay(domain, {}, -3.0) == pytest.approx(1e-3)
    assert replay(domain, {}, -1.0) == pytest.approx(0.1)


def test_the_global_generators_are_left_as_they_were():
    np.random.seed(11)
    random.seed(11)
    state, py_state = np.random.get_state()[1].copy(), random.getstate()
    trace(tune.sample_from(lambda _: np.random.uniform() + random.random() * 0), seed=3)
    assert np.array_equal(np.random.get_state()[1], state) and random.getstate() == py_state


@pytest.mark.parametrize(
    "function, words",
    [
        (lambda _: np.random.uniform() + np.random.uniform(), "it makes 2 random draws each time"),
        (lambda _: np.random.uniform(size=3).sum(), "it calls numpy.random.uniform in a form tuner does not follow"),
        (lambda _: np.random.default_rng().uniform(), "a random source tuner does not follow"),
        (lambda _: np.random.uniform() if np.random.uniform() < 0.5 else 1.0, "a different number of random draws"),
        (lambda _: np.random.uniform(0, np.random.randint(1, 9)), "it makes 2 random draws each time"),
    ],
)  # fmt: skip
def test_what_cannot_be_followed_says_why_in_words(function, words):
    traced = trace(tune.sample_from(function), seed=0)
    assert isinstance(traced, str) and words in traced


def test_a_followed_function_is_searched_by_every_model():
    space = {"lr": tune.sample_from(lambda _: 10 ** np.random.uniform(-4, -1)), "b": tune.choice([1, 2, 3])}
    for searcher in ("optuna", "gp", "hyperopt", "bayesopt"):
        plan = plan_search(space, searcher)
        lr = plan_of(plan, "lr")
        assert lr.treatment == ENCODED, (searcher, lr.how)
        assert lr.how.startswith("follows its draw uniform(-4, -1), values"), lr.how
        built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=1))
        values = [built.suggest(f"t{i}")["lr"] for i in range(2)]  # bayesopt waits for results after its start
        assert all(1e-4 <= v <= 1e-1 for v in values), (searcher, values)


def test_a_followed_function_takes_earlier_values_back_through_its_draw():
    plan = plan_search({"lr": tune.sample_from(lambda _: 10 ** np.random.uniform(-4, -1)), "b": tune.uniform(0, 1)},
                       "optuna")  # fmt: skip
    lr = plan_of(plan, "lr")
    assert lr.encode(1e-3) == pytest.approx(-3.0)
    assert lr.decode(lr.encode(0.0425)) == pytest.approx(0.0425)
    with pytest.raises(ValueError):
        lr.encode(0.5)  # not a value this function gives


def test_a_continuous_branch_is_searched_where_it_applies():
    """Ray's docs' conditional form, with a continuous branch: searched by optuna only where sgd is chosen."""
    space = {
        "optimizer": tune.choice(["sgd", "adam"]),
        "lr": tune.loguniform(1e-4, 1e-1),
        "momentum": tune.sample_from(
            lambda spec: np.random.uniform(0.5, 0.99) if spec.config.optimizer == "sgd" else 0.0
        ),
    }
    plan = plan_search(space, "optuna")
    momentum = plan_of(plan, "momentum")
    assert momentum.treatment == CONDITIONAL
    assert momentum.how == ("conditional on optimizer: searched by optuna where optimizer=sgd (its draw "
                            "uniform(0.5, 0.99)); constant where optimizer=adam: 0.0")  # fmt: skip
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=20, seed=2))
    configs = [built.suggest(f"t{i}") for i in range(12)]
    for config in configs:
        if config["optimizer"] == "sgd":
            assert 0.5 <= config["momentum"] <= 0.99
        else:
            assert config["momentum"] == 0.0
    assert len({c["momentum"] for c in configs if c["optimizer"] == "sgd"}) > 1
    study = built.inner._ot_study
    assert "momentum|optimizer=sgd" in {name for t in study.trials for name in t.distributions}


def test_a_branch_that_cannot_be_followed_says_why():
    space = {
        "optimizer": tune.choice(["sgd", "adam"]),
        "momentum": tune.sample_from(
            lambda spec: np.random.uniform(size=2).mean() if spec.config.optimizer == "sgd" else 0.0
        ),
    }
    how = plan_of(plan_search(space, "optuna"), "momentum").how
    assert how.startswith("drawn at random, not searched by optuna: where optimizer=sgd, it calls numpy.random.uniform")


def test_a_parameter_made_from_a_continuous_one_is_searched_through_its_draw():
    """Ray's docs: beta = spec.config.alpha * np.random.normal()."""
    space = {"alpha": tune.sample_from(lambda spec: np.random.uniform(100)),
             "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal())}  # fmt: skip
    plan = plan_search(space, "optuna")
    assert plan_of(plan, "alpha").treatment == ENCODED
    beta = plan_of(plan, "beta")
    assert beta.treatment == DERIVED
    assert beta.how.startswith("follows its draw normal(0, 1), through its quantile, given the other parameters")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
    for i in range(5):
        config = built.suggest(f"t{i}")
        searched = built.inner._ot_study.trials[-1].params["beta"]  # the quantile the model chose
        assert config["beta"] == pytest.approx(config["alpha"] * Draw("normal", (0.0, 1.0)).value(searched))


def test_a_function_of_the_others_without_a_draw_is_computed():
    space = {"lr": tune.loguniform(1e-4, 1e-1), "warmup_lr": tune.sample_from(lambda config: config["lr"] / 10)}
    plan = plan_search(space, "optuna")
    assert plan_of(plan, "warmup_lr").treatment == COMPUTED
    config = build_searcher(plan, SearcherContext(LOSS, num_samples=8)).suggest("t0")
    assert config["warmup_lr"] == pytest.approx(config["lr"] / 10)


def test_a_function_drawn_at_random_may_read_a_parameter_the_space_lists_after_it():
    """Ray's docs list a conditional momentum before the optimizer it reads; a searcher that draws it at random
    (gp models no branches) drew it before the optimizer was decided, and every sweep failed."""
    space = {
        "lr": tune.loguniform(1e-4, 1e-1),
        "momentum": tune.sample_from(lambda spec: np.random.choice([0.5, 0.9]) if spec.config.optimizer == "sgd" else 0.0),
        "optimizer": tune.choice(["sgd", "adam"]),
    }
    plan = plan_search(space, "gp")
    assert plan_of(plan, "momentum").treatment == RANDOM
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
    for i in range(6):
        config = built.suggest(f"t{i}")
        assert list(config) == ["lr", "momentum", "optimizer"]  # in the space's order, as the trainable reads it
        assert config["momentum"] in ((0.5, 0.9) if config["optimizer"] == "sgd" else (0.0,)), config


def test_a_function_reading_a_name_the_space_lacks_says_so():
    how = plan_of(plan_search({"x": tune.sample_from(lambda c: c["nope"] * 2), "y": tune.uniform(0, 1)}, "optuna"),
                  "x").how  # fmt: skip
    assert how == "drawn at random, not searched by optuna: it reads 'nope', which the space does not define"


def test_a_nested_config_is_planned_by_full_names_and_given_back_nested():
    params = {"model": {"width": tune.choice([8, 16, 32]), "depth": 2},
              "optim": {"lr": tune.loguniform(1e-4, 1e-1), "name": tune.choice(["sgd", "adam"])}}  # fmt: skip
    space = SearchSpace(trainable="cifar", params=params)
    assert list(space.flat_params) == ["model/width", "model/depth", "optim/lr", "optim/name"]
    assert unflatten(flatten(params)) == params
    for searcher in ("optuna", "hyperopt", "bayesopt", "random"):
        plan = plan_search(space.flat_params, searcher)
        built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
        config = built.suggest("t0")
        assert set(config) == {"model", "optim"} and config["model"]["depth"] == 2, (searcher, config)
        assert config["model"]["width"] in (8, 16, 32) and 1e-4 <= config["optim"]["lr"] <= 1e-1


def test_grids_cross_into_as_many_configs_as_ray_makes():
    assert grid_points({"a": tune.grid_search([1, 2, 3]), "b": tune.grid_search(["x", "y"]), "c": tune.uniform(0, 1)}) == 6
    assert grid_points({"c": tune.uniform(0, 1)}) == 1


def test_auto_crosses_a_grid_with_random_draws_and_says_why():
    from tuner.searchers.auto import choose

    name, why = choose({"width": tune.grid_search([8, 32]), "lr": tune.loguniform(1e-4, 1e-1)}, "asha", 6)
    assert name == "random"
    assert why == "width is a grid: every value is crossed with random draws of the others, which only random search does"


def test_an_untraceable_function_stays_random_in_the_plan():
    plan = plan_search({"x": tune.sample_from(lambda _: np.random.default_rng().uniform()), "y": tune.uniform(0, 1)},
                       "optuna")  # fmt: skip
    assert plan_of(plan, "x").treatment == RANDOM
