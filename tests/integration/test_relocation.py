"""An experiment moved or copied elsewhere is reviewed, resumed and grown where it lies, and its old folder is
never written again."""

from __future__ import annotations

import hashlib
import shutil
from pathlib import Path

import pytest

from tests.instant import instant_space
from tuner import experiment


def _digest(folder: Path) -> dict[str, str]:
    return {str(p.relative_to(folder)): hashlib.sha1(p.read_bytes()).hexdigest()
            for p in sorted(folder.rglob("*")) if p.is_file()}  # fmt: skip


def _first_sweep(run_cli, tmp_path: Path, *scheduler: str) -> Path:
    space = instant_space(tmp_path)
    result = run_cli("sweep", "--space", space, "--num-samples", 4, "--max-epochs", 3, *scheduler, "--storage-path",
                     tmp_path / "made", "--name", "exp")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    return tmp_path / "made" / "exp"


@pytest.mark.slow  # growing; the fast tier resumes (test_a_resumed_asha_keeps_the_rungs_it_had)
def test_a_moved_experiment_is_reviewed_and_grown_where_it_lies(run_cli, tmp_path):
    made = _first_sweep(run_cli, tmp_path)
    moved = tmp_path / "archive" / "kept"
    moved.parent.mkdir()
    shutil.move(made, moved)
    assert run_cli("results", moved).code == 0 and run_cli("report", moved).code == 0
    grown = run_cli("resume", moved, "--num-samples", 6)
    assert grown.code == 0, grown.out[-3000:] + grown.err[-3000:]
    record = experiment.load(str(moved))
    assert len(record.trials) == 6 and all(t.rows for t in record.trials), [(t.trial_id, t.fate) for t in record.trials]
    assert all(Path(t.path).parent == moved for t in record.trials)
    assert not made.exists(), "the old folder was written again"
    assert "growing the sweep to 6 trials: 2 more" in grown.out


@pytest.mark.slow  # growing; the fast tier resumes
def test_a_copied_experiment_grows_and_leaves_the_original_as_it_was(run_cli, tmp_path):
    made = _first_sweep(run_cli, tmp_path)
    before = _digest(made)
    copy = tmp_path / "copy"
    shutil.copytree(made, copy)
    grown = run_cli("resume", copy, "--num-samples", 6)
    assert grown.code == 0, grown.out[-3000:] + grown.err[-3000:]
    assert len(experiment.load(str(copy)).trials) == 6
    assert _digest(made) == before, "the original changed"
    assert len(experiment.load(str(made)).trials) == 4


def test_a_resumed_asha_keeps_the_rungs_it_had(run_cli, tmp_path):
    """Tune saves no scheduler state; the comparisons written down put ASHA's rungs back when a sweep resumes."""
    made = _first_sweep(run_cli, tmp_path, "--scheduler", "asha")
    first = run_cli("results", made)
    assert first.code == 0
    grown = run_cli("resume", made, "--num-samples", 7)
    assert grown.code == 0, grown.out[-3000:] + grown.err[-3000:]
    cutoffs = [line for line in grown.out.splitlines() if line.startswith("rung cutoffs")]
    assert cutoffs and "epoch 1: -" not in cutoffs[0], cutoffs[:2]


@pytest.mark.slow  # growing; the fast tier resumes
def test_a_grown_hyperband_sweep_runs_its_new_trials_without_waiting_on_the_finished_ones(run_cli, tmp_path):
    """Tune hands a resumed scheduler every trial it restores, finished ones too; a HyperBand bracket holding
    those waited for ever for results that never come, and the stall guard ended the grown sweep after a minute."""
    space = instant_space(tmp_path)
    made = run_cli("sweep", "--space", space, "--scheduler", "hyperband", "--num-samples", 4, "--max-epochs", 4,
                   "--storage-path", tmp_path, "--name", "hb", "--stall-timeout", 20)  # fmt: skip
    assert made.code == 0, made.out[-2000:] + made.err[-2000:]
    grown = run_cli("resume", tmp_path / "hb", "--num-samples", 6)
    assert grown.code == 0 and "stalled" not in grown.out, grown.out[-3000:] + grown.err[-3000:]
    record = experiment.load(str(tmp_path / "hb"))
    assert len(record.trials) == 6 and {t.status for t in record.trials} == {"TERMINATED"}
