"""Where users trip: bad addresses and storage, existing names, tutorial trainables, crashing trials, noise."""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time

import pytest

from tests.instant import instant_space
from tuner import experiment

pytestmark = pytest.mark.slow

SYNTHETIC = ("--dataset", "synthetic", "--synthetic-size", "200", "--max-epochs", "2")


def tuner_process(*args, timeout: float = 300) -> subprocess.CompletedProcess:
    """``tuner`` in its own process, as a user runs it (a fresh driver, no Ray started yet)."""
    return subprocess.run([sys.executable, "-m", "tuner", *map(str, args)], capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})  # fmt: skip


def one_line_error(proc, *fragments: str) -> None:
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode == 2, proc.stdout[-1500:] + proc.stderr[-1500:]
    assert len(lines) == 1 and lines[0].startswith("tuner: error: "), proc.stderr
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


@pytest.mark.parametrize(
    "address, env",
    [("127.0.0.1:1", {}), ("ray://127.0.0.1:1", {}), ("auto", {"RAY_ADDRESS": "127.0.0.1:1"})],
)
def test_an_address_where_no_cluster_answers_fails_fast_naming_it(tmp_path, address, env, monkeypatch):
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    started = time.monotonic()
    proc = tuner_process("sweep", "--space", "cifar_small", *SYNTHETIC, "--address", address, "--storage-path", tmp_path)
    one_line_error(proc, f"cannot reach a Ray cluster at {address}", "port 1", "ray status")
    assert time.monotonic() - started < 30
    assert not list(tmp_path.iterdir()), "nothing written"


