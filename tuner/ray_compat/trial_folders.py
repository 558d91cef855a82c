"""Ray 2.60 behaviour tuner works around (see tuner/ray_compat/__init__.py for the index).

8. Unnamed trial folders (Ray 2.60): a trial names its folder only when Tune schedules an actor for it,
yet CLIReporter's error table reads every trial's error file, folder included; a pending trial not yet
scheduled (many wait under HyperBand on a busy machine) makes it raise "Should not access
`trial_driver_staging_path` without setting `trial_dir_name`", which ends the whole sweep.
``name_trial_folders`` names them first, as Tune's scheduling would (the same call, which is idempotent).
"""

from __future__ import annotations


def name_trial_folders(trials: list) -> None:
    """Give every trial its folder name (and folder) before anything reads a trial's paths."""
    for trial in trials:
        if not trial.relative_logdir:
            trial.init_local_path()
