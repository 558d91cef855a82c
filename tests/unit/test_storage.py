"""The experiment's own files go through the same filesystem layer for a folder and for a URI."""

from __future__ import annotations

import pytest

from tuner import storage
from tuner.errors import UsageError


@pytest.fixture(params=["path", "uri"])
def location(request, tmp_path):
    folder = tmp_path / "exp"
    return str(folder) if request.param == "path" else f"file://{folder}"


def test_files_round_trip_in_a_folder_or_a_uri(location, tmp_path):
    storage.prepare(location)
    written = storage.write_text(location, "tuner_config.yaml", "name: exp\n")
    storage.write_text(location, "experiment_state-2.json", "{}")
    storage.write_text(location, "experiment_state-1.json", "{}")
    assert written.endswith("/exp/tuner_config.yaml") and written.startswith(location)
    assert (tmp_path / "exp" / "tuner_config.yaml").read_text() == "name: exp\n"
    assert storage.read_text(location, "tuner_config.yaml") == "name: exp\n"
    assert storage.exists(location, "tuner_config.yaml") and not storage.exists(location, "tuner.pkl")
    assert storage.read_text(location, "missing.json") is None
    assert storage.list_names(location, "experiment_state-") == [
        "experiment_state-1.json",
        "experiment_state-2.json",
    ]


def test_listing_a_folder_that_is_not_there_is_empty(location):
    assert storage.list_names(location, "experiment_state-") == []


def test_paths_inside_an_experiment_keep_its_scheme():
    assert storage.join("s3://bucket/sweeps/exp/", "t", "checkpoint_000001") == "s3://bucket/sweeps/exp/t/checkpoint_000001"
    assert storage.join("/data/exp", "t") == "/data/exp/t"


@pytest.mark.parametrize("as_uri", [False, True])
def test_folders_are_listed_alike_locally_and_through_a_uri(tmp_path, as_uri):
    (tmp_path / "trial_b").mkdir()
    (tmp_path / "trial_a").mkdir()
    (tmp_path / "trial_a" / "progress.csv").write_text("x\n1\n")
    (tmp_path / "best_config.json").write_text("{}")
    where = f"file://{tmp_path}" if as_uri else str(tmp_path)
    assert storage.list_dirs(where) == ["trial_a", "trial_b"]
    assert storage.is_dir(storage.join(where, "trial_a")) and not storage.is_dir(storage.join(where, "nope"))
    assert storage.read_text(storage.join(where, "trial_a"), "progress.csv") == "x\n1\n"


def test_only_file_uris_are_read_as_local_folders():
    assert storage.local_path("file:///data/exp") == "/data/exp"
    assert storage.local_path("/data/exp") == "/data/exp"
    assert storage.local_path("s3://bucket/exp") is None


def test_a_storage_nobody_can_open_is_a_usage_error():
    with pytest.raises(UsageError, match="cannot open storage nosuchfs://x"):
        storage.prepare("nosuchfs://x/exp")


def test_a_storage_path_that_cannot_hold_a_folder_or_lies_inside_an_experiment_is_refused(tmp_path):
    """/proc/foo was blamed on a full disk; a path inside an experiment made a sweep there."""
    from tuner import storage
    from tuner.errors import UsageError

    with pytest.raises(UsageError, match=r"--storage-path /proc/foo: cannot make a folder in /proc"):
        storage.check_usable("/proc/foo")
    storage.check_usable(str(tmp_path / "fresh"))
    assert list(tmp_path.iterdir()) == []  # the check leaves nothing behind
    (tmp_path / "afile").write_text("kept")  # under a file: it is said to be one (root may write anywhere)
    with pytest.raises(UsageError, match=r"/afile/runs: .*/afile is a file, so no folder can be made in it$"):
        storage.check_usable(str(tmp_path / "afile" / "runs"))
    assert (tmp_path / "afile").read_text() == "kept"
    (tmp_path / "afile").unlink()
    from tuner.where import experiment_above

    (tmp_path / "exp").mkdir()
    (tmp_path / "exp" / "tuner_config.yaml").write_text("space: x.py\n")
    assert experiment_above(tmp_path / "exp" / "more") == tmp_path / "exp" and experiment_above(tmp_path) is None
