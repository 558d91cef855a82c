"""Out-of-memory adaptation on the CPU path, through an injected OOM (a test hook, not a user flag)."""

from __future__ import annotations

import logging

import pytest

from trainables import faults
from trainables.cifar import OutOfMemoryAtBatchOne, fit
from trainables.data import make_synthetic


@pytest.fixture(scope="module")
def small():
    return make_synthetic(200, seed=0)


def test_oom_halves_the_batch_and_retries_from_the_last_epoch(small, tmp_path, caplog):
    config = {"l1": 16, "l2": 16, "lr": 0.01, "batch_size": 8, faults.CONFIG_KEY: f"oom@2:{tmp_path / 'm'}"}
    reports = []
    with caplog.at_level(logging.WARNING, logger="trainables.cifar"):
        history = fit(
            config, small, max_epochs=3, max_batches_per_epoch=3, report=lambda m, s: reports.append(s)
        )
    assert [m["epoch"] for m in history] == [1, 2, 3]
    assert [m["batch_size_effective"] for m in history] == [8, 4, 4]
    assert [m["oom_retries"] for m in history] == [0, 1, 1]
    assert (
        reports[-1]["batch_size"] == 4 and reports[-1]["oom_retries"] == 1
    )  # a resume keeps the smaller batch
    assert "out of memory at batch size 8 in epoch 2" in caplog.text and "batch size 4" in caplog.text


def test_oom_at_batch_size_one_fails_clearly(small, tmp_path):
    config = {"l1": 16, "l2": 16, "lr": 0.01, "batch_size": 1, faults.CONFIG_KEY: f"oom@1:{tmp_path / 'm'}"}
    with pytest.raises(OutOfMemoryAtBatchOne, match="out of memory at batch size 1: the model does not fit"):
        fit(config, small, max_epochs=1, max_batches_per_epoch=2)


def test_resumed_state_keeps_the_reduced_batch(small, tmp_path):
    config = {"l1": 16, "l2": 16, "lr": 0.01, "batch_size": 8, faults.CONFIG_KEY: f"oom@1:{tmp_path / 'm'}"}
    states = []
    fit(config, small, max_epochs=1, max_batches_per_epoch=2, report=lambda m, s: states.append(s))
    resumed = fit(config, small, max_epochs=2, max_batches_per_epoch=2, start_state=states[-1])
    assert resumed[0]["batch_size_effective"] == 4 and resumed[0]["oom_retries"] == 1
