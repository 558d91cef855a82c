"""Search plans: no parameter is mis-searched silently."""

from __future__ import annotations

import math

import numpy as np
import pytest
from ray import tune

from tuner.errors import UsageError
from tuner.searchers import build_searcher, plan_search

SEED_SPACE = {
    "l1": tune.sample_from(lambda _: 2 ** np.random.randint(2, 9)),
    "lr": tune.loguniform(1e-4, 1e-1),
    "batch_size": tune.choice([2, 4, 8, 16]),
}


def how(plan, name):
    return next(p.how for p in plan.params if p.name == name)


def test_plan_lines_say_how_each_parameter_is_searched():
    plan = plan_search(SEED_SPACE, "hyperopt")
    assert how(plan, "l1") == "drawn at random, not searched by hyperopt (sample_from is opaque)"
    assert how(plan, "lr") == "searched by hyperopt in log space"
    assert how(plan, "batch_size") == "searched by hyperopt as a categorical"
    assert any(line.strip().startswith("lr") and "loguniform(0.0001, 0.1)" in line for line in plan.lines())


def test_bayesopt_searches_log_scale_in_log_space_and_choices_through_an_index():
    plan = plan_search(SEED_SPACE, "bayesopt")
    assert how(plan, "lr") == "searched by bayesopt in log space"
    assert "index over its 4 choices" in how(plan, "batch_size")
    encoded = plan.searched_space
    assert encoded["lr"].lower == pytest.approx(math.log(1e-4)) and encoded["lr"].upper == pytest.approx(
        math.log(1e-1)
    )
    assert "l1" not in encoded


def test_bayesopt_suggestions_are_decoded_into_the_real_domain():
    plan = plan_search(SEED_SPACE, "bayesopt")
    searcher = build_searcher(plan, "loss", "min", num_samples=400, seed=3)
    configs = [searcher.suggest(f"t{i}") for i in range(10)]
    for config in configs:
        assert 1e-4 <= config["lr"] <= 1e-1
        assert config["batch_size"] in (2, 4, 8, 16)
        assert config["l1"] in (4, 8, 16, 32, 64, 128, 256)
    # Log-space search: the random phase puts about half its draws below the geometric midpoint 3.2e-3.
    below = sum(c["lr"] < 10**-2.5 for c in configs)
    assert 2 <= below <= 8


@pytest.mark.parametrize("searcher", ["hyperopt", "bayesopt"])
def test_grid_search_is_refused_with_the_searchers_that_can(searcher):
    with pytest.raises(
        UsageError, match=r"parameter 'x' \(grid_search\[1, 2\]\) cannot be searched by .*random"
    ):
        plan_search({"x": tune.grid_search([1, 2]), "lr": tune.uniform(0, 1)}, searcher)


def test_bayesopt_refuses_unbounded_normal_domains():
    with pytest.raises(UsageError, match="searchers that can: hyperopt, random"):
        plan_search({"w": tune.randn(0, 1)}, "bayesopt")


def test_model_based_searchers_need_something_to_search():
    with pytest.raises(UsageError, match="nothing to search"):
        plan_search({"l1": SEED_SPACE["l1"], "c": 3}, "hyperopt")


def test_bayesopt_integer_domains_keep_their_bounds():
    plan = plan_search({"k": tune.randint(1, 4), "n": tune.lograndint(1, 1000)}, "bayesopt")
    decode_k = next(p.decode for p in plan.params if p.name == "k")
    assert [decode_k(x) for x in (1.0, 1.99, 2.5, 3.999, 4.0)] == [1, 1, 2, 3, 3]
    decode_n = next(p.decode for p in plan.params if p.name == "n")
    assert decode_n(math.log(1000)) == 999 and decode_n(0.0) == 1


def test_a_trial_stopped_while_paused_still_teaches_the_searcher():
    """Tune completes a HyperBand-paused trial without a result; the searcher must get the last one."""
    plan = plan_search({"lr": tune.uniform(0, 1)}, "bayesopt")
    searcher = build_searcher(plan, "loss", "min", num_samples=8, seed=0)
    first, second = searcher.suggest("a"), searcher.suggest("b")
    assert first and second and searcher.suggest("c") is None  # waiting for the random phase
    for trial in ("a", "b"):
        searcher.on_trial_result(trial, {"loss": 0.5, "training_iteration": 1})
        searcher.on_trial_complete(trial, result=None)
    assert searcher.suggest("c") is not None
