"""DistributedDataParallel inside one Tune trial: one process per GPU, rank 0 reports.

A trial given N GPUs starts N processes with ``torch.multiprocessing``; each binds one GPU, trains on its
slice of every batch, and DDP all-reduces the gradients. Rank 0 sends each epoch's metrics and checkpoint
state back through a queue, and the trial process reports them to Tune, so checkpoints, resume and the
scheduler work exactly as for a one-GPU trial. We start the processes ourselves rather than nesting Ray
Train's TorchTrainer in a Tune function: the trial already holds its GPUs, the in-memory dataset passes to
the ranks through shared memory, and no second layer of actors and placement groups is needed.
"""

from __future__ import annotations

import io
import os
import queue
import socket
from dataclasses import dataclass
from typing import Any

import numpy as np
import torch
import torch.distributed as dist
import torch.multiprocessing as mp

from trainables.data import CifarArrays
from trainables.loop import fit


@dataclass(frozen=True)
class DistContext:
    """Where a rank sits in its group; ``fit`` uses it to split batches and reduce metrics."""

    rank: int
    world_size: int

    def reduce_sum(self, tensor: torch.Tensor) -> torch.Tensor:
        dist.all_reduce(tensor, op=dist.ReduceOp.SUM)
        return tensor


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _to_cpu(state: Any) -> Any:
    if isinstance(state, torch.Tensor):
        return state.detach().cpu()
    if isinstance(state, dict):
        return {k: _to_cpu(v) for k, v in state.items()}
    if isinstance(state, (list, tuple)):
        return type(state)(_to_cpu(v) for v in state)
    return state


def _rank_main(
    rank: int, world_size: int, backend: str, port: int, shared: dict, args: dict, channel: Any
) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port))
    torch.set_num_threads(max(1, args.pop("threads_per_rank", 1)))
    if backend == "nccl":
        torch.cuda.set_device(rank)
        device = torch.device("cuda", rank)
    else:
        device = torch.device("cpu")
    dist.init_process_group(backend, rank=rank, world_size=world_size)
    try:
        data = CifarArrays(
            **{k: (v.numpy() if isinstance(v, torch.Tensor) else v) for k, v in shared.items()}
        )

        def report(metrics: dict, state: dict) -> None:
            # Bytes, not tensors: a shared tensor handle dies with this process, possibly before it is read.
            buffer = io.BytesIO()
            torch.save(_to_cpu(state), buffer)
            channel.put(("report", metrics, buffer.getvalue()))

        fit(args["config"], data, max_epochs=args["max_epochs"], seed=args["seed"], device=device,
            start_state=args["start_state"], report=report if rank == 0 else None,
            max_batches_per_epoch=args.get("max_batches_per_epoch"), dist=DistContext(rank, world_size))  # fmt: skip
        dist.barrier()
    finally:
        dist.destroy_process_group()


def run_ddp(
    config: dict,
    data: CifarArrays,
    *,
    world_size: int,
    max_epochs: int,
    seed: int = 0,
    backend: str | None = None,
    start_state: dict | None = None,
    report: Any = None,
    max_batches_per_epoch: int | None = None,
    threads_per_rank: int = 1,
) -> list[dict]:
    """Train with ``world_size`` processes and relay rank 0's reports; returns every epoch's metrics."""
    backend = backend or ("nccl" if torch.cuda.is_available() else "gloo")
    # Tensors in shared memory reach every rank without a copy per process.
    shared = {
        k: (torch.from_numpy(np.ascontiguousarray(v)).share_memory_() if isinstance(v, np.ndarray) else v)
        for k, v in vars(data).items()
    }
    ctx = mp.get_context("spawn")
    channel = ctx.Queue()
    args = {"config": config, "max_epochs": max_epochs, "seed": seed, "start_state": start_state,
            "max_batches_per_epoch": max_batches_per_epoch, "threads_per_rank": threads_per_rank}  # fmt: skip
    procs = mp.start_processes(_rank_main, args=(world_size, backend, _free_port(), shared, args, channel),
                               nprocs=world_size, join=False, start_method="spawn")  # fmt: skip
    history: list[dict] = []

    def drain(block: bool) -> None:
        while True:
            try:
                kind, metrics, state = channel.get(timeout=0.5) if block else channel.get_nowait()
            except queue.Empty:
                return
            history.append(metrics)
            if report is not None:
                report(metrics, torch.load(io.BytesIO(state), map_location="cpu", weights_only=True))

    while not procs.join(timeout=0.5):
        drain(block=False)
    drain(block=False)
    return history
