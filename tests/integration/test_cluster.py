"""A real Ray head on 127.0.0.1 (our own process, stopped by its pid): job submission and multi-node storage."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
BIN = Path(sys.executable).parent


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"  # the job's `python` is this environment's
    for name in ("RAY_ADDRESS", "RAY_AUTH_MODE"):
        env.pop(name, None)
    return env


def _tuner(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tuner", *args], capture_output=True, text=True, timeout=timeout,
                          env=_env(), cwd=Path(__file__).resolve().parents[2])  # fmt: skip


def _node_ports() -> list[str]:
    """Fresh ports for a node's agents: the test session's own Ray already holds the default ones."""
    return [f"--dashboard-agent-listen-port={_free_port()}", f"--dashboard-agent-grpc-port={_free_port()}",
            f"--runtime-env-agent-port={_free_port()}", f"--metrics-export-port={_free_port()}"]  # fmt: skip


def _stop(proc: subprocess.Popen) -> None:
    """`ray start --block` stops its node's processes on SIGTERM; the group kill catches stragglers."""
    for sig, wait in ((signal.SIGTERM, 10), (signal.SIGKILL, 10)):
        try:
            os.killpg(proc.pid, sig)
            proc.wait(timeout=wait)
            return
        except ProcessLookupError:
            return
        except subprocess.TimeoutExpired:
            continue


@pytest.fixture(scope="module")
def head():
    temp = tempfile.mkdtemp(prefix="th", dir="/tmp")  # short: Ray's socket paths must fit in 107 bytes
    gcs, dashboard = _free_port(), _free_port()
    # its processes' RAY_ADDRESS names it: with the test session's own Ray on this machine, a client inside it that
    # looks for "the" cluster (Ray Train's cleaner, through the state API) would otherwise find that one
    env = {**_env(), "RAY_ADDRESS": f"127.0.0.1:{gcs}"}
    proc = subprocess.Popen(
        [str(BIN / "ray"), "start", "--head", "--block", "--node-ip-address=127.0.0.1", f"--port={gcs}",
         "--include-dashboard=true", "--dashboard-host=127.0.0.1", f"--dashboard-port={dashboard}",
         f"--ray-client-server-port={_free_port()}", "--num-cpus=2", f"--temp-dir={temp}", *_node_ports()],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, start_new_session=True,
    )  # fmt: skip
    address = f"http://127.0.0.1:{dashboard}"
    try:
        deadline = time.time() + 120
        while _tuner("jobs", "list", "--address", address, timeout=60).returncode != 0:
            assert proc.poll() is None, "the Ray head exited"
            assert time.time() < deadline, "the Ray head's dashboard never answered"
            time.sleep(2)
        yield {"address": address, "gcs": f"127.0.0.1:{gcs}", "temp": temp}
    finally:
        _stop(proc)
        shutil.rmtree(temp, ignore_errors=True)


def _wait_for(address: str, job: str, states: set[str], timeout: float = 240) -> str:
    deadline = time.time() + timeout
    while time.time() < deadline:
        status = _tuner("jobs", "status", job, "--address", address).stdout.strip()
        if status in states:
            return status
        time.sleep(2)
    raise AssertionError(f"job {job} never reached {states}")


