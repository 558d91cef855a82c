"""Every form of tests/conformance/forms.py through ``tuner sweep``: planned as searched, run under each scheduler it
applies to, resumed after SIGTERM with every epoch once (under HyperBand where it keeps checkpoints). A real Ray (the session's, tests/conftest.py)."""

from __future__ import annotations

import csv
import dataclasses
import io
import os
import signal
import threading
import time
from pathlib import Path

import pytest

from tests.conformance.forms import FORMS, Form
from tuner import experiment

SAMPLES, EPOCHS = 2, 2


def _plan_line(folder: Path, name: str) -> str:
    for line in (folder / "plan.txt").read_text().splitlines():
        if line.startswith("  ") and line.split()[0] == name:
            return line
    raise AssertionError(f"no plan line for {name}:\n" + (folder / "plan.txt").read_text())


def _chosen(folder: Path) -> str:
    """The searcher ``auto`` chose for the sweep, as its plan says (the forms' plans name optuna)."""
    for line in (folder / "plan.txt").read_text().splitlines():
        if "auto chose " in line:
            return line.split("auto chose ", 1)[1].split(":", 1)[0]
    return "optuna"


def _sweep(run_cli, form: Form, tmp_path: Path, scheduler: str, name: str, sleep: float = 0.0, samples: int = SAMPLES):
    space = form.write(tmp_path, sleep=sleep)
    samples = 1 if form.name == "grid_with_random" else samples  # two grid points each
    return run_cli("sweep", "--space", space, "--scheduler", scheduler, "--num-samples", samples,
                   "--max-epochs", EPOCHS, "--storage-path", tmp_path, "--name", name)  # fmt: skip


def _check_trials(folder: Path, scheduler: str, checkpoints: bool = True) -> None:
    """Every trial ran, each epoch once and in order (as its progress.csv holds them, repeats included: a trial
    without checkpoints starts over when resumed, and then only its last run counts), to its last epoch or to
    where the scheduler stopped it."""
    record = experiment.load(str(folder))
    assert record.trials, "no trial"
    for trial in record.trials:
        text = (Path(trial.path) / "progress.csv").read_text()
        rows = csv.DictReader(io.StringIO(text)) if checkpoints else trial.rows
        epochs = [int(float(r["training_iteration"])) for r in rows]
        assert epochs == list(range(1, len(epochs) + 1)) and epochs, (trial.trial_id, epochs, trial.fate)
        assert trial.status == "TERMINATED", (trial.trial_id, trial.status, trial.fate)
        if scheduler == "pbt" or trial.fate.startswith("ran to max epochs"):
            assert epochs[-1] == EPOCHS, (trial.trial_id, epochs, trial.fate)
    best = record.best_trial()
    assert best is not None and best.config
    # a conditional parameter its branch did not ask is left out, as the trainable had the config (Tune holds
    # it as None); no form here draws None itself
    assert all(None not in t.config.values() for t in record.trials), [t.config for t in record.trials]


@pytest.mark.parametrize("form", [pytest.param(f, marks=pytest.mark.slow) if f.slow else f for f in FORMS
                                  if not f.resumed_only], ids=lambda f: f.name)  # fmt: skip
def test_each_form_is_searched_as_its_plan_says_and_runs_under_asha(run_cli, tmp_path, form):
    result = _sweep(run_cli, form, tmp_path, "asha", "asha")
    assert result.code == 0, result.out[-3000:] + result.err[-3000:]
    folder = tmp_path / "asha"
    chosen = _chosen(folder)
    for name, how in form.plan.items():
        how = how.replace("by optuna", f"by {chosen}")
        assert how in _plan_line(folder, name), _plan_line(folder, name)
    plan = (folder / "plan.txt").read_text()
    assert "not searched" not in plan and "cannot run alone" not in plan, plan
    _check_trials(folder, "asha")
    assert "Traceback" not in result.err, result.err[-3000:]
    if form.checkpoints and form.name.startswith("class_"):  # a checkpoint each epoch: the best epoch has its own
        record = experiment.load(str(folder))
        best = record.best_trial()
        assert best is not None and record.checkpoint_choice(best)[1] is None, record.checkpoint_choice(best)


