"""--gpus-per-trial auto through a real sweep on a Ray that advertises one GPU, with an injected probe."""

from __future__ import annotations

import json

import pytest

from tuner.launch.placement.packing import MemoryProbe
from tuner.launch.resolve import resolve
from tuner.launch.runner import run_sweep

SPACE = '''"""Instant trials that report their GPU share; the first trial to start reports an OOM retry."""
import os
import time

import ray
from ray import tune

from tuner import SearchSpace

MARKER = {marker!r}


def train(config, max_epochs=2):
    assigned = ray.get_runtime_context().get_assigned_resources()
    share = sum(v for k, v in assigned.items() if k == "GPU" or k.startswith("GPU_group_") and k.count("_") == 2)
    try:
        os.close(os.open(MARKER, os.O_CREAT | os.O_EXCL))
        oom = 1
    except FileExistsError:
        oom = 0
    for epoch in range(1, max_epochs + 1):
        if not oom:
            time.sleep(0.3)
        tune.report({{"loss": config["x"] / epoch, "gpu_share": share, "oom_retries": oom}})


SPACE = SearchSpace(trainable=train, params={{"x": tune.uniform(0, 1)}})
'''


@pytest.mark.slow  # restarts the Ray session twice, to give it a logical GPU and back
def test_auto_packs_by_the_probe_and_lowers_the_packing_after_an_oom(ray_with_a_logical_gpu, tmp_path):
    space = tmp_path / "probe_space.py"
    space.write_text(SPACE.format(marker=str(tmp_path / "oom-marker")))
    measured = []

    def probe(config):
        measured.append(dict(config))
        return MemoryProbe(30 * 2**30, 80 * 2**30, "a logical GPU", config)  # 37.5 GiB with margin: 1 fits

    lines = []
    config = resolve({"space": str(space), "scheduler": "fifo", "num_samples": 6, "max_epochs": 2, "cpus_per_trial": 0.5,
                      "gpus_per_trial": "auto", "storage_path": str(tmp_path), "name": "packed"})  # fmt: skip
    # 30 GiB on 80: one trial per GPU by memory; 2 GiB instead: memory fits many, CPUs (2 / 0.5) allow 4, and
    # without MPS taking turns caps at 4, so 4 per GPU.
    summary = run_sweep(
        config,
        out=lines.append,
        memory_probe=lambda c: MemoryProbe(2 * 2**30, 80 * 2**30, "a logical GPU", c),
    )
    text = "\n".join(lines)
    assert "gpus-per-trial auto: 2.00 GiB per trial (measured)" in text
    assert "4 trial(s) per GPU, 0.25 GPU each" in text
    assert "resources: 0.5 CPU and 0.25 GPU per trial; 4 trial(s) at once" in text
    assert "ran out of GPU memory; trials created from now on get 0.5 GPU (2 per GPU)" in text
    assert summary.trials == 6 and not summary.failed
    shares = []
    for trial in sorted((tmp_path / "packed").glob("*/result.json")):
        rows = [json.loads(line) for line in trial.read_text().splitlines() if line.strip()]
        shares.append(rows[0]["gpu_share"])
    # The first four start together at a quarter each; the two created after the OOM get half a GPU.
    assert sorted(shares) == [0.25] * 4 + [0.5] * 2, shares

    # A probe that says one trial fills the GPU gives each trial the whole GPU and nothing to lower.
    one = resolve({"space": str(space), "scheduler": "fifo", "num_samples": 1, "max_epochs": 1, "cpus_per_trial": 0.5,
                   "gpus_per_trial": "auto", "storage_path": str(tmp_path), "name": "whole"})  # fmt: skip
    lines.clear()
    run_sweep(one, out=lines.append, memory_probe=probe)
    assert measured == [{"x": 1.0}], "the probe measured the space's most demanding config"
    assert "1 trial(s) per GPU, 1 GPU each" in "\n".join(lines)
