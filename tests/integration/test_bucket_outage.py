"""A sweep into a bucket whose store goes away mid-sweep (a real S3 API, moto's server, behind a proxy the test
takes down): an outage shorter than --storage-timeout is ridden out, a slow store still completes, and a longer
outage stops the sweep in one line (exit 4) that `tuner resume` continues once the store is back; the review
commands and `tuner resume` during the outage say so in one line."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.bucket import CREDENTIALS, bucket_behind_proxy
from tests.instant import instant_space

TRIALS, EPOCHS = 2, 5
STORAGE = "s3://sweeps/runs"


@pytest.fixture(scope="module")
def bucket():
    with bucket_behind_proxy() as proxy:
        yield proxy


def _tuner(*args: str, log: Path) -> subprocess.Popen:
    """``tuner ARGS`` in a process of its own (its own local Ray, whose trials reach the store through the
    proxy too), its output in ``log``.out and ``log``.err."""
    env = {**os.environ, "RAY_ADDRESS": ""}
    return subprocess.Popen([sys.executable, "-m", "tuner", *args], env=env, stdin=subprocess.DEVNULL,
                            stdout=open(f"{log}.out", "w"), stderr=open(f"{log}.err", "w"))  # fmt: skip


def _ended(process: subprocess.Popen, log: Path, timeout: float = 300) -> tuple[int, str, str]:
    code = process.wait(timeout=timeout)
    return code, Path(f"{log}.out").read_text(), Path(f"{log}.err").read_text()


def _first_checkpoints(bucket, name: str, timeout: float = 120) -> None:
    """Wait, reading the store directly (not through the proxy), until a trial has saved its second epoch."""
    import pyarrow.fs

    direct = pyarrow.fs.S3FileSystem(endpoint_override=f"127.0.0.1:{bucket.target}", scheme="http",
                                     access_key=CREDENTIALS["AWS_ACCESS_KEY_ID"],
                                     secret_key=CREDENTIALS["AWS_SECRET_ACCESS_KEY"], region="us-east-1")  # fmt: skip
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = direct.get_file_info(pyarrow.fs.FileSelector(f"sweeps/runs/{name}", recursive=True,
                                                             allow_not_found=True))  # fmt: skip
        if any(info.base_name == "checkpoint_000001" for info in found):
            return
        time.sleep(0.2)
    raise AssertionError("no trial saved its second epoch in time")


def _every_epoch_once(experiment: str) -> None:
    from tuner import experiment as reader

    reviewed = {
        t.trial_id: [int(float(r["training_iteration"])) for r in t.rows] for t in reader.load(experiment).trials
    }
    wrong = {trial: epochs for trial, epochs in reviewed.items() if epochs != list(range(1, EPOCHS + 1))}
    assert len(reviewed) == TRIALS and not wrong, wrong or reviewed


@pytest.mark.slow  # real sweeps into a real S3 API, and outages of seconds
@pytest.mark.parametrize("trouble", ["short outage", "slow store", "long outage"])
def test_a_bucket_that_goes_away_mid_sweep(bucket, tmp_path, run_cli, monkeypatch, trouble):
    name = trouble.replace(" ", "-")
    experiment = f"{STORAGE}/{name}"
    bound = "8" if trouble == "long outage" else "60"
    space = instant_space(tmp_path, sleep=1.0)
    log = tmp_path / "sweep"
    sweep = _tuner("sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", str(TRIALS),
                   "--max-epochs", str(EPOCHS), "--storage-path", STORAGE, "--name", name,
                   "--storage-timeout", bound, log=log)  # fmt: skip
    try:
        _first_checkpoints(bucket, name)
        if trouble == "short outage":
            with bucket.outage(7):  # well under the bound
                pass
        elif trouble == "slow store":
            bucket.delay = 4.0  # each request held 4 s: past the S3 client's own 3 s, under tuner's
            time.sleep(12)
            bucket.delay = 0.0
        else:
            bucket.down()
        assert sweep.poll() is None, "the sweep ended before the trouble did: it met none"
        code, out, err = _ended(sweep, log)
    finally:
        if sweep.poll() is None:
            sweep.kill()
        bucket.delay = 0.0
    assert "Traceback" not in err, err[-4000:]
    if trouble != "long outage":
        assert code == 0, out[-3000:] + err[-3000:]
        assert f"{TRIALS} trial(s), 0 failed" in out, out[-2000:]
        _every_epoch_once(experiment)
        return

    # the long outage: one line naming the storage and its error, and what to do
    assert code == 4, out[-3000:] + err[-3000:]
    last = err.strip().splitlines()[-1]
    assert last.startswith("tuner: error: the storage s3://sweeps could not be reached for "), err[-3000:]
    assert "NETWORK_CONNECTION" in last and last.endswith(
        f"once it can be reached again, continue with: tuner resume {experiment}"
    ), last
    # while the store is still away, the review and a resume say so in one line each
    monkeypatch.setenv("TUNER_STORAGE_TIMEOUT", "2")
    for command in (("results", experiment), ("report", experiment, "--out", str(tmp_path / "r.html")),
                    ("resume", experiment)):  # fmt: skip
        said = run_cli(*command)
        assert said.code == 4, (command, said.out, said.err)
        lines = said.err.strip().splitlines()
        assert len(lines) == 1 and re.match(r"tuner: error: the storage s3://sweeps could not be reached for "
                                            r"[\d.]+ s \(AWS Error NETWORK_CONNECTION", lines[0]), (command, said.err)  # fmt: skip
    monkeypatch.delenv("TUNER_STORAGE_TIMEOUT")
    bucket.up()
    resumed = _tuner("resume", experiment, log=tmp_path / "resume")
    code, out, err = _ended(resumed, tmp_path / "resume")
    assert code == 0 and "Traceback" not in err, out[-3000:] + err[-3000:]
    _every_epoch_once(experiment)
