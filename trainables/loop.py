"""The PyTorch training loop of the CIFAR trainable: the seed conv net trained with SGD, epoch by epoch.

``fit`` knows nothing of Ray, so tests and benchmarks call it directly; trainables/cifar.py wires it to
Ray Tune (reports, checkpoints) and trainables/ddp.py runs it on several GPUs.
"""

from __future__ import annotations

import copy
import logging
import time
from collections.abc import Callable
from contextlib import nullcontext
from typing import Any

import torch
from torch import nn

from trainables.batching import DeviceSplit, augment, ordered_batches, shuffled_indices, to_device_split
from trainables.data import CifarArrays, train_val_indices
from trainables.gpu import GpuTelemetry, release_memory
from trainables.graphed_step import GraphedSteps, graphs_supported
from trainables.models import build_model

log = logging.getLogger(__name__)

EVAL_BATCH_SIZE = 1024
Report = Callable[[dict[str, Any], dict[str, Any]], None]
BeforeEpoch = Callable[[int], None]


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


def evaluate(
    model: nn.Module,
    split: DeviceSplit,
    autocast: Any = nullcontext,
    dist: Any = None,
    eval_batch: int = EVAL_BATCH_SIZE,
) -> tuple[float, float]:
    """Mean cross-entropy and accuracy over a split, without building a graph (DDP ranks share the work)."""
    model.eval()
    device = split.labels.device
    totals = torch.zeros(3, device=device)  # loss sum, correct, count
    with torch.no_grad(), autocast():
        for images, labels in ordered_batches(split, eval_batch):
            if dist is not None:
                images, labels = images[dist.rank :: dist.world_size], labels[dist.rank :: dist.world_size]
            logits = model(images).float()
            totals[0] += nn.functional.cross_entropy(logits, labels, reduction="sum")
            totals[1] += (logits.argmax(1) == labels).sum()
            totals[2] += len(labels)
    if dist is not None:
        dist.reduce_sum(totals)
    loss_sum, correct, count = totals.tolist()
    return loss_sum / max(count, 1), correct / max(count, 1)


def _snapshot(model: nn.Module, optimizer: torch.optim.Optimizer) -> dict[str, Any]:
    """A copy of the training state (on the training device): what an out-of-memory retry rolls back to."""
    return copy.deepcopy({"model": _unwrap(model).state_dict(), "optimizer": optimizer.state_dict()})


def _unwrap(model: nn.Module) -> nn.Module:
    return model.module if isinstance(model, nn.parallel.DistributedDataParallel) else model


PRECISIONS = ("fp32", "bf16")


def _precision(config: dict[str, Any]) -> str:
    precision = str(config.get("precision", "fp32"))
    if precision not in PRECISIONS:
        raise ValueError(f"precision {precision!r} is not supported; use one of {', '.join(PRECISIONS)}")
    return precision


