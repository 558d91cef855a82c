"""--warm-start: an earlier sweep's trials seed the searcher of a new one."""

from __future__ import annotations

import pytest

from tests.instant import instant_space

pytestmark = pytest.mark.slow  # each searcher runs once in the fast tier (tests/matrix_cases.py)

FIFO = ("--scheduler", "fifo", "--max-epochs", "2")


@pytest.fixture(scope="module")
def earlier(tmp_path_factory):
    from tuner.cli import main

    folder = tmp_path_factory.mktemp("warm")
    space = instant_space(folder)
    try:
        main(["sweep", "--space", str(space), *FIFO, "--searcher", "random", "--num-samples", "5",
              "--storage-path", str(folder), "--name", "first"])  # fmt: skip
    except SystemExit as exc:
        assert exc.code == 0
    return folder, space


@pytest.mark.parametrize("searcher", ["optuna", "gp", "bayesopt"])
def test_a_second_sweep_starts_from_the_first_ones_trials(run_cli, earlier, searcher):
    from tuner import experiment

    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--searcher", searcher, "--num-samples", "2",
                     "--warm-start", folder / "first", "--storage-path", folder, "--name", f"second-{searcher}")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    first = experiment.load(str(folder / "first"))
    best = first.best_trial()
    assert "warm start: 5 earlier trial(s) from first seed the searcher" in result.out
    assert f"(loss {best.best('loss', 'min'):.6g} in first)" in result.out
    second = experiment.load(str(folder / f"second-{searcher}"))
    assert all(t.status == "TERMINATED" for t in second.trials)
    configs = [t.config for t in second.trials]
    assert best.config in configs  # its width too, which no searcher models (a sample_from function)
    assert configs[0] != configs[1]  # the other is the model's own proposal


def test_a_searcher_that_cannot_take_earlier_results_is_refused(run_cli, earlier):
    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--searcher", "hyperopt", "--warm-start", folder / "first",
                     "--storage-path", folder, "--name", "refused")  # fmt: skip
    assert result.code == 2 and (
        "--warm-start: searcher hyperopt, which cannot take earlier results; pass --searcher with one that can: "
        "optuna" in result.err
    )
    assert not (folder / "refused").exists()


def test_an_earlier_sweep_of_another_metric_is_refused(run_cli, earlier):
    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--metric", "accuracy", "--mode", "max",
                     "--warm-start", folder / "first", "--storage-path", folder, "--name", "other-metric")  # fmt: skip
    assert result.code == 2 and "it optimised loss (min), this sweep optimises accuracy (max)" in result.err


def test_a_warm_start_seeds_the_model_behind_freeze_thaws_gate(run_cli, earlier):
    """Under freeze-thaw (what auto picks for one objective) the searcher sits behind the scheduler's gate on
    new trials: the earlier trials reach the model inside it. The curves' own model takes none, so auto picks a
    searcher that does; the earlier sweep is found by its name under this sweep's storage path."""
    from tuner import experiment

    folder, space = earlier
    result = run_cli("sweep", "--space", space, "--max-epochs", "2", "--num-samples", "2", "--warm-start", "first",
                     "--storage-path", folder, "--name", "second-freeze-thaw")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "auto chose freeze-thaw" in result.out
    assert "--warm-start, which freeze-thaw's model of the learning curves does not take" in result.out
    assert "warm start: 5 earlier trial(s) from first seed the searcher" in result.out
    best = experiment.load(str(folder / "first")).best_trial()
    second = experiment.load(str(folder / "second-freeze-thaw"))
    assert best.config in [t.config for t in second.trials]
