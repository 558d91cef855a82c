"""A sweep whose driver is stopped (SIGKILL, SIGTERM, Ctrl-C) finishes every trial exactly once after ``tuner resume``."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from tensorboard.backend.event_processing.event_file_loader import EventFileLoader

from tests.integration.killing import kill_9_when
from tuner import experiment
from tuner.claim import CLAIM_FILE

pytestmark = pytest.mark.slow

SPACE = '''"""Four slow-enough trials to kill mid-sweep."""
from ray import tune
from tuner import SearchSpace
SPACE = SearchSpace(trainable="cifar", params={"lr": tune.loguniform(1e-3, 1e-2), "batch_size": 4,
                                               "l1": 32, "l2": 16})
'''


def _first_results(folder, timeout=120.0) -> bool:
    """Whether a trial has reported, waiting up to ``timeout`` (0: look once)."""
    deadline = time.time() + timeout
    while True:
        if any(len(p.read_text().strip().splitlines()) >= 2 for p in folder.glob("*/progress.csv")):
            return True
        if time.time() >= deadline:
            return False
        time.sleep(0.2)


def _tuner(args: list, cwd) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "tuner", *map(str, args)], stdout=subprocess.PIPE, cwd=cwd,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)  # fmt: skip


def _finish(proc: subprocess.Popen, timeout=180) -> tuple[str, str]:
    try:
        return proc.communicate(timeout=timeout)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _ctrl_c_after_first_results(args: list[str], folder, cwd, signum=signal.SIGINT) -> tuple[int, str, str]:
    """Run ``tuner`` as a user would, press Ctrl-C (or send ``signum``) once trials have reported; exit code,
    stdout and stderr."""
    driver = _tuner(args, cwd)
    try:
        assert _first_results(folder), "the sweep never reported"
        driver.send_signal(signum)
    finally:
        out, err = _finish(driver, timeout=120)
    return driver.returncode, out, err


def test_sigterm_during_a_cifar_sweep_then_resume_loses_nothing_and_a_second_writer_is_refused(run_cli, tmp_path):
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    folder = tmp_path / "term"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--dataset", "synthetic", "--synthetic-size", "600", "--storage-path", str(tmp_path), "--name", "term"]  # fmt: skip
    code, out, err = _ctrl_c_after_first_results(args, folder, tmp_path, signal.SIGTERM)
    assert code == 143, out[-2000:] + err[-2000:]
    assert "stopped by SIGTERM: " in out and f"continue with: tuner resume {folder}" in out
    assert "SIGTERM received: stopping the sweep" in err
    assert "*** SIGTERM" not in err and "Tuner.restore" not in err, err[-2000:]  # not Ray's crash report
    fates = [t.fate for t in experiment.load(str(folder)).trials]
    assert any(f.startswith("unfinished") for f in fates) and not any("own loop" in f for f in fates), fates
    page = (folder / "report.html").read_text()  # the page says so too, for whoever opens it later
    assert "Not finished: " in page and f"<code>tuner resume {folder}</code> continues it" in page

    first = _tuner(["resume", folder], tmp_path)
    try:
        deadline = time.monotonic() + 120
        while not (folder / CLAIM_FILE).is_file() and first.poll() is None and time.monotonic() < deadline:
            time.sleep(0.2)
        second = run_cli("resume", folder)
        assert second.code == 2, second.out[-1000:] + second.err[-1000:]
        assert len(second.err.strip().splitlines()) == 1, second.err
        assert f"term is being run by pid {first.pid} on " in second.err and "wait for it, or stop it first" in second.err
    finally:
        out, err = _finish(first)
    assert first.returncode == 0, out[-2000:] + err[-3000:]
    assert "Not finished: " not in (folder / "report.html").read_text()
    after = experiment.load(str(folder))
    assert len(after.trials) == 4
    for trial in after.trials:
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3], trial.trial_id  # none lost, none twice


def test_storage_given_as_a_uri_holds_the_whole_experiment_and_resumes_by_uri(run_cli, tmp_path):
    """Ray writes trials through pyarrow for ``s3://`` or ``gs://``; ``file://`` takes that same path here. Ctrl-C
    stops the sweep in order: exit code 130 and the resume command, by the URI given."""
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    uri = f"file://{tmp_path}/store/uri"
    folder = tmp_path / "store" / "uri"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "3",
            "--dataset", "synthetic", "--synthetic-size", "600", "--storage-path", f"file://{tmp_path}/store",
            "--name", "uri"]  # fmt: skip
    code, out, err = _ctrl_c_after_first_results(args, folder, tmp_path)
    assert code == 130, out[-2000:] + err[-2000:]
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
        # TensorBoard's curve too: the epoch before the Ctrl-C was left in the writer's queue and in the driver's
        # staging folder, and lost
        steps = []
        for events in sorted((folder / Path(trial.path).name).glob("events.out.tfevents.*")):
            steps += [e.step for e in EventFileLoader(str(events)).Load() if any(v.tag == "loss" for v in e.summary.value)]
        assert sorted(steps) == [1, 2, 3], (trial.trial_id, steps)


def test_checkpoints_damaged_or_deleted_after_a_kill_9_cost_no_trial_its_epochs(run_cli, tmp_path):
    """Killed with SIGKILL mid-sweep: its results read as they stand, and the resume takes over the claim the
    dead driver left. Every checkpoint of one trial but the oldest kept overwritten with garbage (a torn write, a bad disk), every
    checkpoint of another deleted: resumed, the first goes on from its whole one, the second starts over, and
    every trial ends with each of its epochs once; ``tuner export`` passes over a damaged best checkpoint."""
    space = tmp_path / "slow.py"
    space.write_text(SPACE)
    folder = tmp_path / "damaged"
    args = ["sweep", "--space", str(space), "--scheduler", "fifo", "--num-samples", "4", "--max-epochs", "4",
            "--max-concurrent", "2", "--dataset", "synthetic", "--synthetic-size", "600",
            "--storage-path", str(tmp_path), "--name", "damaged"]  # fmt: skip

    def checkpoints(trial_dir):
        return sorted(trial_dir.glob("checkpoint_*"))

    def saved() -> dict[str, tuple[str, int, str]]:
        """Unfinished trials (under their 4 epochs) with a checkpoint a resume restores them from, by Ray's saved
        state: folder -> (trial id, epochs, that checkpoint's folder name). Not the checkpoint the last result
        names: Ray registers it after that result, and may save its state in between."""
        from tuner.errors import UsageError
        from tuner.ray_compat import restored_from
        from tuner.ray_compat.state_file import latest_state_name, read_state

        name = latest_state_name(folder) if folder.is_dir() else None
        try:
            trials = read_state(folder, name)["trial_data"] if name else []
            restores = restored_from(str(folder)) if name else {}
        except (UsageError, ValueError):  # caught mid-write
            return {}
        out = {}
        for trial_json, runtime_json in trials:
            trial, last = json.loads(trial_json), json.loads(runtime_json).get("last_result") or {}
            if (
                trial["status"] != "TERMINATED"
                and int(last.get("training_iteration", 0)) < 4  # one that reported its last epoch reads no
                and trial["trial_id"] in restores  # checkpoint on resume: finished, whatever its status says
                and trial.get("relative_logdir")
            ):
                out[trial["relative_logdir"]] = (
                    trial["trial_id"], int(last["training_iteration"]), restores[trial["trial_id"]]
                )  # fmt: skip
        return out

    def past_its_oldest(item) -> bool:
        """The checkpoint Ray's state names for this trial is not the oldest on disk: damaging every one after the
        oldest damages the one a resume reads (on a busy box the state can lag the disk by a save)."""
        trial_dir, (_, _, name) = item
        kept = checkpoints(folder / trial_dir)
        return len(kept) >= 2 and kept[0].name != name

    def ready() -> bool:  # two unfinished trials with a saved checkpoint, one past its oldest checkpoint
        found = saved()
        return len(found) >= 2 and any(past_its_oldest(item) for item in found.items())

    pid = kill_9_when(args, ready)
    interrupted = run_cli("results", folder, "--format", "json")  # readable mid-sweep, before any resume
    assert interrupted.code == 0
    assert any(row["status"] in ("RUNNING", "PENDING") for row in json.loads(interrupted.out))
    named = sorted(saved().items(), key=lambda item: not past_its_oldest(item))
    assert len(named) >= 2 and past_its_oldest(named[0]), f"Ray's saved state at the kill: {named}"
    (damaged_dir, (damaged_id, _, _)), (deleted_dir, (deleted_id, _, _)) = named[0], named[1]
    damaged, deleted = folder / damaged_dir, folder / deleted_dir
    whole = checkpoints(damaged)[0]  # the oldest Ray kept (it keeps the two best and the latest)
    for checkpoint in checkpoints(damaged)[1:]:  # a torn write: every checkpoint after it
        (checkpoint / "checkpoint.pt").write_bytes(os.urandom(512))
    for checkpoint in checkpoints(deleted):
        shutil.rmtree(checkpoint)

    result = run_cli("resume", folder)
    assert result.code == 0, result.err[-3000:]
    assert "resuming" in result.out
    assert f"damaged was left claimed by pid {pid}" in result.err, result.err[-2000:]
    said = {line.split(":")[0]: line for line in result.out.splitlines() if " is damaged (" in line}
    assert set(said) == {f"trial {damaged_id}", f"trial {deleted_id}"}, (  # CI keeps a line's first 300 characters
        f"damaged {damaged_id}, deleted {deleted_id}; the resume named {sorted(said)}", named, said, result.out[:3000]
    )
    assert "checkpoint.pt has 512 bytes where" in said[f"trial {damaged_id}"], said
    epoch = int(whole.name.split("_")[1]) + 1  # Ray counts its checkpoint folders from 0
    assert f"it goes on from epoch {epoch} ({whole.name}); set aside as damaged-checkpoint_" in said[
        f"trial {damaged_id}"
    ], said
    assert (
        "(its folder is missing); no whole checkpoint is left, so it starts over"
        in said[f"trial {deleted_id}"]
    )
    set_aside = list(damaged.glob("damaged-checkpoint_*"))
    assert set_aside and all(len((d / "checkpoint.pt").read_bytes()) == 512 for d in set_aside), (
        "kept, not deleted"
    )
    after = experiment.load(str(folder))
    assert len(after.trials) == 4
    for trial in after.trials:
        assert trial.status == "TERMINATED", (trial.trial_id, trial.status)
        assert [int(float(r["epoch"])) for r in trial.rows] == [1, 2, 3, 4], trial.trial_id  # each epoch once

    best = after.best_trial()
    assert best is not None
    at_best = after.best_checkpoint(best)
    assert at_best is not None
    (Path(at_best) / "checkpoint.pt").write_bytes(b"torn")
    exported = run_cli("export", folder)
    assert exported.code == 0, exported.err
    out = json.loads(exported.out)
    assert out["checkpoint"] != at_best and "checkpoint.pt has 4 bytes where" in out["checkpoint_note"]
    assert exported.err.startswith("tuner: note: the best epoch's checkpoint"), exported.err
