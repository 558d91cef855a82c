"""A checkpoint's manifest tells a whole checkpoint from a damaged or missing one (tuner/folder/checkpoints.py)."""

from __future__ import annotations

import os
import shutil

from tuner.folder.checkpoints import damage, newest_whole, set_aside, write_manifest
from tuner.folder.names import MANIFEST_FILE


def _checkpoint(trial, index, payload=b"weights" * 1000):
    folder = trial / f"checkpoint_{index:06d}"
    (folder / "sub").mkdir(parents=True)
    (folder / "model.pt").write_bytes(payload)
    (folder / "sub" / "optim.pt").write_bytes(payload[::-1])
    assert write_manifest(folder)
    return folder


def test_a_checkpoint_as_saved_is_whole(tmp_path):
    folder = _checkpoint(tmp_path, 1)
    assert (folder / MANIFEST_FILE).is_file()
    assert damage(folder) is None


def test_garbage_of_another_size_a_change_in_place_and_a_missing_file_are_each_named(tmp_path):
    shorter = _checkpoint(tmp_path, 1)
    (shorter / "model.pt").write_bytes(b"\0" * 12)
    assert damage(shorter) == "model.pt has 12 bytes where 7,000 were saved"

    same_size = _checkpoint(tmp_path, 2)
    with open(same_size / "sub" / "optim.pt", "r+b") as f:  # a torn page: same length, other bytes
        f.seek(100)
        f.write(b"XXXX")
    assert damage(same_size) == "sub/optim.pt differs from what was saved"

    missing = _checkpoint(tmp_path, 3)
    os.remove(missing / "model.pt")
    assert damage(missing) == "model.pt is missing"


def test_a_deleted_folder_and_an_unreadable_manifest_are_damage_and_a_checkpoint_without_manifest_is_not(tmp_path):
    assert damage(tmp_path / "checkpoint_000009") == "its folder is missing"
    garbled = _checkpoint(tmp_path, 1)
    (garbled / MANIFEST_FILE).write_bytes(b"\x00\x17garbage")
    assert damage(garbled) == f"its {MANIFEST_FILE} is unreadable"
    older = tmp_path / "checkpoint_000002"  # saved before manifests: whole if it holds files
    older.mkdir()
    assert damage(older) == "its folder is empty"
    (older / "model.pt").write_bytes(b"w")
    assert damage(older) is None


def test_the_newest_whole_checkpoint_skips_damaged_ones_and_set_aside_keeps_their_bytes(tmp_path):
    for i in (1, 2, 10):
        _checkpoint(tmp_path, i)
    (tmp_path / "checkpoint_000010" / "model.pt").write_bytes(b"torn")
    assert newest_whole(str(tmp_path)) == "checkpoint_000002"  # by index: 10 comes after 2
    assert newest_whole(str(tmp_path), before="checkpoint_000002") == "checkpoint_000001"

    assert set_aside(str(tmp_path), "checkpoint_000010") == "damaged-checkpoint_000010"
    assert (tmp_path / "damaged-checkpoint_000010" / "model.pt").read_bytes() == b"torn"
    _checkpoint(tmp_path, 10)
    (tmp_path / "checkpoint_000010" / "model.pt").write_bytes(b"torn again")
    assert set_aside(str(tmp_path), "checkpoint_000010") == "damaged-2-checkpoint_000010"
    assert set_aside(str(tmp_path), "checkpoint_000077") is None
    assert newest_whole(str(tmp_path)) == "checkpoint_000002"


def test_a_manifest_of_the_wrong_shape_is_unreadable_not_a_crash(tmp_path):
    for text in ('{"files": []}', '{"files": {"model.pt": [1]}}', '{"files": {"model.pt": ["a", "b"]}}', "[]"):
        folder = _checkpoint(tmp_path, 1)
        (folder / MANIFEST_FILE).write_text(text)
        assert damage(folder) == f"its {MANIFEST_FILE} is unreadable", text
        shutil.rmtree(folder)


def test_a_folder_without_its_manifest_beside_ones_with_theirs_is_not_taken_as_whole(tmp_path):
    """A kill -9 between Ray writing a checkpoint and the sweep registering it leaves a folder that may be torn."""
    _checkpoint(tmp_path, 1)
    torn = tmp_path / "checkpoint_000002"
    torn.mkdir()
    (torn / "model.pt").write_bytes(b"half")
    assert newest_whole(str(tmp_path)) == "checkpoint_000001"
