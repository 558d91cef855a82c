"""Search plans: no parameter is mis-searched silently; every registered searcher proposes real configs."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ray import tune

from tuner import searchers
from tuner.errors import UsageError
from tuner.objectives import LOSS, Objective
from tuner.searchers import SearcherContext, build_searcher, plan_search

SEED_SPACE = {
    "l1": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
    "lr": tune.loguniform(1e-4, 1e-1),
    "batch_size": tune.choice([2, 4, 8, 16]),
}
MODEL_BASED = [n for n in searchers.NAMES if searchers.REGISTRY[n].model_based]


def how(plan, name):
    return next(p.how for p in plan.params if p.name == name)


@pytest.mark.parametrize("searcher", MODEL_BASED)
def test_sample_from_with_a_few_values_is_probed_and_searched_as_an_ordered_choice(searcher):
    plan = plan_search(SEED_SPACE, searcher, seed=0)
    assert how(plan, "l1") == f"probed: 7 values 4…256, searched by {searcher} as an ordered choice"
    l1 = next(p for p in plan.params if p.name == "l1")
    # Positions in [0, 7) map to the sorted values, each with an equal share: ordered, and as likely as drawn.
    assert [l1.decode(x) for x in (0.0, 0.99, 1.0, 3.5, 6.99, 7.0)] == [4, 4, 8, 32, 256, 256]


def test_probing_leaves_the_global_random_state_alone():
    state = np.random.get_state()
    plan_search(SEED_SPACE, "optuna", seed=3)
    assert np.array_equal(np.random.get_state()[1], state[1])


def test_random_search_draws_a_sample_from_function_apart_from_the_other_parameters():
    """sample_from(np.random.uniform) drew the very number the first uniform parameter drew, trial after trial (the
    global generator was seeded as the searcher's own): Ray's documented idiom searched one line of the space."""
    from tuner.searchers.random_draws import RandomSearcher

    space = {"x": tune.uniform(0, 1), "y": tune.sample_from(lambda _: np.random.uniform(0, 1))}
    searcher = RandomSearcher(space, seed=5)
    draws = [searcher.suggest(str(k)) for k in range(300)]
    x, y = (np.array([d[name] for d in draws]) for name in ("x", "y"))
    assert abs(np.corrcoef(x, y)[0, 1]) < 0.2 and not np.any(np.isclose(x, y))
    assert x[3] == np.random.RandomState(5 * 7919 + 3).uniform(0, 1)  # the other parameters draw as they did
    again = RandomSearcher(space, seed=5)
    assert [again.suggest(str(k)) for k in range(3)] == draws[:3]  # and a sweep still repeats with its seed


@pytest.mark.parametrize(
    "function, expected",
    [
        (lambda _: np.random.uniform(0, 1), "follows its draw uniform(0, 1), values"),
        (lambda spec: spec["config"]["lr"] * 2, "computed from the other parameters in each trial"),
        (lambda _: np.random.default_rng().uniform(), "drawn at random, not searched by optuna: its values come from a "
                                                      "random source tuner does not follow"),
        (lambda _: str(np.random.choice(["relu", "gelu"])), "probed: 2 values, searched by optuna as a categorical"),
        (lambda _: 3, "probed: always 3, a constant"),
    ],
)  # fmt: skip
def test_each_sample_from_form_is_planned_as_it_is_searched(function, expected):
    plan = plan_search({"x": tune.sample_from(function), "lr": tune.uniform(0, 1)}, "optuna")
    assert how(plan, "x").startswith(expected)


def test_plan_lines_say_how_each_parameter_is_searched():
    plan = plan_search(SEED_SPACE, "hyperopt")
    assert how(plan, "lr") == "searched by hyperopt in log space"
    assert how(plan, "batch_size") == "searched by hyperopt as an ordered choice"
    assert any(line.strip().startswith("lr") and "loguniform(0.0001, 0.1)" in line for line in plan.lines())


@pytest.mark.parametrize("searcher", MODEL_BASED)
def test_a_choice_of_numbers_is_searched_in_order_and_a_choice_of_labels_as_labels(searcher):
    plan = plan_search({"units": tune.choice([64, 16, 256]), "act": tune.choice(["relu", "tanh", "gelu"]),
                        "flag": tune.choice([0, 1])}, searcher)  # fmt: skip
    units = next(p for p in plan.params if p.name == "units")
    assert how(plan, "units") == f"searched by {searcher} as an ordered choice"
    assert [units.decode(x) for x in (0.5, 1.5, 2.5)] == [16, 64, 256], "in numeric order, not as listed"
    assert "ordered" not in how(plan, "act") and "ordered" not in how(plan, "flag")
    assert how(plan, "flag") == f"searched by {searcher} as a two-way choice (an index)"
    flag = next(p for p in plan.params if p.name == "flag")
    assert {flag.decode(x) for x in (0, 0.5, 1, 1.5)} == {0, 1}


def test_bayesopt_searches_log_scale_in_log_space_and_labels_through_an_index():
    plan = plan_search({**SEED_SPACE, "act": tune.choice(["relu", "tanh", "gelu"])}, "bayesopt")
    assert how(plan, "lr") == "searched by bayesopt in log space"
    assert "index over its 3 choices" in how(plan, "act")
    encoded = plan.searched_space
    assert encoded["lr"].lower == pytest.approx(math.log(1e-4))
    assert encoded["lr"].upper == pytest.approx(math.log(1e-1))
    assert set(encoded) == {"l1", "lr", "batch_size", "act"}


@pytest.mark.parametrize("searcher", MODEL_BASED)
def test_suggestions_are_decoded_into_the_real_domain(searcher):
    plan = plan_search(SEED_SPACE, searcher)
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=400, seed=3))
    configs = [built.suggest(f"t{i}") for i in range(6)]
    for config in configs:
        assert config is not None
        assert 1e-4 <= config["lr"] <= 1e-1
        assert config["batch_size"] in (2, 4, 8, 16)
        assert config["l1"] in (4, 8, 16, 32, 64, 128, 256)


def test_bayesopt_random_phase_searches_lr_in_log_space():
    plan = plan_search(SEED_SPACE, "bayesopt")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=400, seed=3))
    configs = [built.suggest(f"t{i}") for i in range(10)]
    below = sum(c["lr"] < 10**-2.5 for c in configs)  # about half below the geometric midpoint
    assert 2 <= below <= 8


@pytest.mark.parametrize("searcher", ["hyperopt", "bayesopt", "optuna"])
def test_grid_search_is_refused_with_the_searchers_that_can(searcher):
    with pytest.raises(UsageError, match=r"parameter 'x' \(grid_search\[1, 2\]\) cannot be searched by .*random"):
        plan_search({"x": tune.grid_search([1, 2]), "lr": tune.uniform(0, 1)}, searcher)


@pytest.mark.parametrize("searcher", ["bayesopt", "optuna", "gp"])
def test_unbounded_normal_domains_are_searched_through_their_quantile(searcher):
    plan = plan_search({"w": tune.randn(2, 3), "k": tune.qrandn(0, 10, 5)}, searcher)
    assert how(plan, "w") == f"searched by {searcher} through its quantile (a normal has no bounds; each quantile equally likely)"
    w = next(p for p in plan.params if p.name == "w")
    assert w.decode(0.5) == pytest.approx(2.0)
    assert w.decode(0.8413447) == pytest.approx(5.0, abs=1e-4)  # one sd above the mean
    assert w.decode(w.encode(-1.5)) == pytest.approx(-1.5)
    k = next(p for p in plan.params if p.name == "k")
    assert k.decode(0.9) % 5 == 0  # quantized as the domain says


def test_model_based_searchers_need_something_to_search():
    with pytest.raises(UsageError, match="nothing to search"):
        plan_search({"w": tune.sample_from(lambda _: np.random.default_rng().uniform()), "c": 3}, "hyperopt")


def test_bayesopt_integer_domains_keep_their_bounds():
    plan = plan_search({"k": tune.randint(1, 4), "n": tune.lograndint(1, 1000)}, "bayesopt")
    decode_k = next(p.decode for p in plan.params if p.name == "k")
    assert [decode_k(x) for x in (1.0, 1.99, 2.5, 3.999, 4.0)] == [1, 1, 2, 3, 3]
    decode_n = next(p.decode for p in plan.params if p.name == "n")
    assert decode_n(math.log(1000)) == 999 and decode_n(0.0) == 1


def test_a_trial_stopped_while_paused_still_teaches_the_searcher():
    """Tune completes a HyperBand-paused trial without a result; the searcher must get the last one."""
    plan = plan_search({"lr": tune.uniform(0, 1)}, "bayesopt")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
    first, second = built.suggest("a"), built.suggest("b")
    assert first and second and built.suggest("c") is None  # waiting for the random phase
    for trial in ("a", "b"):
        built.on_trial_result(trial, {"loss": 0.5, "training_iteration": 1})
        built.on_trial_complete(trial, result=None)
    assert built.suggest("c") is not None


def test_under_a_scheduler_that_holds_trials_the_searcher_never_waits_and_still_learns():
    plan = plan_search({"lr": tune.uniform(0, 1)}, "bayesopt")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0, never_wait=True))
    configs = [built.suggest(t) for t in "abcd"]  # the random phase is 2 configs; c and d come anyway
    assert all(c is not None and 0 <= c["lr"] <= 1 for c in configs)
    for trial, loss in zip("abcd", (0.4, 0.3, 0.2, 0.1), strict=True):
        built.on_trial_result(trial, {"loss": loss, "training_iteration": 1})
        built.on_trial_complete(trial)
    assert len(built.inner.optimizer.space) == 4, "all four results reached the Gaussian process"


def test_the_registry_names_every_searcher_once_with_a_summary():
    assert searchers.DEFAULT == "auto" and searchers.DEFAULT in searchers.CHOICES
    assert len(set(searchers.NAMES)) == len(searchers.NAMES)
    assert all(searchers.REGISTRY[n].summary for n in searchers.NAMES)
    with pytest.raises(UsageError, match="unknown searcher 'nope'; valid: optuna"):
        searchers.entry("nope")


def test_optuna_takes_a_trial_the_scheduler_stopped_as_pruned_and_one_that_ran_to_the_end_as_complete():
    import optuna

    plan = plan_search({"lr": tune.uniform(0, 1)}, "optuna")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0, full_epochs=3))
    assert built.suggest("stopped") and built.suggest("full") and built.suggest("crashed")
    built.on_trial_result("stopped", {"loss": 0.1, "training_iteration": 1})  # low, but only at epoch 1
    built.on_trial_complete("stopped", {"loss": 0.1, "training_iteration": 1})
    for epoch, loss in enumerate((0.9, 0.6, 0.4), 1):
        built.on_trial_result("full", {"loss": loss, "training_iteration": epoch})
    built.on_trial_complete("full", {"loss": 0.4, "training_iteration": 3})
    built.on_trial_complete("crashed", error=True)
    trials = {t.number: t for t in built.inner._ot_study.get_trials(deepcopy=False)}
    states = [trials[n].state for n in sorted(trials)]
    assert states == [optuna.trial.TrialState.PRUNED, optuna.trial.TrialState.COMPLETE, optuna.trial.TrialState.FAIL]
    assert trials[0].value == 0.1 and trials[0].intermediate_values == {1: 0.1}
    assert trials[1].value == 0.4


def test_a_trial_that_starts_over_reports_its_epochs_again_without_optuna_warning_of_each(tmp_path):
    import warnings

    plan = plan_search({"lr": tune.uniform(0, 1)}, "optuna")
    context = SearcherContext(LOSS, num_samples=8, seed=0, full_epochs=3)
    first = build_searcher(plan, context)
    first.suggest("a")
    first.on_trial_result("a", {"loss": 0.9, "training_iteration": 1})
    first.on_trial_result("a", {"loss": 0.6, "training_iteration": 2})
    first.save(str(tmp_path / "searcher.pkl"))  # a signal, then a resume
    built = build_searcher(plan, context)
    built.restore(str(tmp_path / "searcher.pkl"))
    for epoch, loss in ((1, 0.8), (2, 0.5), (3, 0.4)):  # the trial starts over: it had no checkpoint
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            built.on_trial_result("a", {"loss": loss, "training_iteration": epoch})
    built.on_trial_complete("a", {"loss": 0.4, "training_iteration": 3})
    trial = built.inner._ot_study.get_trials()[0]
    assert trial.intermediate_values == {1: 0.9, 2: 0.6, 3: 0.4} and trial.value == 0.4


def test_without_the_sweeps_epochs_or_for_other_models_every_completion_is_a_final_value():
    plan = plan_search({"lr": tune.uniform(0, 1)}, "optuna")
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
    built.suggest("a")
    built.on_trial_result("a", {"loss": 0.1, "training_iteration": 1})
    built.on_trial_complete("a", {"loss": 0.1, "training_iteration": 1})
    assert built.inner._ot_study.get_trials()[0].state.name == "COMPLETE"
    hyperopt = build_searcher(plan_search({"lr": tune.uniform(0, 1)}, "hyperopt"),
                              SearcherContext(LOSS, 8, 0, full_epochs=3))
    assert hyperopt.pruned_below is None


def test_an_earlier_config_is_encoded_as_each_model_sees_it_and_one_outside_the_space_is_left_out():
    from ray import tune

    from tuner.launch.warm_start import Observation, WarmStart, encode
    from tuner.searchers import plan_search

    params = {"lr": tune.loguniform(1e-4, 1e-1), "batch": tune.choice([8, 16, 32]), "act": tune.choice(["relu", "tanh"])}
    warm = WarmStart(["a"], [Observation({"lr": 0.01, "batch": 16, "act": "tanh"}, 1.0),
                             Observation({"lr": 0.5, "batch": 16, "act": "relu"}, 2.0),
                             Observation({"lr": 0.01, "batch": 12, "act": "relu"}, 3.0)], [], 0)  # fmt: skip
    optuna_points = [p for p, _ in encode(warm, plan_search(params, "optuna")).points]
    assert optuna_points == [{"lr": 0.01, "batch": 1, "act": 1}] and warm.outside == 2
    bayes = [p for p, _ in encode(warm, plan_search(params, "bayesopt")).points]
    assert len(bayes) == 1 and bayes[0]["batch"] == 1.5 and bayes[0]["act"] == 1.5
    assert abs(bayes[0]["lr"] - math.log(0.01)) < 1e-12


def test_the_best_earlier_trial_that_ran_all_its_epochs_runs_first_with_its_random_draws_too():
    from ray import tune

    from tuner.launch.warm_start import Observation, WarmStart, encode
    from tuner.searchers import SearcherContext, build_searcher, plan_search

    params = {"lr": tune.loguniform(1e-4, 1e-1), "width": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9))}
    warm = WarmStart(["a"], [Observation({"lr": 0.01, "width": 64}, 0.5, source="a"),
                             Observation({"lr": 0.02, "width": 8}, 0.2, pruned=True, values=[0.3, 0.2], source="a"),
                             Observation({"lr": 0.03, "width": 16}, 0.4, source="a")], [], 0, mode="min")  # fmt: skip
    plan = plan_search(params, "optuna")
    encode(warm, plan)
    assert warm.best()[1].config == {"lr": 0.03, "width": 16}  # the stopped trial's early 0.2 is no rival
    assert "the first trial runs their best again: lr=0.03, width=16 (0.4 in a)" in warm.describe()
    built = build_searcher(plan, SearcherContext(LOSS, num_samples=8, seed=0))
    built.add_observations(warm.points, first=warm.best())
    assert built.suggest("t1") == {"lr": 0.03, "width": 16}
    assert built.suggest("t2")["lr"] != 0.03
    assert WarmStart(["a"], [], [], 0).best() is None


def test_a_maximised_metric_runs_its_highest_earlier_trial_first_and_bayesopt_takes_the_repeat():
    from ray import tune

    from tuner.launch.warm_start import Observation, WarmStart, encode
    from tuner.searchers import SearcherContext, build_searcher, plan_search

    params = {"lr": tune.loguniform(1e-4, 1e-1), "batch": tune.choice([8, 16, 32])}
    earlier = [Observation({"lr": 0.03, "batch": 16}, 0.9, source="a"), Observation({"lr": 0.1, "batch": 8}, 0.6, source="a"),
               Observation({"lr": 0.001, "batch": 32}, 0.2, pruned=True, values=[0.1, 0.2], source="a")]  # fmt: skip
    for name in ("optuna", "bayesopt"):
        warm = encode(WarmStart(["a"], list(earlier), [], 0, mode="max", metric="accuracy"), plan_search(params, name))
        assert "again: lr=0.03, batch=16 (accuracy 0.9 in a)" in warm.describe()
        built = build_searcher(warm_plan := plan_search(params, name), SearcherContext((Objective("accuracy", "max"),), 8, 0))
        assert warm_plan.searcher == name
        built.add_observations(warm.points, first=warm.best())
        assert built.suggest("t1") == {"lr": 0.03, "batch": 16}  # exactly, though bayesopt models log(lr)
        built.on_trial_complete("t1", {"accuracy": 0.95, "training_iteration": 1})  # a repeat the model takes
        assert built.suggest("t2") not in (None, {"lr": 0.03, "batch": 16})
        built.on_trial_complete("t2", {"accuracy": 0.5, "training_iteration": 1})  # bayesopt's random phase ends
        assert built.suggest("t3") is not None
    only_stopped = WarmStart(["a"], [earlier[2]], [], 0, mode="max", metric="accuracy")
    encode(only_stopped, plan_search(params, "optuna"))
    assert "(accuracy 0.2 in a, stopped at epoch 2)" in only_stopped.describe()


@pytest.mark.parametrize(
    "params, scheduler, trials, expected, why",
    [({"lr": "loguniform", "wd": "uniform"}, "fifo", 32, "gp", "2 parameter(s) and 32 trials"),
     ({"lr": "loguniform", "wd": "uniform"}, "asha", 32, "cqr", "asha stops trials early and lr, wd are continuous"),
     ({"lr": "loguniform", "width": "ordered"}, "median", 32, "cqr", "median stops trials early and lr is continuous"),
     ({"width": "ordered", "act": "labels"}, "asha", 32, "optuna", "asha stops trials early and TPE ranks them"),
     ({"lr": "loguniform", "wd": "uniform"}, "hyperband", 32, "optuna", "hyperband stops trials early"),
     ({"lr": "loguniform", "act": "labels"}, "fifo", 32, "gp", "2 parameter(s) and 32 trials"),
     ({f"op{i}": "labels" for i in range(6)}, "fifo", 64, "gp", "6 parameter(s) and 64 trials"),
     ({f"op{i}": "labels" for i in range(6)}, "fifo", 16, "optuna", "only 16 trials"),
     ({f"x{i}": "ordered" for i in range(9)}, "fifo", 64, "gp", "9 parameter(s) and 64 trials"),
     ({f"x{i}": "uniform" for i in range(12)}, "fifo", 32, "optuna", "12 parameters"),
     ({"lr": "loguniform"}, "fifo", 400, "optuna", "400 trials"),
     ({"lr": "loguniform"}, "fifo", 8, "optuna", "only 8 trials"),
     ({"lr": "loguniform"}, "bohb", 32, "bohb", "brings its own"),
     ({"lr": "loguniform"}, "pbt", 32, "random", "perturbing")],
)  # fmt: skip
def test_auto_picks_by_space_budget_and_scheduler_and_says_why(params, scheduler, trials, expected, why):
    from ray import tune

    from tuner.searchers.auto import choose

    domains = {"loguniform": tune.loguniform(1e-4, 1e-1), "uniform": tune.uniform(0, 1),
               "labels": tune.choice(["relu", "tanh", "gelu"]), "ordered": tune.choice([16, 32, 64, 128])}  # fmt: skip
    name, reason = choose({k: domains[v] for k, v in params.items()}, scheduler, trials)
    assert name == expected and why in reason, (name, reason)


def test_a_warm_start_under_freeze_thaw_gets_a_searcher_for_trials_stopped_early():
    """Its curves' model takes no earlier trials; freeze-thaw still pauses and stops trials, so not the GP that
    leaves stopped trials out."""
    from ray import tune

    from tuner.searchers.auto import choose

    name, reason = choose({"lr": tune.loguniform(1e-4, 1e-1), "wd": tune.uniform(0, 1)}, "freeze-thaw", 30,
                          warm_start=True)  # fmt: skip
    assert name == "optuna" and reason == (
        "--warm-start, which freeze-thaw's model of the learning curves does not take; freeze-thaw stops trials "
        "early and TPE ranks them where they stopped"
    )


def _conditional_space():
    from ray import tune

    def momentum(spec):
        return np.random.choice([0.5, 0.9, 0.99]) if spec.config.optimizer == "sgd" else 0.0

    return {"lr": tune.loguniform(1e-4, 1e-1), "momentum": tune.sample_from(momentum),
            "optimizer": tune.choice(["sgd", "adam"])}  # fmt: skip


def test_a_parameter_that_reads_another_is_searched_where_it_varies():
    from tuner.searchers.plan import CONDITIONAL, RANDOM

    plan = plan_search(_conditional_space(), "optuna")
    momentum = next(p for p in plan.params if p.name == "momentum")
    assert momentum.treatment == CONDITIONAL and momentum.branches.parent == "optimizer"
    assert momentum.branches.values == {"'sgd'": [0.5, 0.9, 0.99]} and momentum.branches.constants == {"'adam'": 0.0}
    assert momentum.how.startswith("conditional on optimizer: searched by optuna where optimizer=sgd (3 values")
    other = next(p for p in plan_search(_conditional_space(), "gp").params if p.name == "momentum")
    # Optuna's GP samples a parameter outside every trial's space at random
    assert other.treatment == RANDOM and "conditional on optimizer, which gp cannot model" in other.how
    hyperopt = next(p for p in plan_search(_conditional_space(), "hyperopt").params if p.name == "momentum")
    assert hyperopt.treatment == CONDITIONAL  # inside its parent's hp.choice option
    from tuner.searchers.auto import choose

    assert choose(_conditional_space(), "fifo", 40)[0] == "optuna"


@pytest.mark.parametrize("name", ["optuna", "hyperopt", "bohb"])
def test_a_model_asks_for_the_child_only_under_its_branch(name):
    """Optuna through its define-by-run space, HyperOpt through the child inside its parent's hp.choice, BOHB
    through a hyperparameter active under a condition on its parent."""
    searcher = build_searcher(plan_search(_conditional_space(), name), SearcherContext(LOSS, 20, 0))
    seen = {"sgd": set(), "adam": set()}
    for i in range(30):
        config = searcher.suggest(f"t{i}")
        seen[config["optimizer"]].add(config["momentum"])
        searcher.on_trial_complete(f"t{i}", {"loss": config["lr"] + config["momentum"], "training_iteration": 1})
    assert seen["adam"] == {0.0} and seen["sgd"] <= {0.5, 0.9, 0.99} and len(seen["sgd"]) > 1
    if name == "optuna":
        params = {k for t in searcher.inner._ot_study.trials for k in t.params}
        assert params == {"lr", "optimizer", "momentum|optimizer=sgd"}


@pytest.mark.parametrize("name", ["optuna", "hyperopt"])
def test_a_conditional_search_survives_save_and_restore(tmp_path, name):
    plan = plan_search(_conditional_space(), name)
    first = build_searcher(plan, SearcherContext(LOSS, 20, 0))
    for i in range(12):
        config = first.suggest(f"t{i}")
        first.on_trial_complete(f"t{i}", {"loss": config["lr"], "training_iteration": 1})
    first.save(str(tmp_path / "searcher.pkl"))
    again = build_searcher(plan, SearcherContext(LOSS, 20, 0))
    again.restore(str(tmp_path / "searcher.pkl"))
    told = again.inner._ot_study.trials if name == "optuna" else again.inner._hpopt_trials.trials
    assert len(told) == 12 and set(again.suggest("t12")) == {"lr", "momentum", "optimizer"}


def test_the_plan_counts_a_warm_starts_trials_in_place_of_the_random_start():
    from tuner.searchers import entry

    optuna = entry("optuna")
    assert optuna.intro(30) == "search plan (optuna: 10 random configs first, then multivariate TPE):"
    assert "the earlier best, 5 random config(s), then multivariate TPE on these and the earlier" in optuna.intro(30, 4)
    assert optuna.intro(30, 12) == "search plan (optuna: multivariate TPE on the earlier trials, after their best runs again):"
    curves = entry("curves")  # a sweep no larger than its random start is drawn at random throughout
    assert curves.intro(8).startswith("search plan (curves: 6 random configs first, then every other one from")
    assert curves.intro(6) == "search plan (curves: all 6 configs at random; the model proposes past the first 6):"


def test_bohbs_space_is_built_by_tuner_as_rays_converter_of_2_60_builds_it():
    """tuner builds BOHB's ConfigurationSpace itself (Ray's converter of 2.50 and 2.55 passes ``q=`` that
    ConfigSpace 1 refuses): integers' upper bounds included, quantisation dropped, a normal with its bounds."""
    import ConfigSpace as CS
    from ray import tune
    from ray.tune.search.sample import Float

    from tuner.searchers.bohb_space import hyperparameter

    expected = {
        "u": (tune.uniform(0, 1), CS.UniformFloatHyperparameter("u", 0, 1)),
        "l": (tune.loguniform(1e-4, 1e-1), CS.UniformFloatHyperparameter("l", 1e-4, 1e-1, log=True)),
        "i": (tune.randint(1, 10), CS.UniformIntegerHyperparameter("i", 1, 9)),
        "li": (tune.lograndint(1, 1000), CS.UniformIntegerHyperparameter("li", 1, 999, log=True)),
        "c": (tune.choice(["a", "b"]), CS.CategoricalHyperparameter("c", ["a", "b"])),
        "q": (tune.quniform(0, 1, 0.25), CS.UniformFloatHyperparameter("q", 0, 1)),
        "n": (Float(-3, 3).normal(0, 1), CS.NormalFloatHyperparameter("n", mu=0, sigma=1, lower=-3, upper=3)),
    }
    for name, (domain, made) in expected.items():
        assert hyperparameter(name, domain) == made, name


