"""Ray behaviours tuner works around (tuner/ray_compat.py) that need a running Ray to show."""

from __future__ import annotations

from pathlib import Path

import pytest


def test_a_trial_has_its_folder_from_the_moment_it_is_added(tmp_path):
    """Ray 2.60 names a trial's folder only when it schedules a fresh actor; before, its error handler raises."""
    from ray.train._internal.storage import StorageContext
    from ray.tune.experiment import Trial

    from tuner.ray_compat import NameTrialFolders

    trial = Trial("train", config={"x": 1}, stub=True,
                  storage=StorageContext(storage_path=str(tmp_path), experiment_dir_name="exp"))  # fmt: skip
    with pytest.raises(RuntimeError, match="without setting `trial_dir_name`"):
        trial.handle_error(RuntimeError("a reused actor's reset failed"))
    NameTrialFolders().on_trial_add(0, [trial], trial)
    assert Path(trial.local_path).is_dir() and trial.trial_id in trial.local_path
    trial.handle_error(RuntimeError("a reused actor's reset failed"))  # now recorded, not raised
    assert trial.run_metadata.num_failures == 2
