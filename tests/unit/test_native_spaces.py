"""Spaces in a searcher's own language (HyperOpt, Optuna define-by-run), written as Ray's searcher docs write them:
translated into parameters the plan knows, given back to the trainable in their own shape, refused in one line
where they cannot be followed."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hyperopt import hp
from ray.tune.search.sample import Categorical, Float, Function, Integer

from tuner import SearchSpace
from tuner.errors import UsageError
from tuner.searchers import plan_search


def _ray_hyperopt_example() -> dict:
    """The conditional space of Ray's HyperOptSearch example: a choice over dicts, one holding a parameter."""
    return {
        "activation": hp.choice(
            "activation",
            [{"activation": "relu", "mult": hp.uniform("mult", 1, 2)}, {"activation": "tanh"}],
        ),
        "width": hp.uniform("width", 0, 20),
        "height": hp.uniform("height", -100, 100),
        "steps": 100,
    }


def _space(params) -> SearchSpace:
    return SearchSpace(trainable=lambda config: None, params=params)


def test_a_hyperopt_space_becomes_tune_domains_named_by_their_labels():
    space = _space(_ray_hyperopt_example())
    params = space.params
    assert set(params) == {"activation", "mult", "width", "height"}  # the constant stays in the shape only
    assert isinstance(params["activation"], Categorical) and params["activation"].categories == ["relu", "tanh"]
    assert isinstance(params["width"], Float) and (params["width"].lower, params["width"].upper) == (0, 20)
    assert isinstance(params["mult"], Function)
    assert params["mult"].func.describe() == "uniform(1, 2) where activation=relu"


def test_a_hyperopt_config_reaches_the_trainable_as_hyperopt_builds_it():
    shape = _space(_ray_hyperopt_example()).native.shape
    relu = shape({"activation": "relu", "mult": 1.5, "width": 3.0, "height": -2.0})
    assert relu == {"activation": {"activation": "relu", "mult": 1.5}, "width": 3.0, "height": -2.0, "steps": 100}
    tanh = shape({"activation": "tanh", "mult": None, "width": 3.0, "height": -2.0})
    assert tanh["activation"] == {"activation": "tanh"}  # nothing its option does not hold


@pytest.mark.parametrize(("node", "kind", "bounds"), [
    (hp.loguniform("x", math.log(1e-4), math.log(1e-1)), Float, (1e-4, 1e-1)),
    (hp.quniform("x", 0, 10, 2), Float, (0, 10)),
    (hp.randint("x", 5), Integer, (0, 5)),
    (hp.randint("x", 2, 9), Integer, (2, 9)),
    (hp.uniformint("x", 1, 9), Integer, (1, 9)),
])  # fmt: skip
def test_each_hyperopt_distribution_keeps_its_range(node, kind, bounds):
    domain = _space({"x": node}).params["x"]
    assert isinstance(domain, kind)
    assert domain.lower == pytest.approx(bounds[0]) and domain.upper == pytest.approx(bounds[1])


def test_hyperopt_integers_reach_the_trainable_as_integers_and_nested_dicts_stay_nested():
    space = _space({"model": {"layers": hp.randint("layers", 1, 4), "act": hp.choice("act", ["relu", "gelu"])}})
    assert space.native.shape({"layers": 2.0, "act": "gelu"}) == {"model": {"layers": 2, "act": "gelu"}}


def test_what_a_hyperopt_space_cannot_say_is_one_line():
    with pytest.raises(UsageError, match="HyperOpt expression 'add' in space params is not followed"):
        _space({"x": hp.uniform("x", 0, 1) + 1})
    inner = hp.choice("inner", [{"a": hp.uniform("a", 0, 1)}, {"b": 1}])
    with pytest.raises(UsageError, match="choice 'inner' holds parameters and sits inside an option of choice 'outer'"):
        _space({"o": hp.choice("outer", [{"deep": inner}, {"c": 2}])})


def _define_by_run(trial):
    """Ray's OptunaSearch define-by-run example's shape: a branch, a log range, a step, returned constants."""
    optimizer = trial.suggest_categorical("optimizer", ["sgd", "adam"])
    if optimizer == "sgd":
        trial.suggest_float("momentum", 0.5, 0.99)
    trial.suggest_float("lr", 1e-4, 1e-1, log=True)
    trial.suggest_int("width", 16, 64, step=16)
    return {"steps": 100}