def test_a_chatty_trainables_lines_and_files_stay_in_its_trial_folder(run_cli, tmp_path):
    """What a trial prints is in its stdout.log, and a file it writes where it runs (as Lightning writes its
    lightning_logs) is copied beside its results from the folder of Ray's session it ran in."""
    chatty = next(f for f in FORMS if f.name == "function_report_dict")
    said = 'print(f"epoch {epoch}: training")'
    writes = said + '; Path("notes.txt").open("a").write(f"epoch {epoch}\\n")'  # a file of its own, where it runs
    form = dataclasses.replace(chatty, source=chatty.source.replace(said, writes))
    result = _sweep(run_cli, form, tmp_path, "fifo", "chatty")
    assert result.code == 0, result.out[-3000:] + result.err[-3000:]
    assert "training" not in result.out + result.err
    for trial in experiment.load(str(tmp_path / "chatty")).trials:
        assert trial.output().splitlines() == [f"epoch {e}: training" for e in range(1, EPOCHS + 1)]
        notes = Path(trial.path) / "notes.txt"
        assert notes.read_text().splitlines() == [f"epoch {e}" for e in range(1, EPOCHS + 1)], trial.path
    listed = run_cli("logs", tmp_path / "chatty")  # how much each trial printed, its state in the review's words
    rows = [row.split() for row in listed.out.splitlines()]
    assert listed.code == 0 and rows[0][:4] == ["TRIAL", "STATE", "STDOUT", "STDERR"], listed.out
    assert [row[1:6] for row in rows[1:-1]] == [["finished", str(EPOCHS), "lines", "0", "lines"]] * SAMPLES, listed.out


@pytest.mark.parametrize(("name", "trainable", "advice"), [
    ("function_report_keywords", "train", "report checkpoints and continue from tune.get_checkpoint() (if it does, "
                                          "where tuner cannot see it, say so: train.checkpoints = True)"),
    ("class_without_checkpoints", "Bowl", "define save_checkpoint(checkpoint_dir) and load_checkpoint(checkpoint_dir) "
                                          "on the class"),
])  # fmt: skip
def test_a_form_without_checkpoints_is_refused_by_a_pausing_scheduler_in_one_line(run_cli, tmp_path, name, trainable,
                                                                                   advice):  # fmt: skip
    form = next(f for f in FORMS if f.name == name)
    result = _sweep(run_cli, form, tmp_path, "hyperband", "refused")
    assert result.code == 2
    assert result.err.strip().splitlines() == [
        f"tuner: error: --scheduler hyperband pauses trials and continues them from their checkpoints, but trainable "
        f"{trainable} does not continue from a checkpoint; {advice}, or choose another scheduler (asha, fifo, median, "
        "freeze-thaw)"
    ]
    assert not (tmp_path / "refused").exists()


def test_with_resources_decides_the_trials_share(run_cli, tmp_path):
    form = next(f for f in FORMS if f.name == "function_with_resources")
    result = run_cli("sweep", "--space", form.write(tmp_path), "--dry-run", "--storage-path", tmp_path)
    assert result.code == 0, result.err[-2000:]
    assert "resources: 2 CPU and 0 GPU per trial; 1 trial(s) at once" in result.out


@pytest.mark.slow  # every form PBT applies to, which copies checkpoints between trials (HyperBand: below)
@pytest.mark.parametrize("form", [f for f in FORMS if "pbt" in f.schedulers], ids=lambda f: f.name)
def test_each_form_runs_under_pbt(run_cli, tmp_path, form):
    result = _sweep(run_cli, form, tmp_path, "pbt", "pbt")
    assert result.code == 0, result.out[-3000:] + result.err[-3000:]
    _check_trials(tmp_path / "pbt", "pbt")


def _signal_after_a_report(folder: Path, signum: int = signal.SIGTERM, after: float = 1.2) -> threading.Thread:
    """Send this process ``signum`` ``after`` seconds past a trial's start (its output file appears at once; Ray's
    own results reach the folder only at its next sync), when its first epoch is in and the sweep's fit runs."""

    def watch() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if any(folder.glob("*/stdout.log")):
                time.sleep(after)
                os.kill(os.getpid(), signum)
                return
            time.sleep(0.05)

    thread = threading.Thread(target=watch, daemon=True)
    thread.start()
    return thread


def _resumed_under(form: Form) -> str:
    """HyperBand where the form keeps checkpoints: its paused trials are continued from them before the signal and
    after the resume, so one sweep runs the form under a pausing scheduler and through a resume. ASHA elsewhere."""
    return "hyperband" if "hyperband" in form.schedulers else "asha"


@pytest.mark.slow  # waits on real time: a signal mid-sweep
@pytest.mark.parametrize("form", FORMS, ids=lambda f: f"{f.name}-{_resumed_under(f)}")
def test_each_form_resumes_after_sigterm_with_every_epoch_once(run_cli, tmp_path, form):
    folder, scheduler = tmp_path / "term", _resumed_under(form)
    watcher = _signal_after_a_report(folder)
    result = _sweep(run_cli, form, tmp_path, scheduler, "term", sleep=0.8, samples=4)
    watcher.join(timeout=5)
    assert result.code == 143, result.out[-3000:] + result.err[-3000:]
    assert f"continue with: tuner resume {folder}" in result.out, result.out[-2000:]
    resumed = run_cli("resume", folder)
    assert resumed.code == 0, resumed.out[-3000:] + resumed.err[-3000:]
    # a step cut short by the signal runs again from the last checkpoint, so each epoch is still in once
    _check_trials(folder, scheduler, checkpoints=form.checkpoints)
