"""Every scheduler x searcher pair finishes, at sample counts from 1 to 6, on instant trials and a real Ray.

This is where a sweep that can hang would show: sync brackets holding trials while a searcher waits. The fast
tier runs every scheduler and every searcher once (tests/matrix_cases.py); the slow tier runs the rest. Every
case's decisions are played on the simulated clock in the fast tier too (tests/unit/test_matrix_decisions.py).
"""

from __future__ import annotations

import pytest

from tests.instant import instant_space
from tests.matrix_cases import CASES, ONCE, PAIRS
from tuner import experiment, schedulers, searchers


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
    [pytest.param(*c, marks=() if c in ONCE else pytest.mark.slow) for c in CASES],
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
