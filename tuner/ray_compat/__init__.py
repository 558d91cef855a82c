"""Every use of Ray's internals and every workaround of a Ray behaviour, in one quarantine, one module a part.

Each part names the Ray version it was seen in, and tests/unit/test_ray_compat.py holds a test per part that
fails when an upgrade changes what the part relies on (tests/integration/test_ray_compat_live.py for the
parts that need a running Ray). Nothing outside this package imports Ray's private modules or reads its
private attributes. Seen in Ray 2.60:

 1. statuses       a trial HyperBand paused and then stopped is saved as PAUSED: record and repair statuses;
                   a trial a refused write (a full disk) errored is never continued: reopen it as paused
 2. completion     Tune completes a paused trial without a result: hand the searcher the last one
 3. sync_race      a sync racing Ray's own rename of a scratch file logs a traceback: hide that one
 4. terminal       token-auth opt-out advice, per-trial tracebacks, Ray's stop notices, no-result warnings
 5. tutorial_api   ``ray.train.report`` inside a Tune function raises: run tutorial trainables unchanged
 6. growth         ``Tuner.restore`` takes the trial count and the storage from the saved search: grow it, move it;
                   a kill during the copy of the state leaves the search out of step with the trials: reconcile
 7. worker_logs    a worker's log line carries eight context ids: format the trainable's own lines plainly
 8. trial_folders  the live table reads the folder of a trial not yet named: name it first
 9. trial_process  a hung trial cannot be asked to stop: kill its actor
10. live           a restored run consults the stopper saved in the state: look up the live callback
11. terminal       a signal-killed worker's C-level crash report and the raylet's guess reach the terminal
12. terminal       the older ``spec.config`` form of ``sample_from`` warns at every draw: quiet while probing
13. schedulers     ASHA, HyperBand, BOHB, the median rule and PBT decide in private state: read their reasons;
                   a resumed sweep hands its finished trials to HyperBand's brackets: leave them out; a
                   bracket finished by a trial that ended itself leaves a paused one waiting: stop it
14. live_table     CLIReporter's status lines miscount and mis-sign: rewrite them
15. cluster        read an address exactly as ``ray.init`` would, without its minutes of retrying
16. cluster        token mode for a client needs Ray's C++ configuration read again
17. trainable_forms  tune.with_parameters and tune.with_resources hide the user's code and its resources
18. atomic_sync    the experiment's state is copied over the old one in place: rename whole files instead
19. parameters     tune.with_parameters forgets its data once put: keep it for a later Ray session
"""

from tuner.ray_compat.atomic_sync import atomic_local_copies
from tuner.ray_compat.completion import LastResultOnCompletion
from tuner.ray_compat.growth import (
    can_grow,
    extend_saved_search,
    reconcile_saved_search,
    relocate_saved_search,
)
from tuner.ray_compat.live import live, register_live
from tuner.ray_compat.parameters import keep_parameters, refresh_parameters
from tuner.ray_compat.statuses import (
    FINISHED,
    UNFINISHED,
    StatusRecorder,
    forget_last_step,
    last_step,
    reopen_saved_trials,
    repair_saved_statuses,
    status_file,
)
from tuner.ray_compat.sync_race import SYNC_LOGGER, quiet_benign_sync_races
from tuner.ray_compat.terminal import (
    crash_noise,
    quiet_terminal,
    quiet_worker_crashes,
    spec_form_warnings_off,
)
from tuner.ray_compat.trainable_forms import declared_resources, own_code
from tuner.ray_compat.trial_folders import name_trial_folders
from tuner.ray_compat.trial_process import end_trial_process
from tuner.ray_compat.tutorial_api import old_api_notice, tutorial_api
from tuner.ray_compat.worker_logs import plain_formatting

__all__ = [
    "FINISHED",
    "LastResultOnCompletion",
    "SYNC_LOGGER",
    "StatusRecorder",
    "UNFINISHED",
    "atomic_local_copies",
    "can_grow",
    "crash_noise",
    "declared_resources",
    "end_trial_process",
    "extend_saved_search",
    "forget_last_step",
    "keep_parameters",
    "last_step",
    "live",
    "name_trial_folders",
    "old_api_notice",
    "own_code",
    "plain_formatting",
    "quiet_benign_sync_races",
    "quiet_terminal",
    "quiet_worker_crashes",
    "reconcile_saved_search",
    "refresh_parameters",
    "register_live",
    "relocate_saved_search",
    "reopen_saved_trials",
    "repair_saved_statuses",
    "spec_form_warnings_off",
    "status_file",
    "tutorial_api",
]
