"""Training throughput of the seed net on one GPU: eager steps against CUDA-graph steps, 1..N trials at once.

A sweep shares one GPU between many small trials, so what matters is the images per second of all trials
together. Each trial here is its own process (as under Ray), trains ``fit`` on the GPU for one capped epoch
after a warm-up, and starts timing at a common barrier; the aggregate is all images over the common wall time.

    python benchmarks/bench_gpu_step.py --batch-sizes 2 16 --trials 1 4 8 14
"""

from __future__ import annotations

import argparse
import multiprocessing
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

CONFIG = {"l1": 128, "l2": 64, "lr": 0.01}


VARIANTS = {  # name: (fit keywords, config entries)
    "eager": ({"cuda_graphs": False}, {}),
    "graph": ({"cuda_graphs": True}, {}),
    "eager-bf16": ({"cuda_graphs": False}, {"precision": "bf16"}),
    "graph-bf16": ({"cuda_graphs": True}, {"precision": "bf16"}),
}


def _trial(args: tuple) -> tuple[float, float, int]:
    barrier, batch_size, variant, steps, images = args
    import torch

    from trainables.data import make_synthetic
    from trainables.loop import fit

    torch.set_num_threads(1)
    data = make_synthetic(images, seed=0, test_size=10)
    options, extra = VARIANTS[variant]
    config = {**CONFIG, **extra, "batch_size": batch_size}
    device = torch.device("cuda")
    fit(config, data, max_epochs=1, device=device, max_batches_per_epoch=20, **options)  # warm-up
    barrier.wait()
    started = time.time()
    history = fit(config, data, max_epochs=1, device=device, max_batches_per_epoch=steps, **options)
    ended = time.time()
    assert history[0]["epoch"] == 1
    trained = min(steps, int(images * 0.8) // batch_size) * batch_size  # the split divides evenly here
    return started, ended, trained


def aggregate(trials: int, batch_size: int, variant: str, steps: int, images: int) -> float:
    """Images per second of ``trials`` concurrent processes, over their common wall time."""
    ctx = multiprocessing.get_context("spawn")
    with ctx.Manager() as manager:
        barrier = manager.Barrier(trials)
        with ctx.Pool(trials) as pool:
            runs = pool.map(_trial, [(barrier, batch_size, variant, steps, images)] * trials)
    wall = max(r[1] for r in runs) - min(r[0] for r in runs)
    return sum(r[2] for r in runs) / wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[2, 16])
    parser.add_argument("--trials", type=int, nargs="+", default=[1, 4, 8, 14])
    parser.add_argument("--steps", type=int, default=2000, help="timed steps per trial")
    parser.add_argument("--images", type=int, default=10_000, help="synthetic images per trial")
    parser.add_argument("--variants", nargs="+", choices=list(VARIANTS), default=["eager", "graph"])
    parser.add_argument("--label", default="", help="a note printed in the header (e.g. 'MPS on')")
    args = parser.parse_args()

    import torch

    name = torch.cuda.get_device_name(0)
    print(f"# {name}; torch {torch.__version__}; CUDA {torch.version.cuda}; seed net {CONFIG}; "
          f"{args.steps} timed steps per trial; {args.label}")  # fmt: skip
    print(f"{'batch':>5} {'trials':>6} " + " ".join(f"{v + ' img/s':>17}" for v in args.variants))
    for bs in args.batch_sizes:
        for n in args.trials:
            rates = [aggregate(n, bs, v, args.steps, args.images) for v in args.variants]
            ratios = (
                f"  ({rates[-1] / rates[0]:.2f}x {args.variants[-1]}/{args.variants[0]})"
                if len(rates) > 1
                else ""
            )
            print(f"{bs:>5} {n:>6} " + " ".join(f"{r:>17,.0f}" for r in rates) + ratios, flush=True)


if __name__ == "__main__":
    main()
