"""GPU features: DDP (on CPU with gloo in every run), OOM recovery through a sweep, and real-GPU tests.

Tests marked ``gpu`` need CUDA and skip cleanly without it.
"""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from tests.faults import faulty_space
from tests.integration.conftest import read_best
from trainables.data import make_synthetic
from trainables.ddp import run_ddp

pytestmark = pytest.mark.slow
needs_gpu = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
needs_2_gpus = pytest.mark.skipif(torch.cuda.device_count() < 2, reason="needs two CUDA GPUs")
CONFIG = {"l1": 32, "l2": 16, "lr": 0.02, "batch_size": 16}


def test_ddp_with_gloo_trains_two_ranks_and_reports_from_rank_zero():
    from trainables.loop import fit

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

    space = faulty_space(tmp_path / "oom.py", "{'lr': 0.01, 'batch_size': 16, 'l1': 16, 'l2': 16, "
                         f"'fault': 'oom@2:{tmp_path / 'marker'}'}}")  # fmt: skip
    result = sweep("--space", space, "--scheduler", "fifo", "--num-samples", "1", "--max-epochs", "3")
    assert result.code == 0, result.err[-3000:]
    headers = [line for line in result.out.splitlines() if line.startswith("| trial ")]
    assert headers, result.out[-4000:] + result.err[-2000:]  # the live table, at least its final print
    assert " batch " in headers[-1] and " oom " in headers[-1]
    assert "ran out of memory in epoch 2 (1 retry so far); it goes on at batch size 8" in result.out
    progress = pd.read_csv(next(result.folder.glob("*/progress.csv")))
    assert progress["batch_size_effective"].tolist() == [16, 8, 8]
    assert progress["oom_retries"].tolist() == [0, 1, 1]
    events = next(result.folder.glob("*/events.out.tfevents.*")).parent
    acc = EventAccumulator(str(events)).Reload()
    assert [e.value for e in acc.Scalars("batch_size_effective")] == [16, 8, 8]
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
    from trainables.loop import fit

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


@needs_gpu
@pytest.mark.gpu
def test_a_graphed_step_updates_the_weights_exactly_as_an_eager_step():
    import copy
    from contextlib import nullcontext

    from trainables.batching import to_device_split
    from trainables.graphed_step import GraphedSteps
    from trainables.models import build_model

    torch.backends.cudnn.deterministic, was = True, torch.backends.cudnn.deterministic
    try:
        data = make_synthetic(600, seed=0)
        split = to_device_split(data.train_images, data.train_labels, torch.device("cuda"), channels_last=True)
        torch.manual_seed(0)
        eager_model = build_model({"l1": 64, "l2": 32}).cuda().to(memory_format=torch.channels_last)
        graph_model = copy.deepcopy(eager_model)
        eager_opt = torch.optim.SGD(eager_model.parameters(), lr=0.01, momentum=0.9)
        graph_opt = torch.optim.SGD(graph_model.parameters(), lr=0.01, momentum=0.9)
        step = GraphedSteps(graph_model, graph_opt, split.images, split.labels, nullcontext).get(24)
        assert step is not None, "the step was captured"
        eager_loss = torch.zeros((), device="cuda")
        order = torch.randperm(len(split), generator=torch.Generator().manual_seed(1)).cuda()
        for start in range(0, 24 * 12, 24):
            index = order[start : start + 24]
            eager_opt.zero_grad(set_to_none=True)
            loss = torch.nn.functional.cross_entropy(eager_model(split.images[index]), split.labels[index])
            loss.backward()
            eager_opt.step()
            eager_loss += loss.detach() * 24
            step(index)
        for a, b in zip(eager_model.parameters(), graph_model.parameters(), strict=True):
            torch.testing.assert_close(b, a, rtol=1e-4, atol=1e-5)
        torch.testing.assert_close(step.loss_sum, eager_loss, rtol=1e-4, atol=1e-4)
    finally:
        torch.backends.cudnn.deterministic = was


@needs_gpu
@pytest.mark.gpu
def test_graphed_training_learns_like_eager_training():
    from trainables.loop import fit

    data = make_synthetic(2000, seed=0)
    # 1,600 training images in batches of 24: 66 graphed steps and an eager 16-image tail per epoch.
    config = {"l1": 64, "l2": 32, "lr": 0.02, "batch_size": 24}
    eager = fit(config, data, max_epochs=2, device=torch.device("cuda"), cuda_graphs=False)
    graphed = fit(config, data, max_epochs=2, device=torch.device("cuda"), cuda_graphs=True)
    # Whole epochs amplify rounding differences (atomics in cuDNN's backward), so compare what training
    # reached rather than every digit; the step-by-step identity is the test above.
    assert graphed[0]["train_loss"] == pytest.approx(eager[0]["train_loss"], rel=0.1)
    assert graphed[-1]["accuracy"] > 0.6 and eager[-1]["accuracy"] > 0.6
    assert graphed[0]["images_per_second"] > eager[0]["images_per_second"]


@needs_gpu
@pytest.mark.gpu
def test_gpu_epochs_report_memory_utilisation_and_resume_across_devices(tmp_path):
    from trainables.loop import fit

    data = make_synthetic(3000, seed=0)
    states = []
    history = fit(CONFIG, data, max_epochs=1, device=torch.device("cuda"), report=lambda m, s: states.append(s))
    assert history[0]["gpu_memory_peak_mb"] > 0
    assert 0 <= history[0]["gpu_utilization"] <= 100, "NVML utilisation sampled during the epoch"
    # A checkpoint written on the GPU loads onto the CPU and training continues there.
    from trainables.cifar import CHECKPOINT_FILE, load_state

    torch.save(states[0], tmp_path / CHECKPOINT_FILE)
    restored = load_state(tmp_path)
    assert all(t.device.type == "cpu" for t in restored["model"].values())
    more = fit(CONFIG, data, max_epochs=2, device=torch.device("cpu"), start_state=restored)
    assert [m["epoch"] for m in more] == [2]


@needs_gpu
@pytest.mark.gpu
def test_auto_packing_measures_the_seed_space_on_the_gpu(sweep):
    import re

    result = sweep("--space", "cifar_small", "--scheduler", "fifo", "--num-samples", "2", "--gpus-per-trial", "auto",
                   "--cpus-per-trial", "0.5")  # fmt: skip
    assert result.code == 0, result.err[-3000:]
    line = next(x for x in result.out.splitlines() if x.startswith("gpus-per-trial auto:"))
    assert "measured on the device" in line and "l1=256, l2=256" in line and "batch_size=16" in line, line
    footprint = float(re.search(r"auto: ([0-9.]+) GiB per trial", line).group(1))
    assert 0.1 < footprint < 8, line  # a CUDA context, 200 synthetic images and a tiny net
    assert re.search(r"-> \d+ trial\(s\) per GPU", result.out)
    progress = [pd.read_csv(p) for p in result.folder.glob("*/progress.csv")]
    assert len(progress) == 2 and all(p["gpu_memory_peak_mb"].iloc[-1] > 0 for p in progress)


@needs_2_gpus
@pytest.mark.gpu
def test_ddp_with_nccl_on_two_gpus():
    history = run_ddp(CONFIG, make_synthetic(2000, seed=0), world_size=2, max_epochs=2, backend="nccl")
    assert [m["epoch"] for m in history] == [1, 2] and history[-1]["gpu_memory_peak_mb"] > 0