def test_submit_a_sweep_follow_it_read_its_logs_and_stop_another(head, tmp_path):
    address = head["address"]
    space = tmp_path / "outside_space.py"  # not under the shipped working directory: shipped beside it
    space.write_text(
        '"""A user space from outside the project folder."""\n'
        "from ray import tune\nfrom tuner import SearchSpace\n"
        "SPACE = SearchSpace(trainable='cifar', params={'lr': tune.loguniform(1e-3, 1e-1), 'batch_size': 8,\n"
        "                                               'l1': 16, 'l2': 16})\n"
    )
    submitted = _tuner("submit", "--address", address, "--space", str(space), "--dataset", "synthetic",
                       "--synthetic-size", "200", "--num-samples", "2", "--max-epochs", "1", "--scheduler", "fifo",
                       "--storage-path", str(tmp_path), "--name", "remote")  # fmt: skip
    assert submitted.returncode == 0, submitted.stderr[-2000:]
    job = submitted.stdout.strip().splitlines()[-1]
    assert job.startswith("raysubmit_")
    state = _wait_for(address, job, {"SUCCEEDED", "FAILED", "STOPPED"})
    assert state == "SUCCEEDED", _tuner("jobs", "logs", "--address", address, job).stdout[-3000:]
    logs = _tuner("jobs", "logs", job, "--address", address).stdout
    assert "| trial " in logs and "best trial:" in logs and "outside_space" in logs
    assert (tmp_path / "remote" / "best_config.json").is_file()
    assert job in _tuner("jobs", "list", "--address", address).stdout
    followed = _tuner("jobs", "logs", job, "--follow", "--address", address)
    assert followed.returncode == 0 and "best trial:" in followed.stdout

    long = _tuner("submit", "--address", address, "--space", "cifar_small", "--dataset", "synthetic",
                  "--num-samples", "50", "--max-epochs", "20", "--storage-path", str(tmp_path), "--name", "long")  # fmt: skip
    long_job = long.stdout.strip().splitlines()[-1]
    _wait_for(address, long_job, {"RUNNING"})
    stopped = _tuner("jobs", "stop", long_job, "--address", address)
    assert stopped.returncode == 0 and "stopping" in stopped.stdout
    assert _wait_for(address, long_job, {"STOPPED", "FAILED", "SUCCEEDED"}) == "STOPPED"


def test_without_the_token_the_error_explains_it(head, tmp_path):
    env_home = tmp_path / "home"
    env_home.mkdir()
    proc = subprocess.run([sys.executable, "-m", "tuner", "jobs", "list", "--address", head["address"]],
                          capture_output=True, text=True, env={**_env(), "HOME": str(env_home)})  # fmt: skip
    assert proc.returncode == 2
    assert "requires its auth token" in proc.stderr and "RAY_AUTH_TOKEN" in proc.stderr


def test_unknown_job_is_a_one_line_error(head):
    proc = _tuner("jobs", "status", "raysubmit_doesnotexist", "--address", head["address"])
    assert proc.returncode == 2 and len(proc.stderr.strip().splitlines()) == 1


def _unshare_works() -> bool:
    probe = subprocess.run(["unshare", "-m", "true"], capture_output=True)
    return probe.returncode == 0


