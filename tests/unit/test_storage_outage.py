"""A bucket that cannot be reached for a while: tuner's reads and writes wait for it up to the storage timeout,
then end in one error naming it; against a real S3 API (moto's server) behind a proxy the test takes down."""

from __future__ import annotations

import pickle
import threading
import time

import pytest

from tests.bucket import bucket_behind_proxy
from tuner import storage, storage_outage
from tuner.errors import EXIT_STORAGE, StorageUnreachable, UsageError

BUCKET = "s3://sweeps/exp"


@pytest.fixture(scope="module")
def bucket():
    with bucket_behind_proxy() as proxy:
        yield proxy


@pytest.fixture(autouse=True)
def _fresh(bucket):
    """Each test starts with the store up and nothing given up on."""
    bucket.delay = 0.0
    if bucket._listener is None:
        bucket.up()
    storage_outage.start_afresh()
    yield


def test_a_short_outage_is_waited_out_and_the_file_is_written_whole(bucket):
    storage.write_text(BUCKET, "before.txt", "x")
    with storage_outage.bounded(10), bucket.outage(1.5):
        started = time.monotonic()
        storage.write_text(BUCKET, "during.txt", "written while the store was away\n" * 1000)
        assert time.monotonic() - started >= 1.0  # it did wait
    assert storage.read_text(BUCKET, "during.txt") == "written while the store was away\n" * 1000
    assert storage_outage.gave_up("s3://sweeps") is None


@pytest.mark.slow  # waits out the bound
def test_past_the_bound_one_error_names_the_storage_and_what_it_said(bucket, caplog):
    storage.write_text(BUCKET, "kept.txt", "whole")
    bucket.down()
    started = time.monotonic()
    with storage_outage.bounded(2), pytest.raises(StorageUnreachable) as raised:
        storage.read_text(BUCKET, "kept.txt")
    took = time.monotonic() - started
    error = raised.value
    assert 2 <= took < 15, took
    assert error.exit_code == EXIT_STORAGE and isinstance(error, OSError)
    assert str(error).startswith("the storage s3://sweeps could not be reached for "), error
    assert "NETWORK_CONNECTION" in str(error) and "\n" not in str(error), error
    assert storage_outage.gave_up("s3://sweeps") == str(error)
    assert storage_outage.gave_up_in(f"Traceback ...\ntuner.errors.StorageUnreachable: {error}\n") == str(
        error
    )
    # given up: the next call tries once, it does not wait the bound again
    started = time.monotonic()
    with storage_outage.bounded(60), pytest.raises(StorageUnreachable):
        storage.exists(BUCKET, "kept.txt")
    assert time.monotonic() - started < 15
    bucket.up()
    assert storage.read_text(BUCKET, "kept.txt") == "whole"  # nothing written half, and it answers again
    assert storage_outage.gave_up("s3://sweeps") is None


def test_an_answer_that_is_no_is_never_waited_for(bucket):
    started = time.monotonic()
    assert storage.read_text(BUCKET, "no-such-file.txt") is None
    with pytest.raises(UsageError, match="the bucket 'no-such-bucket' does not exist"):
        storage.check_usable("s3://no-such-bucket/sweeps")
    assert time.monotonic() - started < 5
    assert not storage_outage.is_unreachable(FileNotFoundError("NETWORK_CONNECTION"))
    assert not storage_outage.is_unreachable(OSError("AWS Error ACCESS_DENIED during PutObject operation"))


def test_the_waiting_filesystem_travels_to_a_trial_with_its_bound(bucket):
    import pyarrow.fs

    fs, path = storage.filesystem(BUCKET)
    copy = pickle.loads(pickle.dumps(fs))
    assert copy.handler.bound == fs.handler.bound and copy.handler.scheme == "s3"
    with copy.open_output_stream(f"{path}/pickled.txt") as stream:
        stream.write(b"sent from a copy")
    assert copy.get_file_info(f"{path}/pickled.txt").type == pyarrow.fs.FileType.File


