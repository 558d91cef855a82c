"""Every scheduler x searcher pair finishes, with every trial done, on instant trials and a real Ray.

This is where a sweep that can hang would show: brackets holding paused trials while a searcher waits, at a
sample count that leaves one short. The fast tier runs every scheduler and every searcher once
(tests/matrix_cases.py); the slow tier runs the other cases of the schedulers that pause trials (freeze-thaw and
HyperBand at every count from 1 to 6, BOHB at 1, 3 and 5). Every case's decisions, those of the schedulers that
never pause a trial included, are played on the simulated clock in the fast tier
(tests/unit/test_matrix_decisions.py), and every pair keeps the scheduler contract there
(tests/unit/test_scheduler_contract.py); PBT, which replay refuses, runs here in the fast tier.
"""

from __future__ import annotations

import pytest

from tests.instant import instant_space
from tests.matrix_cases import CASES, ONCE, PAIRS
from tuner import experiment, schedulers, searchers

# On a real Ray: each algorithm once (fast), and every case of a scheduler that pauses trials (slow)
REAL = [c for c in CASES if c in ONCE or schedulers.REGISTRY[c[0]].pauses_trials]


def test_the_matrix_covers_every_registered_algorithm():
    assert {s for s, _ in PAIRS} == set(schedulers.NAMES)
    assert {r for _, r in PAIRS} == set(searchers.NAMES)
    assert {n for _, _, n in CASES} == {1, 2, 3, 4, 5, 6}
    assert {n for s, _, n in CASES if s == "hyperband"} == {1, 2, 3, 4, 5, 6}  # odd and even, in brackets
    # the fast tier alone still runs every algorithm on a real Ray
    assert {s for s, _, _ in ONCE} == set(schedulers.NAMES) and {r for _, r, _ in ONCE} == set(searchers.NAMES)
    assert set(ONCE) <= set(CASES)


@pytest.mark.parametrize(
    "scheduler, searcher, num_samples",
    [pytest.param(*c, marks=() if c in ONCE else pytest.mark.slow) for c in REAL],
)
def test_every_pair_finishes_with_every_trial_done(run_cli, tmp_path, scheduler, searcher, num_samples):
    name = f"{scheduler}-{searcher}-{num_samples}"
    result = run_cli("sweep", "--space", instant_space(tmp_path), "--scheduler", scheduler, "--searcher", searcher,
                     "--num-samples", num_samples, "--max-epochs", "4", "--cpus-per-trial", "1",
                     "--storage-path", tmp_path, "--name", name, "--stall-timeout", "30")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    record = experiment.load(str(tmp_path / name))
    assert len(record.trials) == num_samples
    assert {t.status for t in record.trials} == {"TERMINATED"}
    assert record.best_trial() is not None and "stalled" not in result.out
