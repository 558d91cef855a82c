"""Ray behaviours tuner works around (tuner/ray_compat/) that need a running Ray to show."""

from __future__ import annotations

import pytest


def test_the_live_table_shows_a_trial_that_has_no_folder_yet(tmp_path):
    """Ray 2.60 names a trial's folder only when it schedules an actor for it, and its own reporter read every
    trial's error file, so a pending trial ended the sweep; the live table reads no trial's folder."""
    from ray.train._internal.storage import StorageContext
    from ray.tune.experiment import Trial

    from tuner.launch.watching.reporting import build_reporter

    trial = Trial("train", config={"x": 1}, stub=True,
                  storage=StorageContext(storage_path=str(tmp_path), experiment_dir_name="exp"))  # fmt: skip
    with pytest.raises(RuntimeError, match="without setting `trial_dir_name`"):
        assert trial.error_file is None  # what Ray's CLIReporter asked of every trial, pending ones included
    table = build_reporter("loss", "min", ["x"], max_epochs=3).text([trial])
    assert trial.trial_id in table and "pending" in table
    assert not trial.relative_logdir  # nothing was asked of its folder




@pytest.mark.slow  # a second Ray head; test_cluster_versions runs beside it in the slow tier
def test_part_22_a_running_clusters_versions_are_read_from_its_gcs():
    import platform

    import ray

    from tuner.ray_compat.cluster import ClusterAnswer, cluster_versions

    gcs = ray.get_runtime_context().gcs_address
    assert cluster_versions(gcs) == ClusterAnswer(ray.__version__, platform.python_version())
    nobody = cluster_versions("127.0.0.1:1", timeout_s=5)  # Ray's client may not have said why within 5 s
    assert (nobody.ray, nobody.python, nobody.wants_token) == (None, None, False)
