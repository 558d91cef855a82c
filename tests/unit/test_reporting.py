"""Only Ray's sync failure over a renamed scratch file is hidden; every other one still reaches the user."""

from __future__ import annotations

import logging
import sys

import pytest

from tuner.reporting import quiet_benign_sync_races

RAY_LOGGER = "ray.tune.execution.experiment_state"


def _sync_failure(error: Exception) -> logging.LogRecord:
    try:
        raise error
    except Exception:
        exc_info = sys.exc_info()
    return logging.LogRecord(
        RAY_LOGGER, logging.ERROR, __file__, 1,
        "Saving experiment state to storage at '/x/exp' failed with exception: ", None, exc_info,
    )  # fmt: skip


@pytest.fixture
def ray_logger():
    logger = logging.getLogger(RAY_LOGGER)
    before = list(logger.filters)
    logger.filters[:] = []
    quiet_benign_sync_races()
    quiet_benign_sync_races()  # twice: still one filter
    yield logger
    logger.filters[:] = before


def test_a_vanished_scratch_file_is_not_reported(ray_logger):
    gone = FileNotFoundError("Failed to open local file '/s/.4f-tmp-searcher-state-2026.pkl'")
    assert not ray_logger.filter(_sync_failure(gone))
    assert len(ray_logger.filters) == 1


@pytest.mark.parametrize(
    "error",
    [
        FileNotFoundError("Failed to open local file '/s/experiment_state.json'"),
        PermissionError("-tmp- denied"),
    ],
)
def test_other_sync_failures_still_show(ray_logger, error):
    assert ray_logger.filter(_sync_failure(error))
