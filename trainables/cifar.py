"""The CIFAR trainable for Ray Tune: the loop of trainables/loop.py, one report and checkpoint per epoch.

``train`` resumes from Tune's checkpoint (after a crash, a resume, or PBT handing it another trial's),
reports every epoch, and trains with DistributedDataParallel when its trial holds two or more GPUs. It
declares what the sweep needs to know about it: ``data_loader`` (the dataset, decoded once per sweep and
shared with every trial), ``memory_probe`` (for ``--gpus-per-trial auto``) and ``checkpoints``.
"""

from __future__ import annotations

import logging
import os
import tempfile
from typing import Any

import numpy as np
import torch

from trainables.data import CifarArrays, load_dataset
from trainables.loop import BeforeEpoch, fit

log = logging.getLogger(__name__)

CHECKPOINT_FILE = "checkpoint.pt"


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
    gpus_per_trial: float = 0,
    before_epoch: BeforeEpoch | None = None,
) -> None:
    """Ray Tune function trainable: resumes from Tune's checkpoint, reports and checkpoints each epoch.

    A trial holding two or more GPUs trains with DistributedDataParallel, one process per GPU.
    ``before_epoch`` is a hook for trainables built on this one (tests inject faults through it).
    """
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
    visible_gpus = torch.cuda.device_count() if gpus_per_trial >= 2 else 0
    if visible_gpus >= 2:
        from trainables.ddp import run_ddp

        threads = max(1, int(cpus_per_trial) // visible_gpus)
        run_ddp(config, data, world_size=visible_gpus, max_epochs=max_epochs, seed=seed, backend="nccl",
                start_state=start_state, report=report, threads_per_rank=threads)  # fmt: skip
        return
    fit(config, data, max_epochs=max_epochs, seed=seed, start_state=start_state, report=report,
        before_epoch=before_epoch)  # fmt: skip


def memory_probe(config: dict[str, Any], *, data: CifarArrays, seed: int = 0) -> None:
    """A few training steps and a validation pass of ``config`` on the GPU, as a trial runs them: what
    ``--gpus-per-trial auto`` measures (the data split on the device, the model, graphs, activations)."""
    fit(config, data, max_epochs=1, seed=seed, device=torch.device("cuda"), max_batches_per_epoch=8)


train.data_loader = load_dataset  # type: ignore[attr-defined]
train.memory_probe = memory_probe  # type: ignore[attr-defined]
train.checkpoints = True  # type: ignore[attr-defined]
