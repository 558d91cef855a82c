"""The Python API: tuner.sweep and tuner.load as a notebook uses them, on a real local Ray."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

import tuner


def _train(config, *, max_epochs=3):
    from ray import tune

    for epoch in range(1, max_epochs + 1):
        # "epoch" counted from 0, as Lightning's trainer.current_epoch is
        tune.report({"loss": (config["lr"] - 0.01) ** 2 + 1.0 / epoch, "accuracy": epoch / 10, "epoch": epoch - 1})


@pytest.fixture(scope="module")
def swept(tmp_path_factory):
    folder = tmp_path_factory.mktemp("api")
    exp = tuner.sweep(_space(), scheduler="fifo", num_samples=4, max_epochs=3, storage_path=str(folder), name="nb")
    return folder, exp


def _space():
    from ray import tune

    return tuner.SearchSpace(trainable=_train, params={"lr": tune.loguniform(1e-4, 1e-1), "wd": tune.choice([0.0, 0.1])})


def test_a_sweep_from_python_returns_its_experiment_as_dataframes(swept):
    folder, exp = swept
    assert exp.path == str(folder / "nb") and exp.metric == "loss" and exp.mode == "min"
    trials = exp.trials
    assert len(trials) == 4 and list(trials.columns[:3]) == ["trial_id", "lr", "wd"]
    assert {"best_loss", "last_loss", "best_epoch", "epochs", "status", "fate"} <= set(trials.columns)
    assert trials["best_loss"].is_monotonic_increasing  # best first
    assert "accuracy_at_best" in trials.columns  # the other metrics at the epoch the best came at
    front = exp.pareto  # one objective: a front of one dimension, the best trial at its best epoch
    assert list(front["trial_id"]) == [trials["trial_id"][0]] and front["loss"][0] == trials["best_loss"][0]
    history = exp.history
    assert len(history) == 12 and list(history.columns[:4]) == ["trial_id", "epoch", "seconds", "trial_seconds"]
    assert sorted(history["epoch"].unique()) == [1, 2, 3] and "accuracy" in history.columns
    assert (history["reported_epoch"] == history["epoch"] - 1).all()  # the trainable's own, kept beside tuner's


def test_best_and_the_report_agree_with_what_the_cli_writes(swept):
    folder, exp = swept
    saved = json.loads((folder / "nb" / "best_config.json").read_text())
    assert exp.best.trial_id == saved["best_trial"] and exp.best.value == pytest.approx(saved["best_value"])
    assert exp.best.epoch == 3 and exp.best.config == saved["config"]
    page = exp.report()
    assert page.endswith("report.html") and "<html" in open(page).read()


def test_the_same_name_again_is_refused_without_a_resume_no_shell_could_run(swept):
    """A SearchSpace object lives in the notebook: the refusal pointed at 'tuner resume', which then failed."""
    folder, exp = swept
    before = sorted(p.name for p in (folder / "nb").iterdir())
    with pytest.raises(tuner.UsageError) as caught:
        tuner.sweep(_space(), scheduler="fifo", num_samples=4, max_epochs=3, storage_path=str(folder), name="nb")
    assert str(caught.value) == (f"experiment nb already exists in {folder}; pass another name (--name; a sweep "
                                 "never writes into an existing one)")  # fmt: skip
    assert sorted(p.name for p in (folder / "nb").iterdir()) == before


def test_load_opens_the_same_experiment(swept):
    folder, exp = swept
    again = tuner.load(str(folder / "nb"))
    assert again.trials["trial_id"].tolist() == exp.trials["trial_id"].tolist()
    assert again.settings["scheduler"] == "fifo" and again.settings["num_samples"] == 4


@pytest.mark.parametrize(
    "call, fragment",
    [(lambda: tuner.sweep("cifar_small", schedular="asha"), "unknown setting 'schedular'; did you mean scheduler?"),
     (lambda: tuner.sweep("no_such_space"), "unknown space 'no_such_space'"),
     (lambda: tuner.sweep(42), "takes a space name, a .py path, a module or a SearchSpace"),
     (lambda: tuner.load("/no/such/experiment"), "unknown experiment"),
     (lambda: tuner.sweep("cifar_small", num_samples=0, dry_run=True), "--num-samples must be at least 1")],
)  # fmt: skip
def test_bad_calls_raise_the_clis_usage_errors(call, fragment):
    with pytest.raises(tuner.UsageError) as caught:
        call()
    assert fragment in str(caught.value)


def test_importing_tuner_stays_light():
    code = "import sys, tuner; print(sorted(m for m in ('ray', 'torch', 'pandas') if m in sys.modules))"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "[]"
