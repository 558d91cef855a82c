"""Every scheduler x searcher pair finishes, at sample counts from 1 to 6, on instant trials.

This is where a sweep that can hang would show: sync brackets holding trials while a searcher waits. The fast
tier runs a cover of the matrix (every scheduler and every searcher in at least one pair, every count from 1
to 6); the slow tier runs the rest.
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


def _cover() -> set[tuple[str, str]]:
    """The pairs that bring a scheduler or a searcher no earlier pair had, and for a scheduler that holds
    trials in brackets, two pairs (odd and even counts: a bracket left short is where sweeps used to hang)."""
    seen: set[str] = set()
    cover: set[tuple[str, str]] = set()
    for scheduler, searcher in PAIRS:
        held = schedulers.REGISTRY[scheduler].pauses_trials
        if scheduler not in seen or searcher not in seen or (held and sum(s == scheduler for s, _ in cover) < 2):
            cover.add((scheduler, searcher))
            seen |= {scheduler, searcher}
    return cover


COVER = _cover()
CASES = [(s, r, n) for i, (s, r) in enumerate(PAIRS) for n in _counts(i)]
FAST = [c for c in CASES if c[:2] in COVER]


def test_the_matrix_covers_every_registered_algorithm():
    assert {s for s, _ in PAIRS} == set(schedulers.NAMES)
    assert {r for _, r in PAIRS} == set(searchers.NAMES)
    assert {n for _, _, n in CASES} == {1, 2, 3, 4, 5, 6}
    # the fast tier alone still runs every algorithm, every count, and odd and even counts in brackets
    assert {s for s, _, _ in FAST} == set(schedulers.NAMES) and {r for _, r, _ in FAST} == set(searchers.NAMES)
    assert {n for _, _, n in FAST} == {1, 2, 3, 4, 5, 6}
    assert {n for s, _, n in FAST if s == "hyperband"} == {1, 2, 3, 4, 5, 6}


@pytest.mark.parametrize(
    "scheduler, searcher, num_samples",
    [pytest.param(*c, marks=() if c in FAST else pytest.mark.slow) for c in CASES],
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