def test_an_address_where_another_service_listens_is_refused_in_one_line_not_waited_on(tmp_path):
    """The dashboard's port given for the GCS's (an HTTP server answers there): Ray's own start waits on it for
    minutes. The server listens on 127.0.0.2, a loopback address Ray does not rewrite to the node's IP."""
    import http.server
    import threading

    server = http.server.ThreadingHTTPServer(("127.0.0.2", 0), http.server.SimpleHTTPRequestHandler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    address = f"127.0.0.2:{server.server_address[1]}"
    try:
        started = time.monotonic()
        proc = tuner_process("sweep", "--space", "cifar_small", *SYNTHETIC, "--address", address,
                             "--storage-path", tmp_path)  # fmt: skip
        one_line_error(proc, f"cannot join a Ray cluster at {address}", "no Ray GCS answered", "6379")
        assert time.monotonic() - started < 60  # a 15 s probe and the start, on a busy 2-core box
        assert not list(tmp_path.iterdir()), "nothing written"
    finally:
        server.shutdown()


def test_an_existing_name_is_refused_and_the_experiment_left_as_it_was(run_cli, tmp_path):
    space = instant_space(tmp_path)
    first = run_cli("sweep", "--space", space, "--num-samples", "2", "--storage-path", tmp_path, "--name", "mine")
    assert first.code == 0, first.err[-2000:]
    folder = tmp_path / "mine"
    before = sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*"))
    again = run_cli("sweep", "--space", space, "--num-samples", "3", "--storage-path", tmp_path, "--name", "mine")
    assert again.code == 2 and len(again.err.strip().splitlines()) == 1
    assert "experiment mine already exists" in again.err and f"tuner resume {folder}" in again.err
    assert "--name" in again.err and "a finished one grows with --num-samples N" in again.err
    assert sorted((p.relative_to(folder), p.stat().st_mtime_ns) for p in folder.rglob("*")) == before


def test_generated_names_never_collide(tmp_path, monkeypatch):
    from tuner.launch import resolve as config

    monkeypatch.setattr(config, "default_name", lambda *args: "same-second")
    (tmp_path / "same-second").mkdir()
    (tmp_path / "same-second" / "tuner_config.yaml").write_text("space: x\n")
    resolved = config.resolve({"space": "cifar_small", "storage_path": str(tmp_path)}, environ={})
    assert resolved.name == "same-second-2"


@pytest.mark.parametrize("kind", ["a file", "a missing bucket"])
def test_storage_that_cannot_hold_experiments_fails_before_ray_starts(run_cli, tmp_path, kind):
    if kind == "a file":
        target = tmp_path / "notes.txt"
        target.write_text("mine")
        expected = "is a file, not a folder"
    else:
        target, expected = "mock:///no-such-bucket/sweeps", "the bucket 'no-such-bucket' does not exist"
    result = run_cli("sweep", "--space", "cifar_small", *SYNTHETIC, "--storage-path", target)
    assert result.code == 2 and expected in result.err and len(result.err.strip().splitlines()) == 1
    if kind == "a file":
        assert (tmp_path / "notes.txt").read_text() == "mine"


TUTORIAL = '''"""The tutorial's trainable as its page writes it: ray.train's report, get_checkpoint and Checkpoint."""
import os
import pickle
import tempfile

from ray import train, tune
from ray.train import Checkpoint

from tuner import SearchSpace


def train_cifar(config, data_dir=None):
    start = 0
    checkpoint = train.get_checkpoint()
    if checkpoint:
        with checkpoint.as_directory() as folder:
            with open(os.path.join(folder, "data.pkl"), "rb") as fp:
                start = pickle.load(fp)["epoch"]
    for epoch in range(start, 4):
        loss = abs(config["lr"] - 0.01) * 100 + 1 / (epoch + 1) + (0 if data_dir else 100)
        with tempfile.TemporaryDirectory() as folder:
            with open(os.path.join(folder, "data.pkl"), "wb") as fp:
                pickle.dump({"epoch": epoch + 1}, fp)
            train.report({"loss": loss, "accuracy": 1 / (1 + loss)}, checkpoint=Checkpoint.from_directory(folder))


SPACE = SearchSpace(trainable=train_cifar, params={"lr": tune.loguniform(1e-4, 1e-1)})
'''

OLD_KEYWORDS = '''"""An older trainable: tune.report with keywords."""
from ray import tune

from tuner import SearchSpace


def objective(config):
    for step in range(3):
        tune.report(score=-(config["x"] - 2.0) ** 2 + step, step=step)


SPACE = SearchSpace(trainable=objective, metric="score", mode="max", params={"x": tune.uniform(0.0, 4.0)})
'''


@pytest.mark.parametrize("scheduler", ["asha", "hyperband"])
def test_the_tutorials_trainable_runs_unchanged_with_one_notice(run_cli, tmp_path, scheduler):
    space = tmp_path / "tutorial.py"
    space.write_text(TUTORIAL)
    result = run_cli("sweep", "--space", space, "--scheduler", scheduler, "--num-samples", "4", "--max-epochs", "4",
                     "--data-dir", tmp_path, "--storage-path", tmp_path, "--name", "tut")  # fmt: skip
    assert result.code == 0, result.out[-2000:] + result.err[-2000:]
    assert result.out.count("note: the trainable uses the ray.train API") == 1
    record = experiment.load(str(tmp_path / "tut"))
    assert {t.status for t in record.trials} == {"TERMINATED"} and not record.failed()
    assert record.best_trial().best("loss", "min") < 100, "data_dir came from --data-dir"
    assert len(list((tmp_path / "tut").glob("*/checkpoint_*"))) >= 4, "every trial kept a checkpoint"
    if scheduler == "hyperband":  # paused trials continued from their checkpoints: every epoch ran once
        assert all([int(float(r["training_iteration"])) for r in t.rows] == list(range(1, t.epochs + 1))
                   for t in record.trials)  # fmt: skip


def test_a_trainable_reporting_with_keywords_runs(run_cli, tmp_path):
    space = tmp_path / "old.py"
    space.write_text(OLD_KEYWORDS)
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--num-samples", "3",
                     "--storage-path", tmp_path, "--name", "old")  # fmt: skip
    assert result.code == 0, result.err[-2000:]
    assert "report(name=value) keywords" in result.out
    assert experiment.load(str(tmp_path / "old")).best_trial().epochs == 3


CRASHING = '''"""Every trial raises after its first epoch, two frames deep in the user's own code."""
from ray import tune

from tuner import SearchSpace


def check(x):
    raise ValueError(f"bad value {x:.3f}")


def train(config):
    tune.report({"loss": config["x"]})
    check(config["x"])


SPACE = SearchSpace(trainable=train, params={"x": tune.uniform(0, 1)})
'''