def test_a_define_by_run_function_becomes_tune_domains_with_its_branch():
    params = _space(_define_by_run).params
    assert list(params) == ["optimizer", "momentum", "lr", "width"]
    assert params["optimizer"].categories == ["sgd", "adam"]
    assert params["momentum"].func.describe() == "uniform(0.5, 0.99) where optimizer=sgd"
    assert (params["lr"].lower, params["lr"].upper) == (1e-4, 1e-1)
    assert (params["width"].lower, params["width"].upper) == (16, 64)


def test_a_define_by_run_config_holds_only_what_was_asked_and_the_constants_returned():
    shape = _space(_define_by_run).native.shape
    config = {"optimizer": "adam", "momentum": None, "lr": 0.01, "width": 32}
    assert shape(config) == {"optimizer": "adam", "lr": 0.01, "width": 32, "steps": 100}
    assert shape({**config, "optimizer": "sgd", "momentum": 0.9})["momentum"] == 0.9


def test_a_branch_is_searched_by_optuna_branch_by_branch():
    plan = plan_search(_space(_define_by_run).flat_params, "optuna")
    momentum = next(p for p in plan.params if p.name == "momentum")
    assert "searched by optuna where optimizer=sgd (its draw uniform(0.5, 0.99))" in momentum.how
    drawn = [_space(_define_by_run).params["momentum"].func({"optimizer": "sgd"}) for _ in range(50)]
    assert all(0.5 <= v <= 0.99 for v in drawn) and len(set(drawn)) == 50
    assert _space(_define_by_run).params["momentum"].func({"optimizer": "adam"}) is None


def _loop(trial):
    for i in range(trial.suggest_int("n_layers", 1, 3)):
        trial.suggest_int(f"units_{i}", 4, 64)


def _reports(trial):
    trial.suggest_float("x", 0, 1)
    trial.report(1.0, 1)


def _two_levels(trial):
    if trial.suggest_categorical("a", ["x", "y"]) == "y" and trial.suggest_categorical("b", ["p", "q"]) == "q":
        trial.suggest_float("c", 0, 1)


def _returns_a_list(trial):
    trial.suggest_float("x", 0, 1)
    return [1]


@pytest.mark.parametrize(("function", "says"), [
    (_loop, "what the define-by-run function asks of 'units_1' depends on a numeric answer (n_layers)"),
    (_reports, "it calls trial.report, which a space cannot do before the trial runs"),
    (_two_levels, "asks 'c' only under some answers, and no one suggest_categorical decides when"),
    (_returns_a_list, "returns None or a dict of constants, not list"),
])  # fmt: skip
def test_what_a_define_by_run_function_cannot_say_is_one_line(function, says):
    with pytest.raises(UsageError) as raised:
        _space(function)
    assert says in str(raised.value) and "\n" not in str(raised.value)


def test_a_lognormal_has_no_tune_domain_and_is_drawn_through_numpy():
    domain = _space({"x": hp.lognormal("x", 0, 1)}).params["x"]
    np.random.seed(0)
    assert domain.func({}) > 0


def _configspace():
    """A ConfigurationSpace as Ray's TuneBOHB examples build it, with a condition, an ordinal and a constant."""
    import ConfigSpace as CS

    space = CS.ConfigurationSpace(seed=1)
    optimizer = CS.Categorical("optimizer", ["sgd", "adam", "rmsprop"])
    momentum = CS.Float("momentum", (0.5, 0.99))
    space.add([optimizer, momentum, CS.Float("lr", (1e-4, 1e-1), log=True), CS.Integer("width", (16, 128), log=True),
               CS.OrdinalHyperparameter("size", ["s", "m", "l"]), CS.Constant("steps", 100),
               CS.InCondition(momentum, optimizer, ["sgd", "rmsprop"])])  # fmt: skip
    return space


def test_a_configspace_becomes_tune_domains_and_its_condition_a_branch():
    params = _space(_configspace()).params
    assert set(params) == {"optimizer", "momentum", "lr", "width", "size"}
    assert params["size"].categories == ["s", "m", "l"]
    assert (params["width"].lower, params["width"].upper) == (16, 129)  # Tune's upper bound is excluded
    assert params["momentum"].func.describe() == (
        "uniform(0.5, 0.99) where optimizer=sgd; uniform(0.5, 0.99) where optimizer=rmsprop"
    )


