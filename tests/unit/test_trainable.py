"""The PyTorch loop without Ray: training, reports, resuming, data formats, batching."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.faults import fault_hook
from trainables.batching import augment, shuffled_batches, to_device_split
from trainables.data import (
    load_cifar10,
    load_dataset,
    make_synthetic,
    train_val_indices,
    write_cifar10_batches,
)
from trainables.loop import evaluate, fit
from trainables.models import SeedNet
from tuner.errors import UsageError

GOOD = {"l1": 64, "l2": 32, "lr": 0.01, "batch_size": 8}


@pytest.fixture(scope="module")
def small():
    return make_synthetic(400, seed=1)


def test_fit_on_two_batches_reports_metrics_and_a_checkpoint_state(small):
    reports = []
    history = fit(
        GOOD, small, max_epochs=1, max_batches_per_epoch=2, report=lambda m, s: reports.append((m, s))
    )
    metrics, state = reports[0]
    assert history == [metrics]
    assert {"loss", "accuracy", "train_loss", "epoch", "batch_size_effective"} <= set(metrics)
    assert metrics["epoch"] == 1 and metrics["batch_size_effective"] == 8
    assert 0.0 <= metrics["accuracy"] <= 1.0 and np.isfinite(metrics["loss"])
    assert state["epoch"] == 1 and "fc1.weight" in state["model"]


def test_resume_continues_from_the_saved_epoch(small):
    states = []
    fit(GOOD, small, max_epochs=1, max_batches_per_epoch=3, report=lambda m, s: states.append(s))
    resumed = fit(GOOD, small, max_epochs=3, max_batches_per_epoch=3, start_state=states[-1])
    assert [m["epoch"] for m in resumed] == [2, 3]


def test_synthetic_data_is_learnable_well_above_chance_in_two_epochs():
    history = fit(GOOD, make_synthetic(2000, seed=0), max_epochs=2)
    assert history[-1]["accuracy"] > 0.5
    assert history[-1]["loss"] < history[0]["train_loss"]


def test_synthetic_data_is_deterministic_and_cifar_shaped():
    a, b = make_synthetic(50, seed=4), make_synthetic(50, seed=4)
    assert a.train_images.shape == (50, 3, 32, 32) and a.train_images.dtype == np.uint8
    assert np.array_equal(a.train_images, b.train_images) and np.array_equal(a.train_labels, b.train_labels)
    assert set(np.unique(make_synthetic(500).train_labels)) == set(range(10))


def test_cifar_python_batches_round_trip(tmp_path):
    original = make_synthetic(60, seed=2)
    write_cifar10_batches(original, tmp_path)
    loaded = load_cifar10(tmp_path)
    assert np.array_equal(loaded.train_images, original.train_images)
    assert np.array_equal(loaded.test_labels, original.test_labels)
    assert loaded.classes[0] == "airplane"


def test_missing_cifar_without_download_is_a_clear_error(tmp_path):
    with pytest.raises(UsageError, match="CIFAR-10 not found.*--download"):
        load_dataset("cifar10", tmp_path)


def test_split_is_80_20_and_disjoint():
    train, val = train_val_indices(1000, seed=0)
    assert len(train) == 800 and len(val) == 200 and not set(train) & set(val)


def test_batches_cover_the_split_once_per_epoch(small):
    split = to_device_split(small.train_images, small.train_labels, torch.device("cpu"))
    seen = torch.cat([y for _, y in shuffled_batches(split, 16, torch.Generator().manual_seed(0))])
    assert len(seen) == len(split)
    assert torch.equal(seen.sort().values, split.labels.sort().values)
    assert split.images.min() >= -1 and split.images.max() <= 1


def test_augment_keeps_shape_and_content_statistics(small):
    split = to_device_split(small.train_images[:32], small.train_labels[:32], torch.device("cpu"))
    out = augment(split.images, torch.Generator().manual_seed(0))
    assert out.shape == split.images.shape
    assert not torch.equal(out, split.images)
    # A crop with zero padding moves pixels, never invents values outside the padded range.
    assert out.min() >= min(split.images.min(), 0) and out.max() <= split.images.max()


def test_evaluation_runs_without_autograd(small, monkeypatch):
    split = to_device_split(small.train_images[:64], small.train_labels[:64], torch.device("cpu"))
    model = SeedNet(8, 8)
    grad_modes = []
    forward = model.forward
    monkeypatch.setattr(model, "forward", lambda x: grad_modes.append(torch.is_grad_enabled()) or forward(x))
    loss, accuracy = evaluate(model, split)
    assert isinstance(loss, float) and isinstance(accuracy, float)
    assert grad_modes and not any(grad_modes), "every evaluation batch ran with autograd off"
    assert model.training is False


def test_a_before_epoch_hook_runs_as_each_epoch_starts(tmp_path, small):
    started = []
    fit(GOOD, small, max_epochs=3, max_batches_per_epoch=1, before_epoch=started.append)
    assert started == [1, 2, 3]
    hook = fault_hook(f"crash@2:{tmp_path / 'marker'}")
    with pytest.raises(RuntimeError, match="injected crash at epoch 2"):
        fit(GOOD, small, max_epochs=2, max_batches_per_epoch=1, before_epoch=hook)
    assert len(fit(GOOD, small, max_epochs=2, max_batches_per_epoch=1, before_epoch=hook)) == 2, "once only"
