"""The fast data path: same accuracy as the tutorial's DataLoader path, data shared not re-read."""

from __future__ import annotations

import shutil

import pytest

from trainables.data import make_synthetic, write_cifar10_batches
from trainables.loop import fit
from tuner.launch.plan import place, prepare
from tuner.launch.resolve import resolve
from tuner.launch.runner import launch

pytestmark = pytest.mark.slow


def test_fast_path_matches_the_dataloader_path_within_noise():
    from benchmarks.reference import tutorial_fit  # torchvision: imported by this slow test only

    data = make_synthetic(1500, seed=0)
    config = {"l1": 64, "l2": 32, "lr": 0.01, "batch_size": 8}
    fast = [fit(config, data, max_epochs=2, seed=s)[-1]["accuracy"] for s in (0, 1)]
    slow = [tutorial_fit(config, data, max_epochs=2, seed=s)[-1]["accuracy"] for s in (0, 1)]
    assert min(fast) > 0.4 and min(slow) > 0.4, (fast, slow)
    assert abs(sum(fast) / 2 - sum(slow) / 2) < 0.12, (fast, slow)


def test_trials_never_read_the_dataset_files(tmp_path):
    """The driver decodes CIFAR-10 once; with the files gone before launch, every trial still trains."""
    data_dir = tmp_path / "data"
    write_cifar10_batches(make_synthetic(300, seed=0), data_dir)
    config = resolve({"space": "cifar_small", "dataset": "cifar10", "data_dir": str(data_dir), "num_samples": 2,
                      "max_epochs": 1, "scheduler": "fifo", "storage_path": str(tmp_path / "results"),
                      "name": "shared"})  # fmt: skip
    plan = prepare(config, out=lambda line: None)
    shutil.rmtree(data_dir)
    summary = launch(place(plan), out=lambda line: None)
    assert summary.trials == 2 and not summary.failed


def test_trials_get_zero_copy_views_from_the_object_store(run_cli, tmp_path):
    space = tmp_path / "probe.py"
    space.write_text(
        '"""Reports whether the shared arrays arrived as read-only object-store views."""\n'
        "from ray import tune\nfrom tuner import SearchSpace\nfrom trainables.data import load_dataset\n\n"
        "def probe(config, *, data, max_epochs):\n"
        "    tune.report({'loss': config['x'], 'writeable': int(data.train_images.flags.writeable),\n"
        "                 'images': len(data.train_images)})\n\n"
        "probe.data_loader = load_dataset\n\n"
        "SPACE = SearchSpace(trainable=probe, params={'x': tune.uniform(0, 1)})\n"
    )
    result = run_cli("sweep", "--space", space, "--dataset", "synthetic", "--synthetic-size", "120",
                     "--num-samples", "2", "--scheduler", "fifo", "--storage-path", tmp_path, "--name", "probe")  # fmt: skip
    assert result.code == 0, result.err[-2000:]
    import pandas as pd

    for progress in (tmp_path / "probe").glob("*/progress.csv"):
        row = pd.read_csv(progress).iloc[-1]
        assert row["writeable"] == 0 and row["images"] == 120