def test_a_configspace_config_holds_its_active_parameters_and_constants():
    shape = _space(_configspace()).native.shape
    config = {"optimizer": "adam", "momentum": None, "lr": 0.01, "width": 32, "size": "m"}
    assert shape(config) == {"optimizer": "adam", "lr": 0.01, "width": 32, "size": "m", "steps": 100}
    assert shape({**config, "optimizer": "rmsprop", "momentum": 0.9})["momentum"] == 0.9


def test_what_a_configspace_cannot_say_is_one_line():
    import ConfigSpace as CS

    forbidden = CS.ConfigurationSpace({"a": ["x", "y"], "b": (0.0, 1.0)})
    forbidden.add(CS.ForbiddenEqualsClause(forbidden["a"], "y"))
    with pytest.raises(UsageError, match="forbidden clauses, which tuner does not follow"):
        _space(forbidden)
    numeric = CS.ConfigurationSpace({"n": (1, 4), "b": (0.0, 1.0)})
    numeric.add(CS.GreaterThanCondition(numeric["b"], numeric["n"], 2))
    with pytest.raises(UsageError, match="GreaterThanCondition on 'b' is not followed"):
        _space(numeric)


def test_a_configspace_normal_keeps_its_bounds_under_every_searcher_and_bohb():
    """ConfigSpace 1.x bounds every normal float: the trainable never gets a value outside them, and BOHB (which
    such a space is written for) searches it as the draw's quantile."""
    import ConfigSpace as CS

    from tuner import searchers
    from tuner.searchers.bohb_space import configuration_space

    space = CS.ConfigurationSpace(seed=1)
    space.add([CS.Float("x", (0.0, 1.0), distribution=CS.Normal(0.5, 0.3)), CS.Categorical("c", ["a", "b"])])
    params = _space(space).params
    assert params["x"].func.describe() == "normal(0.5, 0.3) within [0, 1]"
    np.random.seed(0)
    drawn = [params["x"].func({}) for _ in range(2000)]
    assert min(drawn) == 0.0 and max(drawn) == 1.0 and 0.45 < float(np.median(drawn)) < 0.55
    built = configuration_space(searchers.plan_search(dict(params), "bohb", 0))
    assert type(built["x"]).__name__ == "UniformFloatHyperparameter"  # the normal's quantile, in (0, 1)


def test_a_parameter_its_branch_did_not_ask_is_left_out_of_the_reviewed_config_and_only_there(tmp_path):
    """Tune holds an unasked conditional parameter as None; the review shows the config as the trainable had it.
    A None the parameter took where it was asked, or under another parent value, stays."""
    from tuner.folder import plan

    plan.write(str(tmp_path), ["plan"], 2, {"momentum": {"parent": "optimizer", "where": ["'adam'"]}})
    drop = plan.inactive_dropped(str(tmp_path))
    assert drop({"optimizer": "adam", "momentum": None, "lr": 0.1}) == {"optimizer": "adam", "lr": 0.1}
    assert drop({"optimizer": "sgd", "momentum": None}) == {"optimizer": "sgd", "momentum": None}
    assert drop({"optimizer": "adam", "momentum": 0.9}) == {"optimizer": "adam", "momentum": 0.9}
    assert plan.trials_at_once(str(tmp_path)) == 2
    (tmp_path / "old").mkdir()
    plan.write(str(tmp_path / "old"), ["plan"], 1)  # a plan without conditions drops nothing
    assert plan.inactive_dropped(str(tmp_path / "old"))({"momentum": None}) == {"momentum": None}


def test_importance_takes_a_parameter_left_out_where_its_branch_did_not_ask_it():
    """The reviewed config leaves an unasked conditional parameter out; the report's importance read every trial's
    config by every name and failed with KeyError: 'momentum'."""
    from tuner.experiment import TrialRecord
    from tuner.objectives import Objective
    from tuner.review.report.importance import importance

    trials = []
    for i in range(10):
        sgd = i % 2 == 0
        config = {"lr": 10 ** -(1 + i / 3), "optimizer": "sgd" if sgd else "adam", **({"momentum": 0.5 + i / 40} if sgd else {})}
        rows = [{"training_iteration": "1", "loss": str(0.3 + i / 10 + (0.2 if sgd else 0.0))}]
        trials.append(TrialRecord(f"t{i}", f"/x/t{i}", "TERMINATED", config, rows, "", None))
    found = importance(trials, Objective("loss", "min"))
    assert found is not None and set(found[0]) == {"lr", "optimizer", "momentum"}
