"""A parameter that reads another, searched where it varies, through a real sweep and its resume."""

from __future__ import annotations

import pytest

from tuner import experiment

SPACE = '''"""Momentum matters only for SGD."""
import numpy as np
from ray import tune
from tuner import SearchSpace


def train(config, *, max_epochs=2):
    for epoch in range(1, max_epochs + 1):
        away = abs(config["momentum"] - 0.9) if config["optimizer"] == "sgd" else 0.3
        tune.report({"loss": float(abs(np.log10(config["lr"]) + 2) + away + 1 / epoch)})


SPACE = SearchSpace(trainable=train, params={
    "lr": tune.loguniform(1e-4, 1e-1),
    "momentum": tune.sample_from(lambda spec: np.random.choice([0.5, 0.9, 0.99]) if spec.config.optimizer == "sgd"
                                 else 0.0),
    "optimizer": tune.choice(["sgd", "adam"]),
})
'''


@pytest.mark.slow  # the conformance forms run conditional spaces in the fast tier
def test_a_conditional_parameter_is_searched_in_its_branch_only(run_cli, tmp_path):
    space = tmp_path / "conditional.py"
    space.write_text(SPACE)
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--searcher", "optuna", "--num-samples", "10",
                     "--max-epochs", "2", "--storage-path", tmp_path, "--name", "cond")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "conditional on optimizer: searched by optuna where optimizer=sgd (3 values 0.5…0.99)" in result.out
    trials = experiment.load(str(tmp_path / "cond")).trials
    assert len(trials) == 10
    for trial in trials:
        allowed = {0.5, 0.9, 0.99} if trial.config["optimizer"] == "sgd" else {0.0}
        assert trial.config["momentum"] in allowed, trial.config

    refused = run_cli("sweep", "--space", space, "--searcher", "optuna", "--warm-start", tmp_path / "cond",
                      "--storage-path", tmp_path, "--name", "warm")  # fmt: skip
    assert refused.code == 2 and "this space has conditional parameters (momentum)" in refused.err
    # the searchers it offers take the earlier trials here: following the advice works
    assert "pass --searcher with one that draws them at random and takes the rest: gp, cqr, bayesopt" in refused.err
    warm = run_cli("sweep", "--space", space, "--searcher", "gp", "--scheduler", "fifo", "--warm-start",
                   tmp_path / "cond", "--num-samples", "2", "--storage-path", tmp_path, "--name", "warm")  # fmt: skip
    assert warm.code == 0, warm.out[-2000:] + warm.err[-2000:]

    grown = run_cli("resume", tmp_path / "cond", "--num-samples", "13")  # the saved searcher restores and goes on
    assert grown.code == 0, grown.out[-2000:] + grown.err[-2000:]
    assert len(experiment.load(str(tmp_path / "cond")).trials) == 13
