"""The CIFAR trainable: the seed conv net trained with SGD, one report and one checkpoint per epoch.

``fit`` is the PyTorch loop and knows nothing of Ray, so it can be called directly; ``train`` is the
Ray Tune function trainable that wires ``fit`` to ``tune.report`` and ``tune.get_checkpoint``.
"""

from __future__ import annotations

import logging
import os
import tempfile
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import numpy as np
import torch
from torch import nn

from trainables import faults
from trainables.batching import DeviceSplit, augment, ordered_batches, shuffled_batches, to_device_split
from trainables.data import CifarArrays, train_val_indices
from trainables.models import build_model

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.pt"
EVAL_BATCH_SIZE = 1024
Report = Callable[[dict[str, Any], dict[str, Any]], None]


def pick_device() -> torch.device:
    """The trial's GPU when Ray gave it one (CUDA_VISIBLE_DEVICES is set per trial), else the CPU."""
    return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")


def prepare_splits(
    data: CifarArrays, seed: int, device: torch.device, channels_last: bool = False
) -> tuple[DeviceSplit, DeviceSplit]:
    """The 80/20 train/validation split of the training set, normalised once on ``device``."""
    train_idx, val_idx = train_val_indices(len(data.train_labels), seed)
    train = to_device_split(data.train_images[train_idx], data.train_labels[train_idx], device, channels_last)
    val = to_device_split(data.train_images[val_idx], data.train_labels[val_idx], device, channels_last)
    return train, val


def evaluate(model: nn.Module, split: DeviceSplit, autocast: Any = nullcontext) -> tuple[float, float]:
    """Mean cross-entropy and accuracy over a split, without building a graph."""
    model.eval()
    loss_sum = torch.zeros((), device=split.labels.device)
    correct = torch.zeros((), device=split.labels.device, dtype=torch.long)
    with torch.no_grad(), autocast():
        for images, labels in ordered_batches(split, EVAL_BATCH_SIZE):
            logits = model(images).float()
            loss_sum += nn.functional.cross_entropy(logits, labels, reduction="sum")
            correct += (logits.argmax(1) == labels).sum()
    n = max(len(split), 1)
    return loss_sum.item() / n, correct.item() / n


def fit(
    config: dict[str, Any],
    data: CifarArrays,
    *,
    max_epochs: int,
    seed: int = 0,
    device: torch.device | None = None,
    start_state: dict[str, Any] | None = None,
    report: Report | None = None,
    max_batches_per_epoch: int | None = None,
) -> list[dict[str, Any]]:
    """Train epochs ``start..max_epochs`` and call ``report(metrics, state)`` after each one.

    ``state`` holds what a checkpoint needs to continue (model, optimizer, epoch). Returns every epoch's
    metrics. The training loss is summed into a detached tensor (no graph kept alive, one device sync
    per epoch) and read with ``.item()`` when the epoch ends; evaluation runs under ``torch.no_grad()``.
    """
    device = device or pick_device()
    on_gpu = device.type == "cuda"
    torch.manual_seed(seed)
    if on_gpu:
        torch.backends.cudnn.benchmark = True
    # Channels-last suits oneDNN on CPUs as well as cuDNN (measured: 15-30% faster steps for the seed net).
    model = build_model(config).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(config.get("lr", 1e-3)), momentum=0.9)
    batch_size = int(config.get("batch_size", 4))
    start_epoch = 0
    if start_state:
        model.load_state_dict(start_state["model"])
        optimizer.load_state_dict(start_state["optimizer"])
        start_epoch = int(start_state["epoch"])
        batch_size = int(start_state.get("batch_size", batch_size))

    train_split, val_split = prepare_splits(data, seed, device, channels_last=True)
    autocast = (lambda: torch.autocast("cuda", dtype=torch.bfloat16)) if on_gpu else nullcontext
    use_augment = bool(config.get("augment", False))
    history = []
    for epoch in range(start_epoch, max_epochs):
        faults.maybe_fail(config, epoch + 1)
        generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
        started = time.perf_counter()
        model.train()
        loss_sum = torch.zeros((), device=device)
        seen = 0
        for step, (images, labels) in enumerate(shuffled_batches(train_split, batch_size, generator)):
            if max_batches_per_epoch is not None and step >= max_batches_per_epoch:
                break
            if use_augment:
                images = augment(images, generator)
            optimizer.zero_grad(set_to_none=True)
            with autocast():
                loss = nn.functional.cross_entropy(model(images).float(), labels)
            loss.backward()
            optimizer.step()
            loss_sum += loss.detach() * len(labels)
            seen += len(labels)
        train_loss = loss_sum.item() / max(seen, 1)
        if on_gpu:
            torch.cuda.synchronize()
        train_seconds = time.perf_counter() - started
        val_started = time.perf_counter()
        val_loss, val_accuracy = evaluate(model, val_split, autocast)
        validation_seconds = time.perf_counter() - val_started
        metrics = {
            "loss": val_loss,
            "accuracy": val_accuracy,
            "train_loss": train_loss,
            "epoch": epoch + 1,
            "batch_size_effective": batch_size,
            "images_per_second": seen / train_seconds if train_seconds > 0 else 0.0,
            "validation_seconds": validation_seconds,
        }
        history.append(metrics)
        if report is not None:
            state = {
                "model": model.state_dict(),
                "optimizer": optimizer.state_dict(),
                "epoch": epoch + 1,
                "batch_size": batch_size,
            }
            report(metrics, state)
    return history


def load_state(path: str | os.PathLike) -> dict[str, Any]:
    """A checkpoint written by ``train``, mapped to the CPU so any device can resume it."""
    return torch.load(os.path.join(path, CHECKPOINT_FILE), map_location="cpu", weights_only=True)


def train(
    config: dict[str, Any],
    *,
    data: CifarArrays,
    max_epochs: int = 10,
    seed: int = 0,
    cpus_per_trial: float = 1,
) -> None:
    """Ray Tune function trainable: resumes from Tune's checkpoint, reports and checkpoints each epoch."""
    from ray import tune

    torch.set_num_threads(max(1, int(cpus_per_trial)))
    start_state = None
    checkpoint = tune.get_checkpoint()
    if checkpoint is not None:
        with checkpoint.as_directory() as folder:
            start_state = load_state(folder)
        log.info("resuming from epoch %d", start_state["epoch"])

    def report(metrics: dict[str, Any], state: dict[str, Any]) -> None:
        with tempfile.TemporaryDirectory() as folder:
            torch.save(state, os.path.join(folder, CHECKPOINT_FILE))
            tune.report(metrics, checkpoint=tune.Checkpoint.from_directory(folder))

    np.random.seed(seed)
    fit(config, data, max_epochs=max_epochs, seed=seed, start_state=start_state, report=report)
