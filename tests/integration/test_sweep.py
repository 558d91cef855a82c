"""Real sweeps on a real local Ray: every scheduler x searcher pair, outputs, resume, user spaces."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from tests.faults import faulty_space
from tests.integration.conftest import read_best
from tuner import experiment

pytestmark = pytest.mark.slow


@pytest.mark.parametrize("scheduler", ["asha", "hyperband", "bohb", "pbt", "median"])
def test_each_scheduler_runs_the_seed_space_to_a_best_config(sweep, scheduler):
    result = sweep("--space", "cifar_small", "--scheduler", scheduler, "--num-samples", "3")
    assert result.code == 0, result.err[-3000:]
    best = read_best(result.folder)
    assert best["trials"] == 3 and not best["failed"]
    assert set(best["config"]) == {"l1", "l2", "lr", "batch_size"}
    assert best["config"]["batch_size"] in (2, 4, 8, 16) and 1e-4 <= best["config"]["lr"] <= 1e-1
    assert best["checkpoint"] and (result.folder / best["checkpoint"]).exists()
    assert f"best trial: {best['best_trial']}" in result.out
    assert {t.status for t in experiment.load(str(result.folder)).trials} == {"TERMINATED"}
    saved = yaml.safe_load((result.folder / "tuner_config.yaml").read_text())
    assert (saved["scheduler"], saved["objectives"], saved["gpus_per_trial"]) == (scheduler, {"loss": "min"}, 0.0)


def test_hyperband_with_bayesopt_at_four_samples_ends(run_cli, tmp_path):
    """Once left 1 trial PAUSED and 2 never created for ever: BayesOpt waited for results HyperBand held."""
    result = run_cli("sweep", "--space", "cifar_small", "--dataset", "synthetic", "--synthetic-size", "300",
                     "--num-samples", "4", "--max-epochs", "2", "--gpus-per-trial", "0", "--seed", "0",
                     "--scheduler", "hyperband", "--searcher", "bayesopt", "--storage-path", tmp_path,
                     "--name", "hb-bo")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    assert [t.status for t in experiment.load(str(tmp_path / "hb-bo")).trials] == ["TERMINATED"] * 4


def test_output_shows_the_search_plan_then_the_cli_reporter_table(sweep):
    result = sweep("--space", "cifar_small", "--searcher", "hyperopt", "--num-samples", "2")
    assert result.code == 0, result.err[-3000:]
    out = result.out
    assert "l1          sample_from(fn)          probed: 7 values 4…256, searched by hyperopt as an ordered choice" in out
    assert "lr          loguniform(0.0001, 0.1)  searched by hyperopt in log space" in out
    headers = [line for line in out.splitlines() if line.startswith("| trial ")]
    assert headers, out
    header = headers[-1]
    for column in ("state", "l1", "l2", "lr", "batch_size", "loss", "accuracy", "epoch"):
        assert f" {column} " in header
    assert out.index("search plan") < out.index("| trial ")
    assert "Number of trials: 2/2 (2 finished)" in out


def test_tensorboard_event_files_hold_loss_and_accuracy(sweep):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    result = sweep("--space", "cifar_small", "--scheduler", "fifo", "--num-samples", "1")
    assert result.code == 0, result.err[-3000:]
    events = list(result.folder.glob("*/events.out.tfevents.*"))
    assert len(events) == 1
    acc = EventAccumulator(str(events[0].parent)).Reload()
    tags = acc.Tags()["scalars"]
    loss = [(e.step, e.value) for e in acc.Scalars("loss")]
    accuracy = [e.value for e in acc.Scalars("accuracy")]
    assert [step for step, _ in loss] == [1, 2] and len(accuracy) == 2, tags  # one point per epoch, at its epoch
    assert all(0 <= a <= 1 for a in accuracy)
    assert not [t for t in tags if t.startswith("ray/") or t in ("done", "iterations_since_restore")], tags


def test_a_crashed_trial_resumes_from_its_checkpoint(sweep, tmp_path):
    marker = tmp_path / "fired"
    space = faulty_space(tmp_path / "faulty.py",
                         f"{{'lr': 0.01, 'batch_size': 8, 'l1': 16, 'l2': 16, 'fault': 'crash@2:{marker}'}}")  # fmt: skip
    result = sweep("--space", space, "--searcher", "random", "--scheduler", "fifo", "--num-samples", "1",
                   "--max-epochs", "3", "--max-failures", "1")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    assert marker.exists(), "the fault must have fired"
    progress = pd.read_csv(next(result.folder.glob("*/progress.csv")))
    # Epoch 1 ran once; after the crash the trial went on from its epoch-1 checkpoint, not from scratch.
    assert progress["epoch"].tolist() == [1, 2, 3]
    assert read_best(result.folder)["failed"] == []


def test_user_space_file_with_its_own_trainable(sweep, tmp_path):
    space = tmp_path / "quadratic.py"
    space.write_text(
        '"""A user space whose trainable lives in the same file."""\n'
        "from ray import tune\n"
        "from tuner import SearchSpace\n\n"
        "def objective(config):\n"
        "    for step in range(3):\n"
        "        tune.report({'score': -(config['x'] - 2.0) ** 2 + step})\n\n"
        "SPACE = SearchSpace(trainable=objective, metric='score', mode='max',\n"
        "                    params={'x': tune.uniform(0.0, 4.0)})\n"
    )
    result = sweep("--space", space, "--searcher", "hyperopt", "--scheduler", "fifo", "--num-samples", "4")
    assert result.code == 0, result.err[-3000:]
    best = read_best(result.folder)
    # its loop has 3 steps; --max-epochs 2 ends it at the second, as the plan promised ("up to 2 each")
    assert best["metric"] == "score" and best["trials"] == 4 and best["best_epoch"] == 2
    assert "data:" not in result.out  # the dataset is loaded only for trainables that ask for it


def test_a_metric_the_trainable_never_reports_stops_with_the_names_it_did_and_leaves_nothing(sweep):
    result = sweep("--space", "cifar_small", "--metric", "val_acc", "--mode", "max", "--num-samples", "1")
    assert result.code == 2
    assert "has no metric 'val_acc'; it reports: " in result.err and "accuracy" in result.err and "loss" in result.err
    assert "pass --metric with one of those" in result.err
    assert "Traceback" not in result.err, result.err[-2000:]
    assert not result.folder.exists()  # bad input changes nothing: the same name is free for the fixed sweep


@pytest.mark.parametrize(
    "flags, message",
    [
        (("--gpus-per-trial", "1"), "asks for a GPU but the cluster has none"),
        (("--gpus-per-trial", "0.5"), "asks for a GPU but the cluster has none"),
        (("--cpus-per-trial", "3"), "a trial needs 3 CPUs on one node, but the largest node has 2 CPUs"),
    ],
)
def test_resources_the_cluster_cannot_give_fail_before_any_trial(sweep, flags, message):
    result = sweep("--space", "cifar_small", "--num-samples", "1", *flags)
    assert result.code == 2 and message in result.err
    assert not list(result.folder.glob("*/progress.csv"))


def test_the_default_one_trial_at_a_time_without_checkpoints_runs_every_trial(run_cli, tmp_path):
    """Freeze-thaw stops trials of a loop that keeps no checkpoints; with one at a time nothing is left to run
    when it does, and Tune then waits on the searcher alone: the new trial must come without the scheduler
    being asked first (once it did not, and the sweep ended as stalled after 7 of 20 trials)."""
    space = tmp_path / "no_checkpoints.py"
    space.write_text(
        "from ray import tune\n"
        "from tuner import SearchSpace\n\n"
        "def train(config):\n"
        "    for epoch in range(1, 13):\n"
        "        tune.report({'loss': (config['x'] - 0.3) ** 2 + 1.0 / epoch})\n\n"
        "SPACE = SearchSpace(trainable=train, metric='loss', mode='min', params={'x': tune.uniform(0, 1)})\n"
    )
    result = run_cli("sweep", "--space", space, "--num-samples", "20", "--max-epochs", "12", "--cpus-per-trial", "2",
                     "--storage-path", tmp_path, "--name", "one", "--stall-timeout", "30")  # fmt: skip
    assert result.code == 0 and "stalled" not in result.out, result.out[-3000:]
    record = experiment.load(str(tmp_path / "one"))
    assert len(record.trials) == 20 and record.fate_counts().get("stopped early by freeze-thaw", 0) > 0


PERIODIC_CHECKPOINTS = '''"""Checkpoints every third epoch, as Ray's docs write it: a function trainable keeps only what it reports."""
import json
import os
import tempfile

