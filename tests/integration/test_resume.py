"""A sweep whose driver is killed with SIGKILL finishes every trial exactly once after ``tuner resume``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import pytest

from tuner.review import experiment

pytestmark = pytest.mark.slow

SPACE = '''"""Four slow-enough trials to kill mid-sweep."""
from ray import tune
from tuner import SearchSpace
SPACE = SearchSpace(trainable="cifar", params={"lr": tune.loguniform(1e-3, 1e-2), "batch_size": 4,
                                               "l1": 32, "l2": 16})
'''


def _first_results(folder, timeout=120.0) -> bool:
    deadline = time.time() + timeout
    while time.time() < deadline:
        for progress in folder.glob("*/progress.csv"):
            if len(progress.read_text().strip().splitlines()) >= 2:
                return True
        time.sleep(0.2)
    return False


def _ctrl_c_after_first_results(args: list[str], folder, cwd, signum=signal.SIGINT) -> tuple[int, str]:
    """Run ``tuner`` as a user would, press Ctrl-C (or send ``signum``) once trials have reported; exit code
    and stdout."""
    driver = subprocess.Popen([sys.executable, "-m", "tuner", *args], stdout=subprocess.PIPE, cwd=cwd,
                              stderr=subprocess.DEVNULL, text=True, start_new_session=True)  # fmt: skip
    try:
        assert _first_results(folder), "the sweep never reported"
        driver.send_signal(signum)
        out, _ = driver.communicate(timeout=120)
    finally:
        if driver.poll() is None:
            os.killpg(driver.pid, signal.SIGKILL)
    return driver.returncode, out


def test_kill_9_then_resume_runs_every_trial_once(run_cli, tmp_path):
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    folder = tmp_path / "killed"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--max-concurrent", "2", "--dataset", "synthetic", "--synthetic-size", "1500",
            "--storage-path", str(tmp_path), "--name", "killed"]  # fmt: skip
    driver = subprocess.Popen([sys.executable, "-m", "tuner", *args], stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL, start_new_session=True)  # fmt: skip
    try:
        assert _first_results(folder), "the sweep never reported"
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait(timeout=30)
    finally:
        try:  # whatever the dead driver's local Ray left behind
            os.killpg(driver.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    before = experiment.load(str(folder))
    assert sum(t.status == "TERMINATED" for t in before.trials) < 4, "killed too late to test a resume"
    interrupted = run_cli("results", folder, "--format", "json")  # readable mid-sweep, before any resume
    assert interrupted.code == 0
    assert any(row["status"] in ("RUNNING", "PENDING") for row in json.loads(interrupted.out))

    result = run_cli("resume", folder)
    assert result.code == 0, result.err[-3000:]
    assert "resuming" in result.out
    assert f"killed was left claimed by pid {driver.pid}" in result.err, result.err[-2000:]

    after = experiment.load(str(folder))
    assert len(after.trials) == 4, [t.trial_id for t in after.trials]
    for trial in after.trials:
        assert trial.status == "TERMINATED", (trial.trial_id, trial.status)
        epochs = [int(float(r["epoch"])) for r in trial.rows]
        assert epochs == [1, 2, 3], (trial.trial_id, epochs)  # none lost, none run twice


def test_ctrl_c_stops_in_order_and_says_how_to_resume(tmp_path):
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--dataset", "synthetic", "--synthetic-size", "1500", "--storage-path", str(tmp_path), "--name", "ctrlc"]  # fmt: skip
    code, out = _ctrl_c_after_first_results(args, tmp_path / "ctrlc", tmp_path)
    assert code == 130, out[-2000:]
    assert f"continue with: tuner resume {tmp_path / 'ctrlc'}" in out


def test_sigterm_during_a_cifar_sweep_then_resume_loses_nothing(run_cli, tmp_path):
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    folder = tmp_path / "term"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--dataset", "synthetic", "--synthetic-size", "1500", "--storage-path", str(tmp_path), "--name", "term"]  # fmt: skip
    code, out = _ctrl_c_after_first_results(args, folder, tmp_path, signal.SIGTERM)
    assert code == 143, out[-2000:]
    assert f"continue with: tuner resume {folder}" in out
    result = run_cli("resume", folder)
    assert result.code == 0, result.err[-3000:]
    after = experiment.load(str(folder))
    assert len(after.trials) == 4
    for trial in after.trials:
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3], trial.trial_id


def test_storage_given_as_a_uri_holds_the_whole_experiment_and_resumes_by_uri(run_cli, tmp_path):
    """Ray writes trials through pyarrow for ``s3://`` or ``gs://``; ``file://`` takes that same path here."""
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    uri = f"file://{tmp_path}/store/uri"
    folder = tmp_path / "store" / "uri"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--dataset", "synthetic", "--synthetic-size", "1500", "--storage-path", f"file://{tmp_path}/store",
            "--name", "uri"]  # fmt: skip
    code, out = _ctrl_c_after_first_results(args, folder, tmp_path)
    assert code == 130, out[-2000:]
    assert f"continue with: tuner resume {uri}" in out
    assert (folder / "tuner_config.yaml").is_file()
    assert not (tmp_path / "file:").exists()  # nothing written to a folder named after the scheme

    result = run_cli("resume", uri)
    assert result.code == 0, result.err[-3000:]
    assert f"resuming {uri}:" in result.out
    best = json.loads((folder / "best_config.json").read_text())
    assert best["trials"] == 4 and best["checkpoint"].startswith(f"file://{folder}/")
    listed = run_cli("results", uri, "--format", "json")
    assert listed.code == 0, listed.err
    rows = json.loads(listed.out)
    assert len(rows) == 4 and {row["status"] for row in rows} == {"TERMINATED"}
    for trial in experiment.load(str(folder)).trials:
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3], trial.trial_id
