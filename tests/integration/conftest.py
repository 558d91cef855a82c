"""One real local Ray for the whole integration session (2 CPUs, no dashboard)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import start_test_ray


@pytest.fixture(scope="session", autouse=True)
def _ray_for_every_test(ray_session):
    """Every integration test runs on the session's Ray (tests/conftest.py)."""
    yield


@pytest.fixture
def ray_with_a_logical_gpu():
    """The session's Ray swapped for one that advertises a GPU (nothing runs on it: trials see no CUDA)."""
    import ray

    ray.shutdown()
    start_test_ray(num_gpus=1)
    yield
    ray.shutdown()
    start_test_ray()


TINY = ("--dataset", "synthetic", "--synthetic-size", "200", "--max-epochs", "2", "--cpus-per-trial", "1")


@pytest.fixture
def sweep(run_cli, tmp_path):
    """Run ``tuner sweep`` on tiny synthetic data into a temporary storage folder."""

    def run(*args: str, name: str = "exp"):
        result = run_cli("sweep", *TINY, "--storage-path", tmp_path, "--name", name, *args)
        result.folder = Path(tmp_path) / name
        return result

    return run


def read_best(folder: Path) -> dict:
    return json.loads((folder / "best_config.json").read_text())
