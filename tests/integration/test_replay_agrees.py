"""A replay decides as a sweep does: the same table run for real and replayed, one trial at a time.

One trial at a time (each takes both CPUs of the test Ray) fixes the order results arrive in, so the real
sweep and the replay must agree on every config, every trial's epochs and every stop with its reason.
"""

from __future__ import annotations

import pytest

from tests.table_space import write_table_space
from tuner import experiment
from tuner.objectives import LOSS
from tuner.replay.engine import replay
from tuner.replay.setup import build

EPOCHS, TRIALS, SEED = 8, 12, 3


def _real(run_cli, tmp_path, scheduler: str, searcher: str) -> list[tuple[str, int, str]]:
    space, _ = write_table_space(tmp_path)
    result = run_cli("sweep", "--space", space, "--scheduler", scheduler, "--searcher", searcher, "--seed", SEED,
                     "--num-samples", TRIALS, "--max-epochs", EPOCHS, "--cpus-per-trial", 2,
                     "--storage-path", tmp_path, "--name", scheduler)  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    record = experiment.load(str(tmp_path / scheduler))
    return [(_key(t.config), t.epochs, _stop(t.fate)) for t in record.trials]  # in the order Tune made them


def _replayed(tmp_path, scheduler: str, searcher: str) -> list[tuple[str, int, str]]:
    from ray import tune

    from tests.table_space import GRID

    _, table = write_table_space(tmp_path)
    params = {name: tune.choice(values) for name, values in GRID.items()}
    algorithms = build(params, scheduler, searcher, objectives=LOSS, max_epochs=EPOCHS,
                       num_samples=TRIALS, seed=SEED, workers=1)  # fmt: skip
    outcome = replay(table, algorithms, workers=1, metric="loss", mode="min", num_samples=TRIALS, max_epochs=EPOCHS)
    assert not outcome.stalled
    return [(_key(t.config), t.epochs, _stop(t.fate)) for t in outcome.trials]


def _key(config: dict) -> str:
    return ",".join(f"{k}={config[k]}" for k in sorted(config))


def _stop(fate: str) -> str:
    return fate if fate.startswith(("stopped early", "paused")) else ""


@pytest.mark.slow  # the fast tier decides on the simulated clock (tests/unit/test_matrix_decisions.py)
@pytest.mark.parametrize(
    "scheduler, searcher",
    [("asha", "random"), ("hyperband", "random"), ("median", "random"), ("fifo", "random"), ("asha", "cqr"),
     ("freeze-thaw", "curves"), ("freeze-thaw", "random")],
)
def test_a_replay_makes_the_same_decisions_as_the_sweep(run_cli, tmp_path, scheduler, searcher):
    real = _real(run_cli, tmp_path, scheduler, searcher)
    replayed = _replayed(tmp_path, scheduler, searcher)
    assert len(real) == TRIALS
    assert replayed == real, "\n".join(map(str, real)) + "\n---\n" + "\n".join(map(str, replayed))
    if scheduler != "fifo":
        assert any(stop for _, _, stop in real), "the table should make the scheduler stop something"