def test_bohb_rounds_a_stepped_domain_to_its_step_as_the_plan_says():
    """BOHB's models take no step: the plan said "randint(8, 64, q=8) searched by bohb" and the trials got 19, 42,
    43. Each value is now drawn without the step and rounded to it, upper bounds as Tune's own draws keep them."""
    import random

    from ray import tune

    from tuner.searchers import plan_search

    space = {
        "a": tune.quniform(0, 1, 0.25),
        "b": tune.qrandint(8, 64, 8),
        "lr": tune.qloguniform(1e-4, 1e-1, 5e-5),
    }
    plan = plan_search(space, "bohb")
    assert [p.how for p in plan.params] == [
        "searched by bohb, rounded to a multiple of 0.25",
        "searched by bohb, rounded to a multiple of 8",
        "searched by bohb in log space, rounded to a multiple of 5e-05",
    ]
    rng = random.Random(0)
    for p in plan.params:
        values = {p.decode(p.encoded.sample(random_state=rng.randrange(2**31))) for _ in range(200)}
        q = space[p.name].get_sampler().q
        assert all(abs(v / q - round(v / q)) < 1e-9 for v in values), (p.name, values)
        assert min(values) >= space[p.name].lower and max(values) <= space[p.name].upper
    assert 64 in {plan.params[1].decode(x) for x in (60.5, 63.9)}  # qrandint's upper bound is drawn


