"""Every use of Ray's internals and every workaround of a Ray behaviour, in one quarantine, one module a part.

Each part names the Ray version it was seen in, and tests/unit/test_ray_compat.py and
tests/unit/test_ray_compat_parts.py hold a test per part that fails when an upgrade changes what the part
relies on (tests/integration/test_ray_compat_live.py for the parts that need a running Ray). Outside this
package, the private names, files and messages of Ray, Optuna and bayes_opt are used only where the second
list below says, each with its test in tests/unit/test_private_uses.py. Each part was seen in Ray 2.60 and
is checked on 2.50.0, 2.55.1 and 2.60.0, the versions ``make test-ray-matrix`` runs (tests/ray_matrix.sh: the unit
tier, with every part's canary, on each); where a version behaves otherwise, its part says how:

 1. statuses       a trial HyperBand paused and then stopped is saved as PAUSED: record and repair statuses;
                   a trial a refused write (a full disk) errored is never continued: reopen it as paused
 2. completion     Tune completes a paused trial without a result: hand the searcher the last one
 3. sync_race      a sync racing Ray's own rename of a scratch file logs a traceback: hide that one
 4. terminal       token-auth opt-out advice, per-trial tracebacks, Ray's stop notices, no-result warnings
 5. tutorial_api   ``ray.train.report`` inside a Tune function raises: run tutorial trainables unchanged
 6. growth         ``Tuner.restore`` takes the trial count and the storage from the saved search: grow it, move it;
                   a kill during the copy of the state leaves the search out of step with the trials: reconcile
 7. worker_logs    a worker's log line carries eight context ids: format the trainable's own lines plainly
 9. trial_process  a hung trial cannot be asked to stop: kill its actor
10. live           a restored run consults the stopper saved in the state: look up the live callback
11. terminal       a signal-killed worker's C-level crash report and the raylet's guess reach the terminal
12. terminal       the older ``spec.config`` form of ``sample_from`` warns at every draw: quiet while probing
13. schedulers     PBT decides in private state: read which trial it exploited and what it changed (ASHA,
                   HyperBand, BOHB and the median rule are tuner's own on Tune's public scheduler interface,
                   tuner/schedulers/*_rule.py, and decide with one objective as Ray's do)
15. cluster        read an address exactly as ``ray.init`` would, without its minutes of retrying
16. cluster        token mode for a client needs Ray's C++ configuration read again
17. trainable_forms  tune.with_parameters and tune.with_resources hide the user's code and its resources
18. atomic_sync    the experiment's state is copied over the old one in place: rename whole files instead
19. parameters     tune.with_parameters forgets its data once put: keep it for a later Ray session
20. waiting        a searcher of tuner's own gets one trial waiting for a slot, and a trial waits while its
                   worker starts: let a searcher that learns nothing have one waiting per slot
21. checkpoints    a restored trial starts from its latest checkpoint, whole or not: point it at its
                   newest whole one
22. cluster        a client of another Ray version learns it from Ray's error after start-up: read the
                   cluster's versions first (its GCS metadata, the dashboard's answer)
23. state_file     Ray's own files in an experiment and its undocumented saved state (trials, statuses,
                   error files): their names and the one parser of the state, which unpickles nothing
24. messages       a vanished worker and a bucket's refused write reach tuner only as the text of Ray's
                   errors: the words and the storage layer's frames that say so
25. orderly_stop   Ray's orderly stop of a run sits on SIGUSR1 while ``fit`` runs (undocumented): hand
                   SIGTERM and SIGHUP to it
26. live           an experiment saved when the live table was a CLIReporter subclass holds CLIReporter's
                   private attributes: read them for the live table that resumes it
27. patient_storage  Ray makes a bucket's filesystem itself and tries each call once: hand it one that
                   waits out an outage for the storage timeout (tuner/patient_filesystem.py)
28. result_frames  the end of a run reads every trial's rows into a DataFrame for a result grid tuner never
                   reads: leave them unread
    logfilters     parts 3 and 4 install their filters on Ray's loggers through it, once per process
Retired: 8 (CLIReporter's error table read the folder of a trial not yet named) and 14 (its status lines
rewritten): the live table is a public ``ProgressReporter`` of tuner's (tuner/launch/watching/live_table.py)
that reads no trial's folder, and each scheduler says its own state (part 13).

Private uses outside this package (Ray 2.60, Optuna 5.0, bayesian-optimization 1.5): what each uses, and why
the public API does not serve:

searchers/bayesopt_points.py   Ray's ``BayesOptSearch._register_result`` (overridden) and ``_metric_op``,
        bayes_opt's ``TargetSpace._as_array``: a result of a trial it did not propose, each config once
        (``register`` raises on a repeat; ``params_to_array`` is the public form for a dict)
searchers/planned.py   Ray's ``OptunaSearch._ot_trials`` and ``_ot_study``, and
        ``BayesOptSearch._points_to_evaluate``: constraints on the model's own trial, a config queued to run
        again (Ray takes both only at construction); OptunaSearch tells a completion without the metric as
        pruned (undocumented)
searchers/optuna_samplers.py, searchers/warped_gp.py   Optuna's ``TPESampler._sample``, ``_random_sampler``,
        ``Study._get_trials``, ``GPSampler._sample_relative_impl``, ``_optimize_acqf``, ``_rng``,
        ``_independent_sampler``, ``optuna._gp`` (search space, acquisition),
        ``optuna.samplers._tpe.sampler.default_gamma`` and the ``tpe:``/``gp:relative_params`` system
        attributes: Optuna's samplers take no trial ranking, result warp or proposal filter
launch/watching/tensorboard_log.py   subclasses TBXLoggerCallback because Ray's private
        ``_create_default_callbacks`` adds its own unless one of its kind is given (the public way:
        ``TUNE_DISABLE_AUTO_CALLBACK_LOGGERS=1`` and Ray's CSV and JSON loggers passed with ours)
replay/engine.py   stands in for TuneController (DeveloperAPI), the one driver of a scheduler, as schedulers
        call it
"""