@pytest.mark.skipif(shutil.which("unshare") is None or not _unshare_works(), reason="needs mount namespaces")
def test_local_storage_on_a_multi_node_cluster_is_refused(head, tmp_path):
    """A worker node whose view of the storage folder differs (its own mount) cannot share results."""
    storage = tmp_path / "storage"
    storage.mkdir()
    node_temp = tempfile.mkdtemp(prefix="tw", dir="/tmp")
    worker = subprocess.Popen(
        ["unshare", "-m", "sh", "-c",
         f"mount -t tmpfs tmpfs {storage} && exec {BIN / 'ray'} start --block --address={head['gcs']} "
         f"--node-ip-address=127.0.0.1 --num-cpus=1 --temp-dir={node_temp} {' '.join(_node_ports())}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**_env(), "RAY_AUTH_MODE": "token"},
        start_new_session=True,
    )  # fmt: skip
    try:
        probe = ("import ray,sys,time; from tuner.launch.placement.auth import enable_token_auth; enable_token_auth()\n"
                 "ray.init(address=sys.argv[1]); t=time.time()\n"
                 "while len([n for n in ray.nodes() if n['Alive']]) < 2 and time.time() - t < 90: time.sleep(1)\n"
                 "print(len([n for n in ray.nodes() if n['Alive']]))")  # fmt: skip
        nodes = subprocess.run(
            [sys.executable, "-c", probe, head["gcs"]], capture_output=True, text=True, env=_env()
        )
        assert nodes.stdout.strip() == "2", nodes.stderr[-1000:]
        flags = ["sweep", "--address", head["gcs"], "--space", "cifar_small", "--dataset", "synthetic",
                 "--synthetic-size", "100", "--num-samples", "1", "--max-epochs", "1", "--storage-path", str(storage),
                 "--name", "scattered"]  # fmt: skip
        refused = _tuner(*flags)
        assert refused.returncode == 2, refused.stderr[-2000:]
        assert "is not visible from 1 of 2 nodes" in refused.stderr and "s3://" in refused.stderr
        assert "--allow-local-storage" in refused.stderr
        allowed = _tuner(*flags, "--allow-local-storage")
        assert allowed.returncode == 0, allowed.stderr[-2000:]
        assert "WARNING" in allowed.stderr and "--allow-local-storage" in allowed.stderr
    finally:
        _stop(worker)
        shutil.rmtree(node_temp, ignore_errors=True)


# A Ray Train TorchTrainer in each trial, written as Ray Train's guide to tuning writes it (a driver function,
# ``TuneReportCallback``).
RAY_TRAIN_SPACE = '''
import os
import tempfile

import ray.train
import ray.train.torch
import torch
from ray import tune
from ray.train.torch import TorchTrainer
from ray.tune.integration.ray_train import TuneReportCallback

from tuner import SearchSpace

STORAGE = {storage!r}


def train_fn_per_worker(config):
    torch.manual_seed(0)
    x = torch.randn(128, 8)
    y = (x.sum(1, keepdim=True) > 0).float()
    model = ray.train.torch.prepare_model(torch.nn.Linear(8, 1))
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])
    for epoch in range(3):  # one more than the sweep's --max-epochs: the sweep ends each trial first
        optimizer.zero_grad()
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x), y)
        loss.backward()
        optimizer.step()
        with tempfile.TemporaryDirectory() as folder:
            torch.save(model.state_dict(), os.path.join(folder, "model.pt"))
            ray.train.report({{"loss": loss.item(), "epoch": epoch}}, checkpoint=ray.train.Checkpoint.from_directory(folder))


def train_driver_fn(config):
    trainer = TorchTrainer(
        train_fn_per_worker,
        train_loop_config=config["train_loop_config"],
        scaling_config=ray.train.ScalingConfig(num_workers=1, use_gpu=False),
        run_config=ray.train.RunConfig(
            name=f"train-trial_id={{tune.get_context().get_trial_id()}}", storage_path=STORAGE,
            callbacks=[TuneReportCallback()],
        ),
    )
    trainer.fit()


SPACE = SearchSpace(
    trainable=train_driver_fn,
    params={{"train_loop_config": {{"lr": tune.loguniform(1e-3, 1e-1)}}}},
    metric="loss",
    mode="min",
)
'''


def test_a_ray_train_trainer_per_trial_leaves_its_workers_room_and_frees_them_when_the_sweep_ends_it(head, tmp_path):
    """On 2 CPUs each trial's one worker finds a CPU (1 trial at a time), and a trial the sweep ends before its
    trainer is done frees its worker for the next, through the head's dashboard; before, both trials waited for
    ever, or the second failed in a reused process."""
    space = tmp_path / "ray_train_space.py"
    space.write_text(RAY_TRAIN_SPACE.format(storage=str(tmp_path / "train_runs")))
    run = _tuner("sweep", "--address", head["gcs"], "--space", str(space), "--scheduler", "fifo", "--num-samples",
                 "2", "--max-epochs", "2", "--storage-path", str(tmp_path), "--name", "rt", "--trial-timeout", "90s",
                 timeout=400)  # fmt: skip
    assert run.returncode == 0, run.stdout[-3000:] + run.stderr[-3000:]
    assert "1 trial(s) at once" in run.stdout and "each trial runs a Ray Train trainer" in run.stdout
    assert "2 trial(s), 0 failed" in run.stdout, run.stderr[-4000:] + run.stdout[-1500:]
    assert "Failed to query Ray Train Controller" not in run.stdout + run.stderr
    got = json.loads(_tuner("results", str(tmp_path / "rt"), "--format", "json").stdout)
    assert [row["epochs"] for row in got] == [2, 2], got
