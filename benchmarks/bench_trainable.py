"""Images per second of one trial: the seed tutorial's data path against tuner's, side by side.

Both paths train the same seed net with the same SGD on the same CIFAR-format files. The tutorial path is
torchvision's CIFAR10 dataset (files unpickled per trial, one PIL image at a time through ToTensor and
Normalize) in a DataLoader; tuner's path reads the files once per sweep, normalises once, and cuts batches
by indexing tensors (on the GPU, the whole split lives on the device).

    python benchmarks/bench_trainable.py                      # synthetic CIFAR-format files, CPU
    python benchmarks/bench_trainable.py --data-dir ./data    # real CIFAR-10 if it is there
    python benchmarks/bench_trainable.py --device cuda
"""

from __future__ import annotations

import argparse
import multiprocessing
import platform
import sys
import tempfile
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from reference import (  # noqa: E402
    TUTORIAL_TRANSFORM,
    FolderCIFAR10,
    tutorial_evaluate,
    tutorial_loaders,
)

from trainables.data import cifar10_present, load_cifar10, make_synthetic, write_cifar10_batches  # noqa: E402
from trainables.loop import fit  # noqa: E402
from trainables.models import build_model  # noqa: E402

CONFIG = {"l1": 120, "l2": 84, "lr": 0.001}


def sync(device: torch.device) -> None:
    if device.type == "cuda":
        torch.cuda.synchronize()


def tutorial_run(root: str, batch_size: int, workers: int, device: torch.device, max_images: int) -> dict:
    """One trial the tutorial's way: read the files, then one train epoch (capped) and a validation pass."""
    started = time.perf_counter()
    dataset = FolderCIFAR10(root, train=True, transform=TUTORIAL_TRANSFORM)
    setup = time.perf_counter() - started
    torch.manual_seed(0)
    model = build_model(CONFIG).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=CONFIG["lr"], momentum=0.9)
    train, val = tutorial_loaders(dataset, seed=0, batch_size=batch_size, num_workers=workers)
    criterion = torch.nn.CrossEntropyLoss()
    model.train()
    seen, running = 0, 0.0
    sync(device)
    t0 = time.perf_counter()
    for inputs, labels in train:
        inputs, labels = inputs.to(device), labels.to(device)
        optimizer.zero_grad()
        loss = criterion(model(inputs), labels)
        loss.backward()
        optimizer.step()
        running += loss.item()
        seen += len(labels)
        if seen >= max_images:
            break
    sync(device)
    train_s = time.perf_counter() - t0
    t1 = time.perf_counter()
    model_cpu_eval = device.type == "cpu"
    if model_cpu_eval:
        tutorial_evaluate(model, val)
    else:
        _evaluate_on(model, val, device)
    sync(device)
    val_s = time.perf_counter() - t1
    return {"setup_s": setup, "train_ips": seen / train_s, "val_s": val_s, "val_images": len(val.dataset)}


def _evaluate_on(model, loader, device) -> None:
    model.eval()
    with torch.no_grad():
        for inputs, labels in loader:
            outputs = model(inputs.to(device))
            (outputs.argmax(1) == labels.to(device)).sum().item()


