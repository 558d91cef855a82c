"""A Ray Train TorchTrainer in each trial, written as Ray Train's guide to tuning writes it (a driver function,
``TuneReportCallback``), swept on 2 CPUs: each trial's one worker finds a CPU, and a trial the sweep ends before
its trainer is done frees its worker for the next."""

from __future__ import annotations

import json

import pytest

SPACE = '''
import os
import tempfile

import ray.train
import ray.train.torch
import torch
from ray import tune
from ray.train.torch import TorchTrainer
from ray.tune.integration.ray_train import TuneReportCallback

from tuner import SearchSpace

STORAGE = {storage!r}


def train_fn_per_worker(config):
    torch.manual_seed(0)
    x = torch.randn(128, 8)
    y = (x.sum(1, keepdim=True) > 0).float()
    model = ray.train.torch.prepare_model(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for epoch in range(3):  # one more than the sweep's --max-epochs: the sweep ends each trial first
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        optimizer.step()
        with tempfile.TemporaryDirectory() as folder:
            torch.save(model.state_dict(), os.path.join(folder, "model.pt"))
            ray.train.report({{"loss": loss.item(), "epoch": epoch}}, checkpoint=ray.train.Checkpoint.from_directory(folder))


def train_driver_fn(config):
    trainer = TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ray.train.ScalingConfig(num_workers=1, use_gpu=False),
        run_config=ray.train.RunConfig(
            name=f"train-trial_id={{tune.get_context().get_trial_id()}}", storage_path=STORAGE,
            callbacks=[TuneReportCallback()],
        ),
    )
    trainer.fit()


SPACE = SearchSpace(
    trainable=train_driver_fn,
    params={{"train_loop_config": {{"lr": tune.loguniform(1e-3, 1e-1)}}}},
    metric="loss",
    mode="min",
)
'''


@pytest.mark.slow  # two real Ray Train runs, one after the other
@pytest.mark.usefixtures("ray_with_its_dashboard")  # as the sweep starts a local Ray for such a trainable
def test_a_ray_train_trainer_per_trial_runs_one_trial_at_a_time_on_two_cpus_and_every_trial_finishes(run_cli, tmp_path):
    space = tmp_path / "ray_train_space.py"
    space.write_text(SPACE.format(storage=str(tmp_path / "train_runs")))
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--num-samples", "2", "--max-epochs", "2",
                     "--storage-path", tmp_path, "--name", "rt", "--trial-timeout", "90s")  # fmt: skip
    assert result.code == 0, result.out[-3000:] + result.err[-3000:]
    assert "1 trial(s) at once" in result.out and "each trial runs a Ray Train trainer" in result.out
    assert "2 trial(s), 0 failed" in result.out, result.out[-2000:]
    assert "Failed to query Ray Train Controller" not in result.out + result.err
    got = json.loads(run_cli("results", tmp_path / "rt", "--format", "json").out)
    assert [row["epochs"] for row in got] == [2, 2], got
