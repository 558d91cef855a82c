"""A write cut short never replaces a good file: Ray's state copies, tuner's own writes, the refusal in words."""

from __future__ import annotations

import errno
import os

import pyarrow.fs
import pytest

from tuner import storage
from tuner.launch.guards import disk
from tuner.ray_compat.atomic_sync import atomic_local_copies, copy_renaming


def test_a_state_copy_cut_short_leaves_the_last_good_state(tmp_path, monkeypatch):
    source, target = tmp_path / "staging", tmp_path / "experiment"
    source.mkdir()
    target.mkdir()
    (source / "experiment_state-1.json").write_text('{"trial_data": ["new"]}')
    (source / "searcher-state-1.pkl").write_bytes(b"new searcher")
    (target / "experiment_state-1.json").write_text('{"trial_data": ["good"]}')
    real_open = open
    calls = {"n": 0}

    def open_failing(path, mode="r", *args, **kwargs):
        if "w" in mode and str(path).endswith(".partial"):
            calls["n"] += 1
            if calls["n"] == 1:
                raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
        return real_open(path, mode, *args, **kwargs)

    monkeypatch.setattr("builtins.open", open_failing)
    with pytest.raises(OSError, match="No space left on device"):
        copy_renaming(pyarrow.fs.LocalFileSystem(), str(source), str(target))
    monkeypatch.undo()
    assert (target / "experiment_state-1.json").read_text() == '{"trial_data": ["good"]}'
    assert not list(target.glob(".*partial"))
    copy_renaming(pyarrow.fs.LocalFileSystem(), str(source), str(target))  # space again: the whole new state
    assert (target / "experiment_state-1.json").read_text() == '{"trial_data": ["new"]}'
    assert (target / "searcher-state-1.pkl").read_bytes() == b"new searcher"


def _staged(source, rows: str, state: str) -> None:
    """A staging folder as Ray keeps it: trials a and b with their rows, and the experiment's state."""
    for trial in ("a", "b"):
        (source / trial).mkdir(parents=True)
        (source / trial / "result.json").write_text(f"{trial}: {rows}\n")
        (source / trial / "progress.csv").write_text(f"epoch\n{rows}\n")
    (source / "experiment_state-1.json").write_text(f'{{"trial_data": ["{state}"]}}')


@pytest.mark.parametrize("cut_at", [1, 2, 3, 4, 5])
def test_a_copy_cut_short_never_leaves_a_state_newer_than_the_trials_rows(tmp_path, monkeypatch, cut_at):
    """A kill mid-copy: if the new state arrived, every trial's rows arrived before it (a state ahead of its
    rows resumed a trial from a checkpoint whose epoch had no row)."""
    source, target = tmp_path / "staging", tmp_path / "experiment"
    _staged(source, "epochs 1 and 2", "checkpoint at epoch 2")
    real_replace = os.replace
    copied = []

    def replace_then_die(scratch, destination):
        if len(copied) + 1 == cut_at:
            raise KeyboardInterrupt  # the process ends here (kill -9 leaves no handler to run)
        real_replace(scratch, destination)
        copied.append(destination)

    monkeypatch.setattr(os, "replace", replace_then_die)
    with pytest.raises(KeyboardInterrupt):
        copy_renaming(pyarrow.fs.LocalFileSystem(), str(source), str(target))
    monkeypatch.undo()
    assert len(copied) == cut_at - 1
    if (target / "experiment_state-1.json").exists():
        assert all((target / t / f).exists() for t in ("a", "b") for f in ("result.json", "progress.csv"))
    copy_renaming(pyarrow.fs.LocalFileSystem(), str(source), str(target))
    names = sorted(str(p.relative_to(target)) for p in target.rglob("*") if p.is_file())
    assert names == ["a/progress.csv", "a/result.json", "b/progress.csv", "b/result.json", "experiment_state-1.json"]