def test_arrow_copies_many_files_through_it_while_other_threads_write(bucket, tmp_path):
    """Arrow closes each copied file on its IO threads, which here send it: sent in the background, each
    would wait for an IO thread of its own, and the copy hung with every IO thread so waiting."""
    import pyarrow.fs

    for i in range(40):
        (tmp_path / f"part{i}").write_text("x" * 100)
    fs, path = storage.filesystem(BUCKET)
    writer = threading.Thread(target=lambda: [storage.write_text(BUCKET, f"w{i}", "1") for i in range(10)])
    done = threading.Event()

    def copy() -> None:
        pyarrow.fs.copy_files(str(tmp_path), f"{path}/copied", destination_filesystem=fs)
        fs.delete_dir(f"{path}/copied")
        pyarrow.fs.copy_files(str(tmp_path), f"{path}/copied", destination_filesystem=fs)
        done.set()

    copier = threading.Thread(target=copy, daemon=True)
    writer.start()
    copier.start()
    assert done.wait(60), "the copy hung"
    writer.join()
    assert len(fs.get_file_info(pyarrow.fs.FileSelector(f"{path}/copied"))) == 40


def test_the_sweeps_stop_line_says_what_to_do_for_an_outage_and_for_a_full_disk():
    from tuner.folder.fates import refusal

    gone = "the storage s3://sweeps could not be reached for 10 s (AWS Error NETWORK_CONNECTION during HeadObject)"
    traceback = f"Traceback (most recent call last):\n  ...\ntuner.errors.StorageUnreachable: {gone}\n"
    assert refusal(traceback) == gone  # a trial failed by it is stopped by the storage, run again on resume
    assert storage_outage.how_to_continue(gone) == "once it can be reached again,"
    assert (
        storage_outage.how_to_continue("the storage is full (no space left on device)") == "free space, then"
    )


def test_the_bound_is_a_setting_resolved_like_the_others(monkeypatch, tmp_path):
    from tests.instant import instant_space
    from tuner.launch.resolve import resolve

    space = str(instant_space(tmp_path))
    assert resolve({"space": space}, environ={}).storage_timeout == storage_outage.DEFAULT_TIMEOUT_S
    assert resolve({"space": space}, environ={"TUNER_STORAGE_TIMEOUT": "45"}).storage_timeout == 45
    given = {"space": space, "storage_timeout": 20}
    assert resolve(given, environ={"TUNER_STORAGE_TIMEOUT": "45"}).storage_timeout == 20
    with pytest.raises(UsageError, match="--storage-timeout must be more than 0 seconds"):
        resolve({"space": space, "storage_timeout": 0}, environ={})
    monkeypatch.setenv("TUNER_STORAGE_TIMEOUT", "90")
    assert storage_outage.timeout_s() == 90 and storage_outage.for_resume(30) == 90
    monkeypatch.delenv("TUNER_STORAGE_TIMEOUT")
    assert storage_outage.for_resume(30) == 30
    with storage_outage.bounded(7):
        assert storage_outage.timeout_s() == 7
    assert storage_outage.timeout_s() == storage_outage.DEFAULT_TIMEOUT_S


def test_a_trial_waiting_for_the_storage_is_not_stopped_as_hung(bucket, tmp_path):
    """The trials wait at their checkpoint while the store is away: the hung-trial watch counts no silence then
    (an outage longer than the trial timeout would otherwise end every running trial as hung)."""
    from types import SimpleNamespace

    from tuner.folder.fates import FateLog, recorded
    from tuner.launch.guards.watchdog import HungTrialWatch
    from tuner.limits import TrialTimeout

    now = [0.0]
    folder = str(tmp_path / "exp")
    watch = HungTrialWatch(TrialTimeout(fixed=10.0), FateLog(folder), clock=lambda: now[0])
    running = SimpleNamespace(trial_id="t", status="RUNNING", last_result={"training_iteration": 1},
                              has_reported_at_least_once=True, temporary_state=SimpleNamespace(ray_actor=None))  # fmt: skip
    watch.on_trial_start(0, [running], running)
    bucket.down()
    waiter = threading.Thread(target=lambda: storage.exists(BUCKET, "x"))
    with storage_outage.bounded(30):
        waiter.start()
        deadline = time.monotonic() + 20
        while not storage_outage.waiting() and time.monotonic() < deadline:
            time.sleep(0.05)
        now[0] = 100.0  # silent far past its limit, all of it while the store was away
        watch.on_step_end(0, [running])
        assert recorded(folder) == {}
        bucket.up()
        waiter.join()
    assert not storage_outage.waiting()
    now[0] = 109.0
    watch.on_step_end(0, [running])
    assert recorded(folder) == {}, "its silence counts from the outage's end"
    now[0] = 111.0
    watch.on_step_end(0, [running])
    assert recorded(folder)["t"]["failures"][0].startswith("hung: no report for 11 s")


