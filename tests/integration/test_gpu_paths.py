"""GPU features: DDP (on CPU with gloo in every run), OOM recovery through a sweep, and real-GPU tests.

Tests marked ``gpu`` need CUDA and skip cleanly without it.
"""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from tests.integration.conftest import read_best
from trainables.data import make_synthetic
from trainables.ddp import run_ddp

pytestmark = pytest.mark.slow
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_2_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
CONFIG = {"l1": 32, "l2": 16, "lr": 0.02, "batch_size": 16}


def test_ddp_with_gloo_trains_two_ranks_and_reports_from_rank_zero():
    from trainables.cifar import fit

    data = make_synthetic(1500, seed=0)
    states = []
    history = run_ddp(CONFIG, data, world_size=2, max_epochs=2, backend="gloo",
                      report=lambda m, s: states.append(s))  # fmt: skip
    assert [m["epoch"] for m in history] == [1, 2], "one report per epoch, from rank 0 only"
    # Each rank takes half of every batch and DDP averages gradients: the same steps as one process.
    single = fit(CONFIG, data, max_epochs=2)
    for ddp_epoch, one_epoch in zip(history, single, strict=True):
        assert ddp_epoch["accuracy"] == pytest.approx(one_epoch["accuracy"], abs=0.02)
        assert ddp_epoch["loss"] == pytest.approx(one_epoch["loss"], rel=0.02)
    assert states[-1]["epoch"] == 2 and "fc1.weight" in states[-1]["model"]  # a plain, unwrapped state dict
    resumed = run_ddp(CONFIG, data, world_size=2, max_epochs=3, backend="gloo", start_state=states[-1])
    assert [m["epoch"] for m in resumed] == [3]


def test_injected_oom_in_a_sweep_shows_in_the_table_and_tensorboard(sweep, tmp_path):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    space = tmp_path / "oom.py"
    space.write_text(
        '"""Seed net with an out-of-memory error injected at epoch 2."""\n'
        "from tuner import SearchSpace\n"
        "SPACE = SearchSpace(trainable='cifar', params={'lr': 0.01, 'batch_size': 16, 'l1': 16, 'l2': 16,\n"
        f"    '_test_fault': 'oom@2:{tmp_path / 'marker'}'}})\n"
    )
    result = sweep("--space", space, "--scheduler", "fifo", "--num-samples", "1", "--max-epochs", "3")
    assert result.code == 0, result.err[-3000:]
    header = [line for line in result.out.splitlines() if line.startswith("| Trial name")][-1]
    assert " batch " in header and " oom " in header
    assert "out of memory at batch size 16 in epoch 2" in result.err
    progress = pd.read_csv(next(result.folder.glob("*/progress.csv")))
    assert progress["batch_size_effective"].tolist() == [16, 8, 8]
    assert progress["oom_retries"].tolist() == [0, 1, 1]
    events = next(result.folder.glob("*/events.out.tfevents.*")).parent
    acc = EventAccumulator(str(events)).Reload()
    assert [e.value for e in acc.Scalars("ray/tune/batch_size_effective")] == [16, 8, 8]
    assert read_best(result.folder)["failed"] == []


@needs_gpu
@pytest.mark.gpu
def test_fractional_gpus_run_four_trials_on_one_gpu(sweep):
    result = sweep("--space", "cifar_small", "--scheduler", "fifo", "--num-samples", "4", "--gpus-per-trial", "0.25",
                   "--cpus-per-trial", "0.5")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    progress = [pd.read_csv(p) for p in result.folder.glob("*/progress.csv")]
    assert len(progress) == 4
    assert all(p["gpu_memory_peak_mb"].iloc[-1] > 0 for p in progress)


@needs_gpu
@pytest.mark.gpu
def test_a_real_oom_from_an_oversized_batch_is_recovered():
    from trainables.cifar import fit

    data = make_synthetic(4096, seed=0)
    total = torch.cuda.get_device_properties(0).total_memory
    # Cap this process at ~300 MiB so a 4096-image batch of the widest net cannot fit but small ones do.
    torch.cuda.set_per_process_memory_fraction(300 * 2**20 / total)
    try:
        history = fit({"l1": 256, "l2": 256, "lr": 0.01, "batch_size": 3276}, data, max_epochs=1,
                      device=torch.device("cuda"))  # fmt: skip
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0)
        torch.cuda.empty_cache()
    assert history[0]["oom_retries"] >= 1 and history[0]["batch_size_effective"] < 3276
    assert history[0]["gpu_memory_peak_mb"] > 0


@needs_2_gpus
@pytest.mark.gpu
def test_ddp_with_nccl_on_two_gpus():
    history = run_ddp(CONFIG, make_synthetic(2000, seed=0), world_size=2, max_epochs=2, backend="nccl")
    assert [m["epoch"] for m in history] == [1, 2] and history[-1]["gpu_memory_peak_mb"] > 0
