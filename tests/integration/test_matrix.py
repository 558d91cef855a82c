"""Every scheduler x searcher pair finishes, at sample counts from 1 to 6, on instant trials (fast tier).

This is where a sweep that can hang would show: sync brackets holding trials while a searcher waits.
"""

from __future__ import annotations

import pytest

from tests.instant import instant_space
from tuner import schedulers, searchers
from tuner.review import experiment

PAIRS = [
    (scheduler, searcher)
    for scheduler in schedulers.NAMES
    for searcher in searchers.NAMES
    if schedulers.REGISTRY[scheduler].requires_searcher in (None, searcher)
    and searchers.REGISTRY[searcher].requires_scheduler in (None, scheduler)
]


def _counts(index: int) -> tuple[int, ...]:
    """Sample counts per pair, together covering 1 to 6: three for schedulers that hold trials in brackets
    (where a count that leaves a bracket short used to hang), one for the others."""
    if schedulers.REGISTRY[PAIRS[index][0]].pauses_trials:
        return (1 + index % 2, 3 + index % 2, 5 + index % 2)
    return (1 + index % 6,)


CASES = [(s, r, n) for i, (s, r) in enumerate(PAIRS) for n in _counts(i)]


def test_the_matrix_covers_every_registered_algorithm():
    assert {s for s, _ in PAIRS} == set(schedulers.NAMES)
    assert {r for _, r in PAIRS} == set(searchers.NAMES)
    assert {n for _, _, n in CASES} == {1, 2, 3, 4, 5, 6}


@pytest.mark.parametrize("scheduler, searcher, num_samples", CASES)
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