def tuner_run(root: str, batch_size: int, device: torch.device, max_images: int) -> dict:
    """One trial tuner's way. Reading the files happens once per sweep in the driver, timed apart."""
    started = time.perf_counter()
    data = load_cifar10(root)
    load_once = time.perf_counter() - started
    train_images = int(len(data.train_labels) * 0.8)
    capped_batches = -(-max_images // batch_size) if max_images < train_images else None
    history = fit({**CONFIG, "batch_size": batch_size}, data, max_epochs=1, device=device,
                  max_batches_per_epoch=capped_batches)  # fmt: skip
    m = history[0]
    return {"setup_s": 0.0, "load_once_s": load_once, "train_ips": m["images_per_second"],
            "val_s": m["validation_seconds"]}  # fmt: skip


def gpu_busy_share(root: str, batch_size: int, max_images: int) -> float:
    """Share of one trial's wall time (train + validation) during which GPU kernels run, for tuner's path."""
    from torch.profiler import ProfilerActivity, profile

    data = load_cifar10(root)
    config = {**CONFIG, "batch_size": batch_size}
    fit(config, data, max_epochs=1, device=torch.device("cuda"), max_batches_per_epoch=20)  # warm up cuDNN
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        started = time.perf_counter()
        fit(config, data, max_epochs=1, device=torch.device("cuda"),
            max_batches_per_epoch=-(-max_images // batch_size))  # fmt: skip
        torch.cuda.synchronize()
        wall_us = (time.perf_counter() - started) * 1e6
    busy_us = sum(event.self_device_time_total for event in prof.key_averages())
    return busy_us / wall_us


def _one(path: str, root: str, bs: int, workers: int, device: str, max_images: int, threads: int) -> dict:
    torch.set_num_threads(threads)
    if path == "tutorial":
        return tutorial_run(root, bs, workers, torch.device(device), max_images)
    return tuner_run(root, bs, torch.device(device), max_images)


def measure(path: str, root: str, bs: int, args: argparse.Namespace) -> dict:
    """Run ``args.concurrent`` trials of one path at once (as a sweep does) and add up their throughput."""
    call = (path, root, bs, args.workers, args.device, args.max_images, args.threads)
    if args.concurrent == 1:
        return _one(*call)
    with ProcessPoolExecutor(args.concurrent, mp_context=multiprocessing.get_context("spawn")) as pool:
        runs = list(pool.map(_one, *[[c] * args.concurrent for c in call]))
    total = {k: max(r[k] for r in runs) for k in runs[0]}
    total["train_ips"] = sum(r["train_ips"] for r in runs)
    return total


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--data-dir", help="folder with cifar-10-batches-py/ (default: synthetic files in a temp dir)"
    )
    parser.add_argument("--images", type=int, default=10_000, help="synthetic training images to write")
    parser.add_argument("--max-images", type=int, default=8_000, help="training images timed per run")
    parser.add_argument("--batch-sizes", type=int, nargs="+", default=[4, 16, 64])
    parser.add_argument("--threads", type=int, default=1, help="torch threads (a 1-CPU trial by default)")
    parser.add_argument("--workers", type=int, default=2, help="DataLoader workers for the tutorial path")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--concurrent", type=int, default=1, help="trials at once, each in its own process")
    args = parser.parse_args()

    torch.set_num_threads(args.threads)
    device = torch.device(args.device)
    with tempfile.TemporaryDirectory() as tmp:
        root = args.data_dir
        if root is None or not cifar10_present(root):
            root = tmp
            write_cifar10_batches(make_synthetic(args.images, seed=0), root)
            source = f"synthetic, {args.images} images in CIFAR-10's python format"
        else:
            source = f"CIFAR-10 in {root}"
        print(f"# {source}; device {device}; torch {torch.__version__}; {args.threads} thread(s); "
              f"tutorial DataLoader workers {args.workers}; {args.concurrent} trial(s) at once; {platform.processor() or platform.machine()}")  # fmt: skip
        print(f"{'batch':>5}  {'path':<9} {'per-trial setup s':>17} {'train img/s':>12} {'val s':>7}  "
              f"{'epoch img/s':>11}")  # fmt: skip
        ratios = []
        # A whole epoch of one trial: its own file read (tutorial only), the full 80% train split at the
        # measured rate, and the validation pass over the other 20%.
        train_images = int(0.8 * len(load_cifar10(root).train_labels))
        for bs in args.batch_sizes:
            tut = measure("tutorial", root, bs, args)
            ours = measure("tuner", root, bs, args)
            rows = []
            for name, r in (("tutorial", tut), ("tuner", ours)):
                epoch_s = r["setup_s"] + train_images / (r["train_ips"] / args.concurrent) + r["val_s"]
                r["epoch_ips"] = args.concurrent * train_images / epoch_s
                rows.append(f"{bs:>5}  {name:<9} {r['setup_s']:>17.2f} {r['train_ips']:>12.0f} {r['val_s']:>7.2f}  "
                            f"{r['epoch_ips']:>11.0f}")  # fmt: skip
            print("\n".join(rows))
            ratios.append((bs, ours["train_ips"] / tut["train_ips"], ours["epoch_ips"] / tut["epoch_ips"]))
        print(f"(tuner's driver reads and decodes the files once per sweep: {ours['load_once_s']:.2f} s)")
        print("ratio tuner / tutorial:")
        for bs, train_ratio, epoch_ratio in ratios:
            print(f"  batch {bs:>3}: training loop {train_ratio:.2f}x   whole trial epoch {epoch_ratio:.2f}x")
        if device.type == "cuda":
            for bs in args.batch_sizes:
                print(
                    f"GPU busy share of a tuner trial, batch {bs}: {gpu_busy_share(root, bs, args.max_images):.0%}"
                )


if __name__ == "__main__":
    main()
