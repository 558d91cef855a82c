"""One real local Ray for the whole integration session (2 CPUs, no dashboard)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def start_test_ray(**resources) -> None:
    """A fresh local Ray as the tests use it: 2 CPUs (plus ``resources``, e.g. a logical ``num_gpus``)."""
    import ray

    from tuner.launch.cluster import prepare_environment

    prepare_environment()
    ray.init(
        address="local",
        num_cpus=2,
        include_dashboard=False,
        logging_level="WARNING",
        logging_config=ray.LoggingConfig(log_level="WARNING"),
        **resources,
    )


@pytest.fixture(scope="session", autouse=True)
def ray_session():
    import ray

    start_test_ray()
    yield
    ray.shutdown()


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
