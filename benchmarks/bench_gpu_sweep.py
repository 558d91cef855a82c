"""A 64-trial ASHA sweep of cifar_small on one GPU, wall clock from the command to its last line.

The sweep runs as a user runs it (``python -m tuner sweep``, Ray start-up included) on a CIFAR-10-sized
synthetic set (50,000 training images: 40,000 train, 10,000 validation), as many trials sharing the GPU
as the CPUs feed. Beside it: the same sweep projected on the PyTorch tutorial's data path, from that
path's measured epoch time at each batch size times the epochs ASHA actually ran, one trial per GPU as the
tutorial sets it.

    python benchmarks/bench_gpu_sweep.py                    # needs a CUDA GPU
    python benchmarks/bench_gpu_sweep.py --trials-per-gpu 8 --log sweep.log
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
GOAL_S = 60  # the whole 64-trial command on one H100 (the standing goal)
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))


def run_sweep(args: argparse.Namespace, storage: str) -> tuple[float, dict[str, float], Path]:
    # Rounded down, so that many really fit; "auto" lets tuner measure and decide.
    share = "auto" if args.auto else f"{math.floor(1e4 / args.trials_per_gpu) / 1e4:g}"
    command = [
        sys.executable, "-m", "tuner", "sweep", "--space", "cifar_small", "--scheduler", "asha",
        "--num-samples", str(args.num_samples), "--max-epochs", str(args.max_epochs),
        "--dataset", "synthetic", "--synthetic-size", str(args.images),
        "--gpus-per-trial", share, "--cpus-per-trial", str(args.cpus_per_trial),
        "--storage-path", storage, "--name", "gpu-sweep", "--seed", str(args.seed),
    ]  # fmt: skip
    if args.searcher:
        command += ["--searcher", args.searcher]
    started = time.perf_counter()
    marks: dict[str, float] = {}  # when the sweep's own lines said it started and finished the trials
    with (
        open(args.log, "w") as log,
        subprocess.Popen(
            command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, cwd=ROOT, text=True
        ) as sweep,
    ):
        for line in sweep.stdout:
            now = time.perf_counter() - started
            log.write(f"{now:7.2f} {line}")
            for mark, prefix in (("trials", "live report:"), ("summary", "best trial:")):
                if line.startswith(prefix):
                    marks.setdefault(mark, now)
        code = sweep.wait()
    wall = time.perf_counter() - started
    if code != 0:
        sys.exit(f"the sweep failed with exit code {code}; see {args.log}")
    return wall, marks, Path(storage) / "gpu-sweep"


def start_up_seconds(record) -> dict[str, list[float]]:
    """How much longer each trial's first epoch took than its second, split by whether the trial started
    a fresh worker process (import, CUDA context, data to the GPU, graph capture) or reused one."""
    out: dict[str, list[float]] = {"fresh": [], "reused": []}
    seen_pids: set = set()
    trials = sorted((t for t in record.trials if t.rows), key=lambda t: float(t.rows[0].get("timestamp") or 0))
    for trial in trials:
        pid = trial.rows[0].get("pid")
        kind = "reused" if pid in seen_pids else "fresh"
        seen_pids.add(pid)
        if len(trial.rows) >= 2:
            first, second = (float(r.get("time_this_iter_s") or 0) for r in trial.rows[:2])
            out[kind].append(first - second)
    return out


def tutorial_epoch_seconds(batch_sizes: list[int], images: int, max_images: int) -> dict[int, float]:
    """One trial epoch on the tutorial's path (its file read, the train split, the validation pass)."""
    import torch
    from bench_trainable import tutorial_run

    from trainables.data import make_synthetic, write_cifar10_batches

    seconds = {}
    with tempfile.TemporaryDirectory() as root:
        write_cifar10_batches(make_synthetic(images, seed=0), root)
        train_images = int(images * 0.8)
        for bs in batch_sizes:
            r = tutorial_run(root, bs, workers=2, device=torch.device("cuda"), max_images=max_images)
            seconds[bs] = r["setup_s"] + train_images / r["train_ips"] + r["val_s"]
    return seconds


def main() -> None:
    cpus = os.cpu_count() or 2
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--num-samples", type=int, default=64)
    parser.add_argument("--max-epochs", type=int, default=10)
    parser.add_argument("--images", type=int, default=50_000)
    parser.add_argument("--trials-per-gpu", type=int, default=max(1, cpus - 2),
                        help="trials sharing the GPU (default: one per CPU, two CPUs left for Ray)")  # fmt: skip
    parser.add_argument("--auto", action="store_true", help="--gpus-per-trial auto instead of --trials-per-gpu")
    parser.add_argument("--cpus-per-trial", type=float, default=1)
    parser.add_argument("--searcher", help="default: tuner's default searcher")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--tutorial-images", type=int, default=4000, help="images timed per tutorial epoch")
    parser.add_argument("--log", default="gpu_sweep.log", help="where the sweep's own output goes")
    parser.add_argument("--no-projection", action="store_true", help="skip timing the tutorial's path")
    parser.add_argument("--label", default="", help="a note printed in the header (e.g. 'MPS on')")
    args = parser.parse_args()

    import torch

    if not torch.cuda.is_available():
        sys.exit("bench_gpu_sweep needs a CUDA GPU")
    from tuner.experiment import load

    print(f"# {torch.cuda.get_device_name(0)}; torch {torch.__version__}; {cpus} CPUs; "
          f"{args.num_samples} trials, <= {args.max_epochs} epochs, {args.images} images; "
          f"{'auto packing' if args.auto else f'{args.trials_per_gpu} trials share the GPU'}; {args.label}")  # fmt: skip
    with tempfile.TemporaryDirectory() as storage:
        wall, marks, folder = run_sweep(args, storage)
        record = load(str(folder))
        epochs = Counter()
        for trial in record.trials:
            epochs[int(trial.config["batch_size"])] += trial.epochs
        start_up = start_up_seconds(record)
        best = record.best_trial()
        best_line = (
            f"best loss {best.best(record.metric, record.mode):.4f} ({best.config})" if best else "no result"
        )
    total_epochs = sum(epochs.values())
    print(f"tuner sweep: {wall:.1f} s wall for {len(record.trials)} trials, {total_epochs} epochs "
          f"({', '.join(f'batch {bs}: {n}' for bs, n in sorted(epochs.items()))}); {best_line}")  # fmt: skip
    if len(marks) == 2:
        print(f"phases: {marks['trials']:.1f} s before the first trial (Python, data, plan, Ray start-up), "
              f"{marks['summary'] - marks['trials']:.1f} s of trials, {wall - marks['summary']:.1f} s after "
              "(summary, report, Ray shutdown)")  # fmt: skip
    print("a trial's first epoch over its second: " + "; ".join(
        f"{kind} worker {statistics.median(v):.1f} s (median of {len(v)})" for kind, v in start_up.items() if v))
    print(f"goal <= {GOAL_S} s wall: {'met' if wall <= GOAL_S else 'missed'}")
    if args.no_projection:
        return
    per_epoch = tutorial_epoch_seconds(sorted(epochs), args.images, args.tutorial_images)
    projected = sum(n * per_epoch[bs] for bs, n in epochs.items())
    print(
        "tutorial path, one epoch: "
        + ", ".join(f"batch {bs} {s:.1f} s" for bs, s in sorted(per_epoch.items()))
    )
    print(
        f"tutorial path, projected for the same {total_epochs} epochs one trial at a time: {projected:.0f} s"
    )
    print(f"ratio: {projected / wall:.1f}x")


if __name__ == "__main__":
    main()