def test_a_trials_file_is_copied_again_only_when_it_changed(tmp_path):
    """Ray copies the whole staging folder at every sync: a trial's rows copied already are left alone, so a
    sync costs what changed, not every trial so far; the experiment's state is always copied."""
    source, target = tmp_path / "staging", tmp_path / "experiment"
    _staged(source, "epoch 1", "epoch 1")
    local = pyarrow.fs.LocalFileSystem()
    copy_renaming(local, str(source), str(target))
    copies = {str(p.relative_to(target)): p.stat().st_ino for p in target.rglob("*") if p.is_file()}
    with open(source / "a" / "result.json", "a") as rows:
        rows.write("a: epoch 2\n")
    (source / "c").mkdir()
    (source / "c" / "result.json").write_text("c: epoch 1\n")
    (source / "experiment_state-1.json").write_text('{"trial_data": ["epoch 2"]}')
    copy_renaming(local, str(source), str(target))
    again = {name for name, inode in copies.items() if (target / name).stat().st_ino != inode}  # renamed over
    assert again == {"a/result.json", "experiment_state-1.json"}
    assert (target / "a" / "result.json").read_text() == "a: epoch 1\na: epoch 2\n"
    assert (target / "c" / "result.json").read_text() == "c: epoch 1\n"
    assert (target / "experiment_state-1.json").read_text() == '{"trial_data": ["epoch 2"]}'


def test_rays_own_upload_goes_through_the_renaming_copy(tmp_path):
    from ray.train._internal import storage as ray_storage

    atomic_local_copies()
    atomic_local_copies()  # once is enough, twice changes nothing
    (tmp_path / "staging").mkdir()
    (tmp_path / "staging" / "tuner.pkl").write_bytes(b"state")
    ray_storage._upload_to_fs_path(str(tmp_path / "staging"), pyarrow.fs.LocalFileSystem(), str(tmp_path / "exp"),
                                   exclude=["*.tmp"])  # fmt: skip
    assert (tmp_path / "exp" / "tuner.pkl").read_bytes() == b"state"
    assert getattr(ray_storage._pyarrow_fs_copy_files, "_tuner_atomic", False)


def test_tuners_own_writes_keep_the_old_file_when_cut_short(tmp_path, monkeypatch):
    storage.write_text(tmp_path, "best_config.json", "good")

    def full(self, *args, **kwargs):
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("pathlib.Path.write_text", full)
    with pytest.raises(OSError):
        storage.write_text(tmp_path, "best_config.json", "new")
    monkeypatch.undo()
    assert (tmp_path / "best_config.json").read_text() == "good"
    assert not list(tmp_path.glob(".*partial"))


@pytest.mark.parametrize(
    "text, meaning",
    [
        ("OSError: [Errno 28] Error writing bytes to file. Detail: [errno 28] No space left on device",
         "the storage is full (no space left on device)"),
        ("OSError: [Errno 122] Disk quota exceeded", "the storage quota is exceeded"),
        ('File ".../ray/train/_internal/storage.py", in persist_current_checkpoint\nOSError: When uploading part '
         "for key 'x': AWS Error ACCESS_DENIED ... AccessDenied", "the bucket refused a write (access denied)"),
        ("HTTPError: 403 Client Error: Forbidden for url: https://data.example/cifar.tar.gz AccessDenied", None),
        ("ValueError: loss went to nan", None),
    ],
)  # fmt: skip
def test_a_refused_write_is_told_from_the_trainables_own_error(text, meaning):
    assert disk.refusal(text) == meaning


def test_the_refusal_is_found_behind_the_error_ray_raises_about_it():
    try:
        try:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        except OSError as inner:
            raise RuntimeError("pickle data was truncated") from inner
    except RuntimeError as outer:
        assert disk.refusal_of(outer) == "the storage is full (no space left on device)"
    assert disk.refusal_of(RuntimeError("Trials did not complete")) is None


def test_the_reserve_grows_with_the_largest_checkpoint():
    watch = disk.StorageWatch(None, "exp")
    assert watch.reserve == disk.RESERVE_MIN
    watch.largest_checkpoint = 100 * 2**20
    assert watch.reserve == 4 * 100 * 2**20


def test_a_state_caught_mid_write_in_staging_never_replaces_the_last_good_one(tmp_path):
    (tmp_path / "staging").mkdir()
    (tmp_path / "exp").mkdir()
    (tmp_path / "staging" / "experiment_state-1.json").write_text("")  # Ray's open(..., "w") just truncated it
    (tmp_path / "exp" / "experiment_state-1.json").write_text('{"trial_data": []}')
    copy_renaming(pyarrow.fs.LocalFileSystem(), str(tmp_path / "staging"), str(tmp_path / "exp"))
    assert (tmp_path / "exp" / "experiment_state-1.json").read_text() == '{"trial_data": []}'
    assert not list((tmp_path / "exp").glob(".*partial"))
