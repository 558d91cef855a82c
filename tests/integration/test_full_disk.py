"""A real small disk filled mid-sweep: the sweep stops in one line with exit 4, loses nothing, and once space is
freed ``tuner resume`` finishes every trial, each epoch once."""

from __future__ import annotations

import csv
import json
import subprocess
import threading
import time
from pathlib import Path

import pytest

from tests.instant import instant_space

TRIALS, EPOCHS = 6, 6


@pytest.fixture
def small_disk(tmp_path):
    """An 80 MiB tmpfs (needs the right to mount, as root in CI); unmounted after."""
    mount_point = tmp_path / "small"
    mount_point.mkdir()
    mounted = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=80m", "tmpfs", str(mount_point)],
                             capture_output=True, text=True)  # fmt: skip
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here: {mounted.stderr.strip()}")
    yield mount_point
    subprocess.run(["umount", "-l", str(mount_point)], check=False)


def _fill_after_reports(folder: Path, filler: Path, leave: int) -> threading.Thread:
    """Once trials have reported twice, write ``filler`` until ``leave`` bytes are free (0: until the disk is full)."""

    def fill() -> None:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if sum(len(p.read_text().splitlines()) for p in folder.glob("*/progress.csv")) >= 4:
                break
            time.sleep(0.05)
        import shutil

        with open(filler, "wb") as out:
            while shutil.disk_usage(filler.parent).free > leave:
                try:
                    out.write(b"\0" * min(2**20, max(shutil.disk_usage(filler.parent).free - leave, 4096)))
                    out.flush()
                except OSError:
                    break

    thread = threading.Thread(target=fill, daemon=True)
    thread.start()
    return thread


def _raw_epochs(folder: Path) -> dict[str, list[int]]:
    """Each trial's epochs as its progress.csv holds them, repeats included."""
    out = {}
    for path in folder.glob("*/progress.csv"):
        out[path.parent.name[:8]] = [int(row["training_iteration"]) for row in csv.DictReader(path.open())]
    return out


def _resume_to_the_end(run_cli, folder: Path, filler: Path) -> None:
    filler.unlink()
    resumed = run_cli("resume", folder)
    assert resumed.code == 0, resumed.out[-3000:] + resumed.err[-3000:]
    from tuner import experiment

    reviewed = {
        t.trial_id: [int(float(r["training_iteration"])) for r in t.rows]
        for t in experiment.load(str(folder)).trials
    }
    wrong = {trial: e for trial, e in reviewed.items() if e != list(range(1, EPOCHS + 1))}
    assert len(reviewed) == TRIALS and not wrong, wrong or reviewed  # every epoch, once, in every review
    # Ray's own progress.csv may hold again the epochs run after the last state the full disk let Ray save (with two
    # best checkpoints kept, a deletion frees too little for it): a trial goes on from the checkpoint that state
    # names, or from the start, as after a signal, and the later rows stand; never a gap, never an epoch skipped
    for trial, raw in _raw_epochs(folder).items():
        assert raw[0] == 1 and raw[-1] == EPOCHS, (trial, raw)
        assert all(e <= max(raw[:i]) + 1 for i, e in enumerate(raw[1:], 1)), (trial, raw)
        assert all(b == a + 1 for a, b in zip(raw, raw[1:], strict=False) if b > a), (trial, raw)


@pytest.mark.slow  # a real disk filled while trials run
def test_a_disk_filled_to_the_last_byte_stops_the_sweep_and_resume_finishes_it(
    run_cli, small_disk, tmp_path, monkeypatch
):
    # the disk fills faster than the reserve can be seen (another process, or a checkpoint larger than the
    # reserve): with no reserve kept, the first sign is a trial's write refused, never the free-space check
    # (which a result arriving after the fill would otherwise meet first, and stop on in its own words)
    from tuner.launch.guards import disk

    monkeypatch.setattr(disk, "RESERVE_MIN", 0)
    monkeypatch.setattr(disk, "RESERVE_CHECKPOINTS", 0)
    space = instant_space(tmp_path, sleep=0.3)
    folder, filler = small_disk / "full", small_disk / "filler"
    _fill_after_reports(folder, filler, leave=0)
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--num-samples", TRIALS, "--max-epochs", EPOCHS,
                     "--storage-path", small_disk, "--name", "full")  # fmt: skip
    assert result.code == 4, result.out[-3000:] + result.err[-3000:]
    said = [line for line in (result.out + result.err).splitlines() if "free space, then" in line]
    assert len(said) == 1 and "the storage is full (no space left on device)" in said[0], said
    assert f"tuner resume {folder}" in said[0]
    assert "Traceback" not in result.err and "Errno 28" not in result.err, result.err[-3000:]
    state = sorted(folder.glob("experiment_state-*.json"))[-1]
    assert json.loads(state.read_text())["trial_data"]  # the last good state, whole
    _resume_to_the_end(run_cli, folder, filler)


@pytest.mark.slow  # a real disk filled while trials run
def test_a_disk_nearly_full_stops_the_sweep_before_a_write_fails(run_cli, small_disk, tmp_path):
    space = instant_space(tmp_path, sleep=0.3)
    folder, filler = small_disk / "nearly", small_disk / "filler"
    _fill_after_reports(folder, filler, leave=16 * 2**20)
    result = run_cli("sweep", "--space", space, "--scheduler", "fifo", "--num-samples", TRIALS, "--max-epochs", EPOCHS,
                     "--storage-path", small_disk, "--name", "nearly")  # fmt: skip
    assert result.code == 4, result.out[-3000:] + result.err[-3000:]
    assert (
        "stopped: the storage is nearly full (" in result.out
        and "free space, then continue with: tuner resume" in result.out
    ), result.out[-2000:]
    assert "Traceback" not in result.err, result.err[-3000:]
    assert not [p for p in folder.rglob("error.txt")], "a trial failed for lack of space"
    refused = run_cli("resume", folder)  # still full: refused in one line, nothing touched
    assert refused.code == 4 and refused.err.strip().count("\n") == 0, refused.err
    assert "the storage is nearly full" in refused.err
    _resume_to_the_end(run_cli, folder, filler)
