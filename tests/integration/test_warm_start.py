"""--warm-start: an earlier sweep's trials seed the searcher of a new one."""

from __future__ import annotations

import pytest

from tests.instant import instant_space

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


@pytest.mark.parametrize("searcher", ["optuna", "bayesopt"])
def test_a_second_sweep_starts_from_the_first_ones_trials(run_cli, earlier, searcher):
    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--searcher", searcher, "--num-samples", "2",
                     "--warm-start", folder / "first", "--storage-path", folder, "--name", f"second-{searcher}")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "warm start: 5 earlier trial(s) from first seed the searcher" in result.out


def test_a_searcher_that_cannot_take_earlier_results_is_refused(run_cli, earlier):
    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--searcher", "hyperopt", "--warm-start", folder / "first",
                     "--storage-path", folder, "--name", "refused")  # fmt: skip
    assert result.code == 2 and "searcher hyperopt cannot take earlier results; use one that can: optuna" in result.err
    assert not (folder / "refused").exists()


def test_an_earlier_sweep_of_another_metric_is_refused(run_cli, earlier):
    folder, space = earlier
    result = run_cli("sweep", "--space", space, *FIFO, "--metric", "accuracy", "--mode", "max",
                     "--warm-start", folder / "first", "--storage-path", folder, "--name", "other-metric")  # fmt: skip
    assert result.code == 2 and "it optimised loss (min), this sweep optimises accuracy (max)" in result.err
