"""Out-of-memory adaptation on the CPU path, through an OOM injected by the loop's before_epoch hook."""

from __future__ import annotations

import logging

import pytest

from tests.faults import fault_hook
from trainables.data import make_synthetic
from trainables.loop import OutOfMemoryAtBatchOne, fit

CONFIG = {"l1": 16, "l2": 16, "lr": 0.01, "batch_size": 8}


@pytest.fixture(scope="module")
def small():
    return make_synthetic(200, seed=0)


def test_oom_halves_the_batch_and_retries_from_the_last_epoch(small, tmp_path, caplog):
    reports = []
    with caplog.at_level(logging.WARNING, logger="trainables.loop"):
        history = fit(CONFIG, small, max_epochs=3, max_batches_per_epoch=3, report=lambda m, s: reports.append(s),
                      before_epoch=fault_hook(f"oom@2:{tmp_path / 'm'}"))  # fmt: skip
    assert [m["epoch"] for m in history] == [1, 2, 3]
    assert [m["batch_size_effective"] for m in history] == [8, 4, 4]
    assert [m["oom_retries"] for m in history] == [0, 1, 1]
    assert reports[-1]["batch_size_cap"] == 4 and reports[-1]["oom_retries"] == 1  # a resume keeps it
    assert "out of memory at batch size 8 in epoch 2" in caplog.text and "batch size 4" in caplog.text


def test_oom_at_batch_size_one_fails_clearly(small, tmp_path):
    with pytest.raises(OutOfMemoryAtBatchOne, match="out of memory at batch size 1: the model does not fit"):
        fit({**CONFIG, "batch_size": 1}, small, max_epochs=1, max_batches_per_epoch=2,
            before_epoch=fault_hook(f"oom@1:{tmp_path / 'm'}"))  # fmt: skip


def test_resumed_state_keeps_the_reduced_batch(small, tmp_path):
    states = []
    fit(CONFIG, small, max_epochs=1, max_batches_per_epoch=2, report=lambda m, s: states.append(s),
        before_epoch=fault_hook(f"oom@1:{tmp_path / 'm'}"))  # fmt: skip
    resumed = fit(CONFIG, small, max_epochs=2, max_batches_per_epoch=2, start_state=states[-1])
    assert resumed[0]["batch_size_effective"] == 4 and resumed[0]["oom_retries"] == 1


def test_a_checkpoint_continued_with_another_config_keeps_its_lr_and_batch(small):
    """PBT hands a trial another trial's checkpoint with perturbed settings: those settings win."""
    states = []
    fit(CONFIG, small, max_epochs=1, max_batches_per_epoch=2, report=lambda m, s: states.append(s))
    perturbed = {**CONFIG, "lr": 0.05, "batch_size": 16}
    seen = []
    fit(perturbed, small, max_epochs=2, max_batches_per_epoch=2, start_state=states[-1],
        report=lambda m, s: seen.append((m["batch_size_effective"], s["optimizer"]["param_groups"][0]["lr"])))  # fmt: skip
    assert seen == [(16, 0.05)]