from typing import TYPE_CHECKING, Any

from tuner.ray_compat.atomic_sync import atomic_local_copies
from tuner.ray_compat.checkpoints import Fallback, fall_back_from_damaged, restored_from
from tuner.ray_compat.completion import LastResultOnCompletion
from tuner.ray_compat.growth import (
    can_grow,
    extend_saved_search,
    reconcile_saved_search,
    relocate_saved_search,
)
from tuner.ray_compat.live import live, register_live
from tuner.ray_compat.parameters import keep_parameters, refresh_parameters
from tuner.ray_compat.result_frames import frames_unread
from tuner.ray_compat.sync_race import SYNC_LOGGER, quiet_benign_sync_races
from tuner.ray_compat.terminal import (
    crash_noise,
    quiet_terminal,
    quiet_worker_crashes,
    spec_form_warning_once,
    spec_form_warnings_off,
)
from tuner.ray_compat.trainable_forms import declared_resources, own_code
from tuner.ray_compat.trial_process import end_trial_process
from tuner.ray_compat.tutorial_api import old_api_notice, tutorial_api
from tuner.ray_compat.waiting import trials_waiting
from tuner.ray_compat.worker_logs import plain_formatting

if TYPE_CHECKING:
    from tuner.ray_compat.patient_storage import wait_out_storage_outages
    from tuner.ray_compat.statuses import (
        FINISHED,
        UNFINISHED,
        StatusRecorder,
        forget_last_step,
        last_step,
        reopen_saved_trials,
        repair_saved_statuses,
        settle_saved_statuses,
        status_file,
    )

# Part 1 imports Ray's Tune; the other parts do not, so that the review's readers of Ray's files (part 23)
# import no Ray. Its names are imported on first use.
_STATUSES = (
    "FINISHED",
    "UNFINISHED",
    "StatusRecorder",
    "forget_last_step",
    "last_step",
    "reopen_saved_trials",
    "restored_from",
    "repair_saved_statuses",
    "settle_saved_statuses",
    "status_file",
)


def __getattr__(name: str) -> Any:
    if name in _STATUSES:
        from tuner.ray_compat import statuses

        return getattr(statuses, name)
    if name == "wait_out_storage_outages":  # part 27 imports pyarrow, which a review of a folder never needs
        from tuner.ray_compat import patient_storage

        return patient_storage.wait_out_storage_outages
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "FINISHED",
    "Fallback",
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
    "fall_back_from_damaged",
    "forget_last_step",
    "frames_unread",
    "keep_parameters",
    "last_step",
    "live",
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
    "restored_from",
    "repair_saved_statuses",
    "settle_saved_statuses",
    "spec_form_warning_once",
    "spec_form_warnings_off",
    "status_file",
    "trials_waiting",
    "tutorial_api",
    "wait_out_storage_outages",
]