def test_a_sweep_stops_for_its_own_storage_only_and_a_new_sweep_forgets_an_earlier_outage(bucket, tmp_path):
    """In one process (a notebook): a bucket given up on stops the sweep writing there, not a sweep writing to
    another storage, and a sweep started after it begins with nothing given up on."""
    from tests.instant import instant_space
    from tuner.launch.guards import disk
    from tuner.launch.resolve import resolve

    class Watch(disk.StorageWatch):
        asked: str | None = None

        def _stop(self, reason: str) -> None:  # what it would ask of the running sweep
            self.asked = reason

    def stops(where: str) -> str | None:
        watch = Watch(storage.local_path(where), where)
        watch.on_step_end(0, [])
        return watch.asked

    bucket.down()
    with storage_outage.bounded(0.2), pytest.raises(StorageUnreachable) as raised:
        storage.read_text(BUCKET, "kept.txt")
    bucket.up()
    local = str(tmp_path / "local")
    assert [stops(BUCKET), stops("s3://elsewhere/exp"), stops(local)] == [str(raised.value), None, None]
    resolve({"space": str(instant_space(tmp_path))}, environ={})  # the next sweep in this process
    assert storage_outage.gave_up("s3://sweeps") is None and stops(BUCKET) is None


def test_a_claim_written_after_an_outage_is_fresh(bucket, monkeypatch):
    """The claim is stamped by the try that lands: one written after an outage longer than its lease is not
    taken from the live sweep by a waiting resume."""
    import json

    from tuner import claim

    monkeypatch.setattr(claim, "SETTLE_S", 0.05)
    held = claim.LeaseClaim(BUCKET, "tuner sweep", lease_s=1.0)
    with storage_outage.bounded(30), bucket.outage(1.5):
        held._write()  # a renewal in the outage: it waits
    stamped = json.loads(storage.read_text(BUCKET, claim.CLAIM_FILE) or "{}")
    assert time.time() - stamped["renewed"] < held.lease_s
    with pytest.raises(UsageError, match="is being run by pid"):
        claim.LeaseClaim(BUCKET, "tuner resume", lease_s=1.0).acquire()
    storage.remove(BUCKET, claim.CLAIM_FILE)


def test_each_command_waits_by_its_own_bound_not_one_an_earlier_command_left(bucket, run_cli, monkeypatch):
    """A notebook or a test process runs commands one after another: a sweep's 5 minutes, set for it, must not
    hold a later review to 5 minutes when TUNER_STORAGE_TIMEOUT says 2 s (nor print a waiting notice first)."""
    storage.write_text(BUCKET, "experiment_state-x.json", "{}")
    storage_outage.set_timeout(300)  # what an earlier sweep in this process set
    monkeypatch.setenv(storage_outage.ENV, "2")
    assert storage_outage.for_resume(300) == 2
    bucket.down()
    started = time.monotonic()
    said = run_cli("results", BUCKET)
    assert time.monotonic() - started < 30
    assert said.code == EXIT_STORAGE, said
    lines = said.err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(
        "tuner: error: the storage s3://sweeps could not be reached for "
    ), said.err
    assert "5 min" not in lines[0], lines[0]