def test_a_function_that_resumes_through_a_helper_of_its_module_keeps_checkpoints(tmp_path):
    """A trainable that calls load_state(), which asks Tune for the checkpoint, was refused by HyperBand as one
    that "does not continue from a checkpoint"; one that asks but tells Lightning's callback to save none does not."""
    import importlib.util

    source = (
        "from ray import tune\n"
        "def load_state():\n    return tune.get_checkpoint()\n"
        "def restore():\n    return load_state()\n"
        "def train(config):\n    restore()\n"
        "def fresh(config):\n    return config\n"
        "def lightning(config):\n"  # as Ray's Lightning guide writes it, told to save nothing
        "    callback = TuneReportCheckpointCallback({'loss': 'val_loss'}, save_checkpoints=False)\n"
        "    checkpoint = tune.get_checkpoint()\n"
    )
    (tmp_path / "helper_space.py").write_text(source)
    spec = importlib.util.spec_from_file_location("helper_space", tmp_path / "helper_space.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from tuner.launch.trial.forms import keeps_checkpoints

    assert keeps_checkpoints(module.train, None) and not keeps_checkpoints(module.fresh, None)
    assert not keeps_checkpoints(module.lightning, None)  # it asks for a checkpoint that never comes


def test_rays_advice_on_the_spec_form_of_sample_from_is_said_once_not_at_every_draw():
    """The derived parameter of Ray's docs, sample_from(lambda spec: spec.config.alpha * ...), printed Ray's
    deprecation warning 400 times before the plan."""
    import logging

    import numpy as np
    from ray import tune

    from tuner.searchers import plan_search

    said: list[str] = []

    class Catch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            said.append(record.getMessage())

    logger = logging.getLogger("ray.tune.search.sample")
    handler = Catch()
    logger.addHandler(handler)
    try:
        space = {
            "alpha": tune.uniform(0, 1),
            "beta": tune.sample_from(lambda spec: spec.config.alpha * np.random.normal()),
            "div": tune.sample_from(lambda config: config["alpha"] / 10),  # planned by drawing beta
        }
        for searcher in ("optuna", "random", "cqr"):
            plan_search(space, searcher)
    finally:
        logger.removeHandler(handler)
    assert len([m for m in said if "spec dict are deprecated" in m]) <= 1
