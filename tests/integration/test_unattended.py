"""Sweeps left alone end on their own: hung trials stop, budgets hold, signals stop in order, one writer."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.instant import instant_space
from tuner import experiment

FIFO = ("--scheduler", "fifo", "--searcher", "random")


def _epochs(folder) -> dict[str, list[int]]:
    return {t.trial_id: [int(float(r["epoch"])) for r in t.rows] for t in experiment.load(str(folder)).trials}


@pytest.mark.slow  # waits on real time: timeouts, a budget, a signal to a subprocess
def test_a_hung_trial_ends_within_its_timeout_while_the_others_finish(sweep, tmp_path):
    space = instant_space(tmp_path, hang_at=2, sleep=0.2)
    started = time.monotonic()
    result = sweep("--space", space, *FIFO, "--num-samples", "3", "--max-epochs", "3", "--trial-timeout", "6")
    assert time.monotonic() - started < 90
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "trial timeout: a trial silent for 6 s is stopped as hung" in result.out
    trials = experiment.load(str(result.folder)).trials
    hung = [t for t in trials if t.status == "ERROR"]
    assert len(hung) == 1 and hung[0].fate.startswith("hung: no report for 6 s after epoch 1"), [t.fate for t in trials]
    assert all(t.fate == "ran to max epochs (3)" for t in trials if t is not hung[0])
    assert f"failed: {hung[0].trial_id}: hung: no report for" in result.out and "1 hung" in result.out
    assert "in your code" not in result.err  # the reason is the sweep's, not a traceback of Ray's


@pytest.mark.slow  # waits on real time: timeouts, a budget, a signal to a subprocess
def test_a_hung_trial_is_retried_from_its_checkpoint(sweep, tmp_path):
    space = instant_space(tmp_path, hang_at=2, sleep=0.2)
    result = sweep("--space", space, *FIFO, "--num-samples", "2", "--max-epochs", "3", "--trial-timeout", "6",
                   "--max-failures", "1")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert all(epochs == [1, 2, 3] for epochs in _epochs(result.folder).values())  # none lost, none twice
    fates = [t.fate for t in experiment.load(str(result.folder)).trials]
    assert any("retried after hung: no report for" in f for f in fates), fates
    assert not any("run again after" in f for f in fates), fates  # the hang says it once


def test_an_epoch_budget_holds_and_resume_extends_it(sweep, run_cli, tmp_path):
    space = instant_space(tmp_path)
    result = sweep("--space", space, *FIFO, "--budget", "10ep", "--max-epochs", "4")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "budget: 10 epochs, counted as the epochs of all trials together" in result.out
    spent = sum(len(e) for e in _epochs(result.folder).values())
    assert 10 <= spent <= 10 + 2, spent  # at most one epoch more per trial running at once
    assert "the sweep ended on it" in result.out and "ended by the budget" in result.out

    refused = run_cli("resume", result.folder)
    assert refused.code == 2 and "has spent its budget (10 epochs); extend it with --budget +AMOUNT (e.g. --budget +100ep)" in refused.err

    extended = run_cli("resume", result.folder, "--budget", "+6ep")
    assert extended.code == 0, extended.out[-2000:] + extended.err[-2000:]
    total = sum(len(e) for e in _epochs(result.folder).values())
    assert spent + 6 <= total <= spent + 6 + 2, (spent, total)
    assert json.loads((result.folder / "spent.json").read_text())["epochs"] >= spent + 6


@pytest.mark.slow  # waits on real time: timeouts, a budget, a signal to a subprocess
def test_a_wall_time_budget_ends_the_sweep_on_time(sweep, tmp_path):
    space = instant_space(tmp_path, sleep=0.5)
    result = sweep("--space", space, *FIFO, "--budget", "8s", "--max-epochs", "50")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    spent = json.loads((result.folder / "spent.json").read_text())
    assert spent["ended_by_budget"] and 8 <= spent["wall"] < 11, spent
    fates = [t.fate for t in experiment.load(str(result.folder)).trials]
    # A trial the searcher proposed just before the end may not have reported yet.
    assert all(f.startswith(("ended by the budget at epoch", "never started: the budget was spent first")) for f in fates)
    assert "Failed to fetch metrics" not in result.err  # Ray's warning about such a trial is not the user's concern


@pytest.mark.slow  # a signal to a trial
def test_a_trial_killed_by_a_signal_is_named(sweep, tmp_path):
    for name, signal_name, expected in (("segv", "SIGSEGV", "died: killed by SIGSEGV (segmentation fault) in epoch 2"),
                                        ("kill", "SIGKILL", "died: killed by SIGKILL in epoch 2")):  # fmt: skip
        space = instant_space(tmp_path, signal_at=2, signal=signal_name, name=f"{name}.py")
        result = sweep("--space", space, *FIFO, "--num-samples", "2", "--max-epochs", "2", name=name)
        assert result.code == 0, result.out[-2000:] + result.err[-2000:]
        died = [t for t in experiment.load(str(result.folder)).trials if t.status == "ERROR"]
        assert len(died) == 1 and died[0].fate.startswith(expected), died[0].fate
        assert f"failed: {died[0].trial_id}: {expected}" in result.out
        assert "received at time=" not in result.err and "A worker died or was killed" not in result.out + result.err
    assert "Fatal Python error: Segmentation fault" in next(Path(tmp_path, "segv").glob("*/crash.txt")).read_text()


def test_a_nan_metric_is_shown_and_never_ranked(sweep, run_cli, tmp_path):
    space = instant_space(tmp_path, nan_at=2)
    result = sweep("--space", space, *FIFO, "--num-samples", "2", "--max-epochs", "2")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "loss was nan at epoch 2 (such values are never ranked)" in result.out
    rows = json.loads(run_cli("results", result.folder, "--format", "json").out)
    assert all(row["best_loss"] is not None and row["best_loss"] == row["best_loss"] for row in rows)
    table = run_cli("results", result.folder).out
    assert "nan" in table and "loss was nan at epoch 2" in table


@pytest.mark.slow  # a signal-stopped sweep; the fast tier resumes (test_relocation)
def test_a_sweep_stopped_before_its_first_trial_resumes_afresh(run_cli, tmp_path):
    """A signal before any trial leaves only the saved settings; the resume command it printed still works."""
    from tuner.launch.resolve import resolve
    from tuner.settings import save_config

    space = instant_space(tmp_path)
    config = resolve({"space": str(space), "scheduler": "fifo", "searcher": "random", "num_samples": 2,
                      "max_epochs": 2, "storage_path": str(tmp_path), "name": "early"})  # fmt: skip
    (tmp_path / "early").mkdir()
    save_config(config, tmp_path / "early")  # what a sweep stopped at once, before its first trial, leaves
    result = run_cli("resume", tmp_path / "early")
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert "stopped before its first trial: starting it afresh with its saved settings" in result.out
    assert sorted(map(len, _epochs(tmp_path / "early").values())) == [2, 2]
