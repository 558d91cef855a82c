"""One writer per experiment: a second claimant is refused in one line; a claim left by a dead process is taken."""

from __future__ import annotations

import json
import logging
import os
import subprocess
import sys

import pytest

from tuner import claim
from tuner.errors import UsageError

HOLD = """
import sys, time
from tuner.claim import claimed
with claimed(sys.argv[1], "tuner sweep"):
    print("held", flush=True)
    time.sleep(60)
"""


@pytest.fixture
def holder(tmp_path):
    """Another process holding the claim on an experiment folder."""
    folder = tmp_path / "exp"
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(folder)], stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "held"
    yield folder, proc
    proc.kill()
    proc.wait()


def test_a_second_writer_is_refused_naming_the_holder_and_changes_nothing(holder):
    folder, proc = holder
    before = sorted(os.listdir(folder)), (folder / claim.CLAIM_FILE).read_text()
    with pytest.raises(UsageError) as caught:
        with claim.claimed(str(folder), "tuner resume"):
            pytest.fail("the claim should have been refused")
    message = str(caught.value)
    assert message.startswith(f"exp is being run by pid {proc.pid} on ") and "(tuner sweep)" in message
    assert message.endswith("wait for it, or stop it first")
    assert (sorted(os.listdir(folder)), (folder / claim.CLAIM_FILE).read_text()) == before


def test_a_claim_left_by_a_killed_process_is_taken_over_with_a_notice(holder, caplog):
    folder, proc = holder
    proc.kill()  # kill -9: no clean-up ran, the claim file still names it
    proc.wait()
    assert json.loads((folder / claim.CLAIM_FILE).read_text())["pid"] == proc.pid
    with caplog.at_level(logging.WARNING, logger="tuner.claim"):
        with claim.claimed(str(folder), "tuner resume"):
            assert json.loads((folder / claim.CLAIM_FILE).read_text())["pid"] == os.getpid()
    assert f"left claimed by pid {proc.pid}" in caplog.text and "no longer running; taking it over" in caplog.text
    assert not (folder / claim.CLAIM_FILE).exists(), "a clean release leaves nothing behind"


def test_claims_in_turn_succeed(tmp_path):
    for _ in range(2):
        with claim.claimed(str(tmp_path / "exp"), "tuner sweep"):
            pass


def test_a_bucket_claim_is_a_lease(tmp_path, caplog, monkeypatch):
    """The lease path, on a file:// URI through the same pyarrow calls a bucket takes."""
    monkeypatch.setattr(claim, "SETTLE_S", 0.05)
    uri = f"file://{tmp_path}/bucket/exp"
    first = claim.LeaseClaim(uri, "tuner sweep", lease_s=30)
    first.acquire()
    try:
        with pytest.raises(UsageError, match="is being run by pid"):
            claim.LeaseClaim(uri, "tuner resume", lease_s=30).acquire()
    finally:
        first._stop.set()  # the holder stops renewing, as a lost node would
    stale = json.loads((tmp_path / "bucket/exp" / claim.CLAIM_FILE).read_text())
    stale["renewed"] -= 60
    stale["host"] = "another-host"
    (tmp_path / "bucket/exp" / claim.CLAIM_FILE).write_text(json.dumps(stale))
    second = claim.LeaseClaim(uri, "tuner resume", lease_s=30)
    with caplog.at_level(logging.WARNING, logger="tuner.claim"):
        second.acquire()
    assert "on another-host" in caplog.text and "whose lease ran out; taking it over" in caplog.text
    second.release()
    assert not (tmp_path / "bucket/exp" / claim.CLAIM_FILE).exists()
