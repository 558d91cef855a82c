"""Job submission pieces that need no cluster: entrypoints, addresses, tokens, shipped space files."""

from __future__ import annotations

import shlex

import pytest

from tuner.errors import UsageError
from tuner.launch.placement import jobs


def test_entrypoint_runs_tuner_sweep_against_the_cluster_it_lands_on():
    command = jobs.sweep_entrypoint({"space": "cifar_small", "num_samples": 4, "download": True, "wandb": False,
                                     "metric": None, "address": "http://head:8265", "warm_start": (),
                                     "tags": ("a", "b")})  # fmt: skip
    assert shlex.split(command) == ["python", "-m", "tuner", "sweep", "--space", "cifar_small", "--num-samples", "4",
                                    "--download", "--no-wandb", "--tags", "a", "--tags", "b", "--address", "auto"]  # fmt: skip


def test_address_from_flag_or_environment(monkeypatch):
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    with pytest.raises(UsageError, match="pass --address http://HEAD:8265 or set RAY_ADDRESS"):
        jobs.dashboard_address(None)
    monkeypatch.setenv("RAY_ADDRESS", "10.0.0.5:8265")
    assert jobs.dashboard_address(None) == "http://10.0.0.5:8265"
    assert jobs.dashboard_address("https://head:443") == "https://head:443"


@pytest.fixture
def auth_environment(monkeypatch, tmp_path):
    """A home without a token; afterwards the environment and Ray's cached auth config as they were."""
    from ray._raylet import Config

    monkeypatch.setenv("HOME", str(tmp_path))
    for name in ("RAY_AUTH_TOKEN", "RAY_AUTH_TOKEN_PATH", "RAY_AUTH_MODE"):
        monkeypatch.setenv(name, "")  # recorded, so undo restores the variable exactly
        monkeypatch.delenv(name)
    yield tmp_path
    monkeypatch.undo()
    Config.initialize("")


def test_token_detection(auth_environment):
    tmp_path = auth_environment
    from tuner.launch.placement import auth

    assert not auth.token_available()
    (tmp_path / ".ray").mkdir()
    (tmp_path / ".ray" / "auth_token").write_text("secret")
    assert auth.token_available()
    auth.enable_token_auth()
    import os

    assert os.environ["RAY_AUTH_MODE"] == "token"


def test_space_file_inside_the_working_directory_travels_as_a_relative_path(tmp_path):
    (tmp_path / "spaces").mkdir()
    (tmp_path / "spaces" / "mine.py").write_text("")
    assert jobs.ship_space_file(str(tmp_path / "spaces" / "mine.py"), tmp_path, tmp_path / "stage") == (
        "spaces/mine.py",
        [],
    )
    assert jobs.ship_space_file("cifar_small", tmp_path, tmp_path / "stage") == ("cifar_small", [])


def test_space_file_elsewhere_travels_as_an_importable_module(tmp_path, monkeypatch):
    from tuner.launch.registry import load_space

    outside = tmp_path / "elsewhere" / "far_space.py"
    outside.parent.mkdir()
    outside.write_text(
        '"""Far away."""\nfrom ray import tune\nfrom tuner import SearchSpace\n'
        "SPACE = SearchSpace(trainable='cifar', params={'lr': tune.uniform(0.1, 0.2)})\n"
    )
    work, stage = tmp_path / "work", tmp_path / "stage"
    work.mkdir()
    ref, modules = jobs.ship_space_file(str(outside), work, stage)
    assert ref.startswith("tuner_shipped_") and ref.endswith(".far_space") and len(modules) == 1
    monkeypatch.syspath_prepend(str(stage))  # what Ray does with py_modules on the cluster
    assert load_space(ref).trainable == "cifar"


def test_config_file_must_be_in_the_working_directory(tmp_path):
    outside = tmp_path / "sweep.yaml"
    outside.write_text("space: cifar_small\n")
    with pytest.raises(UsageError, match="outside the working directory"):
        jobs.relative_file("--config", str(outside), tmp_path / "work")


def test_unreachable_dashboard_is_a_one_line_error(run_cli):
    result = run_cli("jobs", "list", "--address", "http://127.0.0.1:9")
    assert result.code == 2 and result.err.startswith("tuner: error: cannot reach a Ray dashboard")