def test_a_sweep_whose_every_trial_raises_shows_the_users_traceback_once(tmp_path):
    space = tmp_path / "crashing.py"
    space.write_text(CRASHING)
    proc = tuner_process("sweep", "--space", space, "--num-samples", "3", "--storage-path", tmp_path, "--name", "c")
    assert proc.returncode == 1  # a best of failed trials is no success
    assert proc.stderr.strip().splitlines()[-1].startswith("tuner: error: every trial failed (3 of 3)"), proc.stderr
    everything = proc.stdout + proc.stderr
    assert everything.count('crashing.py", line 13, in train') == 1, everything[-3000:]
    assert everything.count('crashing.py", line 8, in check') == 1
    assert "site-packages/ray" not in everything and "/tmp/ray/session" not in everything
    assert "Traceback" not in everything
    failed = [line for line in proc.stdout.splitlines() if line.startswith("failed: ")]
    assert len(failed) == 3
    for line in failed:
        path = re.search(r"\((/\S+/error\.txt)\)$", line).group(1)
        assert path.startswith(str(tmp_path / "c")) and os.path.isfile(path)


def test_the_terminal_shows_what_is_true_and_nothing_else(tmp_path):
    proc = tuner_process("sweep", "--space", instant_space(tmp_path), "--num-samples", "6", "--max-epochs", "4",
                         "--scheduler", "asha", "--searcher", "random", "--storage-path", tmp_path, "--name", "quiet")  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    everything = proc.stdout + proc.stderr
    for noise in ("RAY_AUTH_MODE=disabled", "Result logdir", "num_stopped=", "Bracket:"):
        assert noise not in everything, noise
    cutoffs = [line for line in proc.stdout.splitlines() if line.startswith("rung cutoffs")]
    assert cutoffs and not re.search(r"epoch \d+: -\d", cutoffs[-1]), cutoffs[-1]
    best = [line for line in proc.stdout.splitlines() if line.startswith("Best so far:")]
    assert best and all(len(n.replace(".", "").lstrip("0")) <= 4 for n in re.findall(r"\d+\.\d+", best[-1])), best[-1]
    stopped = re.findall(r"ASHA: (\d+) trial\(s\) stopped early so far", proc.stdout)[-1]
    record = experiment.load(str(tmp_path / "quiet"))
    assert int(stopped) == sum(t.epochs < 4 for t in record.trials)


def test_tensorboard_on_a_busy_port_says_so_before_starting(run_cli, tmp_path):
    space = instant_space(tmp_path)
    assert run_cli("sweep", "--space", space, "--num-samples", "1", "--storage-path", tmp_path, "--name", "tb").code == 0
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        result = run_cli("tensorboard", tmp_path / "tb", "--port", port)
    assert result.code == 2 and f"port {port} on 127.0.0.1 is in use" in result.err
    assert "http://" not in result.out


LOGGING = '''"""A trainable that logs a warning and writes how the worker's log handlers print it."""
import logging

from ray import tune

from tuner import SearchSpace

OUT = {out!r}


def train(config):
    record = logging.LogRecord("mine", logging.WARNING, __file__, 1, "batch too big", None, None)
    with open(OUT, "a") as f:
        for handler in logging.getLogger().handlers:
            f.write(handler.format(record) + "\\n")
    tune.report({{"loss": config["x"]}})


SPACE = SearchSpace(trainable=train, params={{"x": tune.uniform(0, 1)}})
'''


def test_a_trainables_log_lines_name_its_trial_not_rays_context_ids(run_cli, tmp_path):
    space, out = tmp_path / "logs.py", tmp_path / "formatted.txt"
    space.write_text(LOGGING.format(out=str(out)))
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--num-samples", "2",
                     "--storage-path", tmp_path, "--name", "logs")  # fmt: skip
    assert result.code == 0, result.err[-2000:]
    lines = out.read_text().splitlines()
    trials = {t.trial_id for t in experiment.load(str(tmp_path / "logs")).trials}
    assert lines and {re.fullmatch(r"\(trial (\w+)\) WARNING: batch too big", line)[1] for line in lines} == trials