from ray import tune

from tuner import SearchSpace


def train(config):
    start = 0
    checkpoint = tune.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            start = json.load(open(os.path.join(folder, "state.json")))["step"] + 1
    for step in range(start, 12):
        metrics = {"loss": 1.0 / (1 + (step + 1) * config["lr"]) + config["off"]}
        if step % 3 == 2:
            with tempfile.TemporaryDirectory() as folder:
                json.dump({"step": step}, open(os.path.join(folder, "state.json"), "w"))
                tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(folder))
        else:
            tune.report(metrics)


SPACE = SearchSpace(trainable=train, metric="loss", mode="min",
                    params={"lr": tune.loguniform(1e-2, 10), "off": tune.uniform(0, 0.5)})
'''


def test_freeze_thaw_pauses_a_function_trainable_only_where_it_reported_a_checkpoint(run_cli, tmp_path):
    """Paused where it had saved nothing, a trial was continued from its last checkpoint (or its first epoch)
    and ran those epochs again, while the review counted them once: a pause waits for an epoch it saved."""
    space = tmp_path / "periodic.py"
    space.write_text(PERIODIC_CHECKPOINTS)
    result = run_cli("sweep", "--space", space, "--num-samples", "8", "--max-epochs", "9", "--storage-path", tmp_path,
                     "--name", "periodic")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    record = experiment.load(str(tmp_path / "periodic"))
    paused = [r["epoch"] for t in record.trials for r in t.rungs if r.get("verdict") == "paused"]
    assert paused and all(epoch % 3 == 0 for epoch in paused), paused  # only where it saved
    for trial in record.trials:
        epochs = [int(float(r["training_iteration"])) for r in trial.rows]
        assert epochs == list(range(1, len(epochs) + 1)), (trial.trial_id, epochs)  # no epoch run twice
    spent = json.loads((tmp_path / "periodic" / "spent.json").read_text())
    assert spent["epochs"] == sum(trial.epochs for trial in record.trials)