class OutOfMemoryAtBatchOne(RuntimeError):
    """Even one image per step does not fit: no smaller batch can help."""


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
    dist: Any = None,
    cuda_graphs: bool = True,
    before_epoch: BeforeEpoch | None = None,
) -> list[dict[str, Any]]:
    """Train epochs ``start..max_epochs`` and call ``report(metrics, state)`` after each one.

    ``state`` holds what a checkpoint needs to continue (model, optimizer, epoch, batch size). The training
    loss is summed into a detached tensor (no graph kept alive, one device sync per epoch) and read with
    ``.item()`` when the epoch ends; evaluation runs under ``torch.no_grad()``.

    Out of memory: the epoch's tensors are dropped, cached memory is returned, the batch size halves and
    the epoch restarts from the state at the end of the previous one; at batch size 1 the trial fails.
    With ``dist`` (a DDP rank), each rank trains on its slice of every batch and metrics are summed
    across ranks. On a GPU, full batches replay a captured CUDA graph of the whole step
    (``cuda_graphs=False`` trains eagerly, for comparison); after an out-of-memory error the trial goes on
    without graphs, whose private memory pools would otherwise stay reserved. ``config["precision"]`` is
    ``fp32`` (default: for nets this small, bf16's casts cost more than its arithmetic saves) or ``bf16``.
    ``before_epoch(epoch)`` runs as each epoch (1-based) starts, inside the out-of-memory handling.

    Resuming from ``start_state`` keeps the config's learning rate and batch size (PBT hands a trial
    another trial's checkpoint with perturbed ones); only a batch size an out-of-memory error lowered
    stays lowered.
    """
    device = device or pick_device()
    on_gpu = device.type == "cuda"
    torch.manual_seed(seed)
    if on_gpu:
        # No cuDNN autotuning: in a 64-trial sweep on an H100 it cost every trial 2.6 s on its first epoch
        # (0.1 s without), and cuDNN's own choice trains these small convolutions as fast (BENCHMARKS.md).
        torch.backends.cudnn.benchmark = False
    # Channels-last suits oneDNN on CPUs as well as cuDNN (measured: 15-30% faster steps for the seed net).
    model = build_model(config).to(device, memory_format=torch.channels_last)
    optimizer = torch.optim.SGD(model.parameters(), lr=float(config.get("lr", 1e-3)), momentum=0.9)
    batch_size = int(config.get("batch_size", 4))
    start_epoch, oom_retries = 0, 0
    if start_state:
        model.load_state_dict(start_state["model"])
        optimizer.load_state_dict(start_state["optimizer"])
        for group in optimizer.param_groups:
            group["lr"] = float(config.get("lr", 1e-3))
        start_epoch = int(start_state["epoch"])
        batch_size = min(batch_size, int(start_state.get("batch_size_cap") or batch_size))
        oom_retries = int(start_state.get("oom_retries", 0))
    if dist is not None:
        model = nn.parallel.DistributedDataParallel(model, device_ids=[device.index] if on_gpu else None)

    train_split, val_split = prepare_splits(data, seed, device, channels_last=True)
    # No autocast cache: it may not outlive a graph capture, and each step re-casts the weights anyway.
    autocast = nullcontext
    if on_gpu and _precision(config) == "bf16":
        autocast = lambda: torch.autocast("cuda", dtype=torch.bfloat16, cache_enabled=False)  # noqa: E731
    graphs = None
    use_graphs = cuda_graphs and on_gpu and dist is None and not config.get("augment", False)
    if use_graphs and graphs_supported(optimizer):
        graphs = GraphedSteps(model, optimizer, train_split.images, train_split.labels, autocast)
    telemetry = GpuTelemetry(device)
    snapshot = _snapshot(model, optimizer)
    history = []
    epoch = start_epoch
    while epoch < max_epochs:
        out_of_memory = None
        try:
            if before_epoch is not None:
                before_epoch(epoch + 1)
            metrics = _run_epoch(model, optimizer, train_split, val_split, config, batch_size, epoch, seed,
                                 autocast, telemetry, max_batches_per_epoch, dist, graphs)  # fmt: skip
        except torch.OutOfMemoryError as exc:
            out_of_memory = str(exc).splitlines()[0]
        if out_of_memory is not None:  # handled outside `except`, so the traceback's tensors are gone
            if dist is not None or batch_size <= 1:
                raise OutOfMemoryAtBatchOne(
                    f"out of memory at batch size {batch_size}{' with DDP' if dist else ''}: "
                    f"the model does not fit on this device ({out_of_memory})"
                )
            if graphs is not None:
                graphs.clear()  # their pools hold memory, and loading the optimiser's state stales them
                graphs = None
            release_memory(device)
            _unwrap(model).load_state_dict(snapshot["model"])
            optimizer.load_state_dict(snapshot["optimizer"])
            oom_retries += 1
            log.warning("out of memory at batch size %d in epoch %d (%s); retrying the epoch at batch size %d "
                        "(retry %d)", batch_size, epoch + 1, out_of_memory, batch_size // 2, oom_retries)  # fmt: skip
            batch_size //= 2
            continue
        metrics.update(epoch=epoch + 1, batch_size_effective=batch_size, oom_retries=oom_retries)
        history.append(metrics)
        snapshot = _snapshot(model, optimizer)
        if report is not None:
            cap = batch_size if oom_retries else None  # what memory allowed, for whoever continues this state
            state = {**snapshot, "epoch": epoch + 1, "batch_size_cap": cap, "oom_retries": oom_retries}
            report(metrics, state)
        epoch += 1
    return history


def _run_epoch(
    model: nn.Module,
    optimizer: torch.optim.Optimizer,
    train_split: DeviceSplit,
    val_split: DeviceSplit,
    config: dict[str, Any],
    batch_size: int,
    epoch: int,
    seed: int,
    autocast: Any,
    telemetry: GpuTelemetry,
    max_batches: int | None,
    dist: Any,
    graphs: GraphedSteps | None = None,
) -> dict[str, Any]:
    """One epoch of training and a validation pass; returns the epoch's metrics."""
    device = train_split.labels.device
    generator = torch.Generator().manual_seed(seed * 100_003 + epoch)
    use_augment = bool(config.get("augment", False))
    telemetry.start_epoch()
    started = time.perf_counter()
    model.train()
    graphed = graphs.get(batch_size) if graphs is not None else None
    loss_sum = graphed.loss_sum.zero_() if graphed is not None else torch.zeros((), device=device)
    seen = torch.zeros((), device=device)
    graphed_images = 0
    for step, index in enumerate(shuffled_indices(train_split, batch_size, generator)):
        if max_batches is not None and step >= max_batches:
            break
        if step % 50 == 0:
            telemetry.sample()
        if graphed is not None and len(index) == batch_size:
            graphed(index)  # adds the batch's loss into loss_sum on the GPU
            graphed_images += batch_size
            continue
        images, labels = train_split.images[index], train_split.labels[index]
        if dist is not None:  # every rank draws the same order; each takes its slice of the batch
            images, labels = images[dist.rank :: dist.world_size], labels[dist.rank :: dist.world_size]
            if len(labels) == 0:
                continue
        if use_augment:
            images = augment(images, generator)
        optimizer.zero_grad(set_to_none=True)
        with autocast():
            loss = nn.functional.cross_entropy(model(images).float(), labels)
        loss.backward()
        optimizer.step()
        loss_sum += loss.detach() * len(labels)
        seen += len(labels)
    seen += graphed_images
    if dist is not None:
        dist.reduce_sum(loss_sum)
        dist.reduce_sum(seen)
    train_loss = loss_sum.item() / max(seen.item(), 1)
    if device.type == "cuda":
        torch.cuda.synchronize()
    train_seconds = time.perf_counter() - started
    val_started = time.perf_counter()
    val_loss, val_accuracy = evaluate(
        _unwrap(model), val_split, autocast, dist, eval_batch=min(EVAL_BATCH_SIZE, 64 * batch_size)
    )
    return {
        "loss": val_loss,
        "accuracy": val_accuracy,
        "train_loss": train_loss,
        "images_per_second": seen.item() / train_seconds if train_seconds > 0 else 0.0,
        "validation_seconds": time.perf_counter() - val_started,
        **telemetry.epoch_metrics(),
    }


