"""The one place that builds ``ray.tune.Tuner``: from a plan to a finished sweep (resume: tuner/launch/resume.py).

Everything that can be checked without Ray is checked first (tuner/launch/plan.py), so bad input fails in a
second, before a cluster starts or a trial launches.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import TYPE_CHECKING

from tuner import algorithms, storage, storage_outage
from tuner.errors import StorageRefused, TunerError, UsageError
from tuner.folder import plan as plan_record
from tuner.folder.summary import Summary
from tuner.launch import guards, plan_data
from tuner.launch.per_trial import checkpoint_config, sync_config, trial_folder_name, wrapped_trainable
from tuner.launch.plan import Print, SweepPlan, place, prepare
from tuner.launch.plan_text import describe
from tuner.launch.trial import forms
from tuner.launch.watching.reporting import MetricNeverReported, forget_metric_problem, metric_problem
from tuner.launch.wrap_up import wrap_up
from tuner.settings import SweepConfig, save_config

if TYPE_CHECKING:
    from ray.tune import Callback, Tuner

    from tuner.launch.guards.signals import OrderlyStop
    from tuner.launch.placement.packing import MeasureFn
    from tuner.launch.watching.reporting import MetricGuard


def run_sweep(
    config: SweepConfig,
    out: Print = print,
    num_cpus: int | None = None,
    reuse_actors: bool = True,
    memory_probe: MeasureFn | None = None,
    dry_run: bool = False,
) -> Summary | None:
    """Run a sweep to the end and return its summary (also written to ``best_config.json``).

    ``dry_run`` prints the whole plan, meets the cluster (the GPU share, auto packing), and stops there:
    no experiment folder, no trial. ``reuse_actors`` keeps one Ray actor per slot across trials (a
    trial's state lives in its function, so nothing leaks between trials); turning it off exists for
    comparison in benchmarks. ``memory_probe`` (config -> ``packing.MemoryProbe``) replaces the GPU
    measurement behind ``--gpus-per-trial auto``.
    """
    from tuner.claim import claimed
    from tuner.launch.guards.signals import OrderlyStop
    from tuner.launch.placement import cluster

    storage_outage.start_afresh()  # an earlier sweep's outage in this process is not this one's
    plan = prepare(config, out)  # data errors surface before Ray starts
    if dry_run:
        started = cluster.connect(config.address, num_cpus=num_cpus, dashboard=plan.wants_dashboard)
        try:
            plan = place(plan, memory_probe)
            for line in describe(plan, dry_run=True):
                out(line)
            out("dry run: nothing was written and no trial started")
            return None
        finally:
            cluster.disconnect(started)
    folder = plan.config.experiment_path
    launched, existed, discard = False, storage.is_uri(folder) or Path(folder).exists(), False
    try:
        with (
            claimed(folder, "tuner sweep") as claim,
            OrderlyStop(f"continue with: tuner resume {folder}", saved=False, on_exit=claim.release) as stop,
        ):
            with stop.through_ray_start():
                started = cluster.connect(config.address, num_cpus=num_cpus, dashboard=plan.wants_dashboard)
            stop.reinstall()  # Ray's core put its own SIGTERM handler in place
            try:
                plan = place(plan, memory_probe)
                for line in describe(plan):
                    out(line)
                launched = True
                return launch(plan, out, stop, reuse_actors=reuse_actors)
            except MetricNeverReported as exc:
                # bad input, as a wrong flag is: the folder this sweep made goes, unless results worth keeping
                # came before the problem
                discard = not existed and not exc.keep
                raise
            finally:
                cluster.disconnect(started)
    finally:
        if discard:
            storage.remove_tree(folder)
            forget_sidecars(folder)
        elif not launched and not existed:
            storage.remove_if_empty(folder)  # a sweep refused before its first trial leaves nothing


def launch(
    plan: SweepPlan, out: Print, stop: OrderlyStop | None = None, reuse_actors: bool = True
) -> Summary:
    """Start the trials of a placed plan on the connected Ray and wait for them."""
    import numpy as np
    from ray import tune
    from ray.tune.search import BasicVariantGenerator, Searcher

    from tuner.folder.fates import FateLog
    from tuner.launch.guards.budget import BudgetWatch
    from tuner.launch.guards.loop_end import LoopWatch, TableLength, followers
    from tuner.launch.guards.signals import StepEndStop
    from tuner.launch.guards.stall import StallAwareSearcher, StallWatch
    from tuner.launch.placement import packing as packings
    from tuner.launch.watching import live_report
    from tuner.launch.watching.live_table import BestSeen
    from tuner.launch.watching.manifests import CheckpointManifests
    from tuner.launch.watching.reporting import (
        MetricGuard,
        OomNotice,
        build_reporter,
        logger_callbacks,
        watched_metrics,
    )
    from tuner.launch.watching.tensorboard_log import TensorBoardLogger
    from tuner.ray_compat import StatusRecorder, wait_out_storage_outages
    from tuner.review.report import page_file
    from tuner.searchers.planned import PlannedSearcher
    from tuner.searchers.wrapping import wrapped

    cfg = plan.config
    folder = cfg.experiment_path
    forget_sidecars(folder)
    storage.prepare(folder)
    save_config(cfg, folder)
    if stop is not None:
        stop.saved = True  # from here a stop leaves something to resume
    # the review shows it as it was
    plan_record.write(
        folder,
        describe(plan),
        plan.trials_at_once,
        plan_data.unasked(plan),
        plan_data.scales(plan.space.flat_params),
        own_loop=plan.context.own_loop,
    )

    np.random.seed(cfg.seed)  # sample_from functions draw from numpy's global generator
    max_concurrent = plan.max_concurrent
    fate_log = FateLog(folder)
    scheduler, search_alg = algorithms.build_pair(
        dataclasses.replace(plan.context, fate_log=fate_log),
        cfg.scheduler,
        plan.search_plan,
        planned_trials=cfg.planned_trials,
        max_concurrent=max_concurrent,
    )
    if plan.warm_start is not None:  # the model behind any gate (freeze-thaw's) takes the earlier trials
        planned = wrapped(search_alg, PlannedSearcher)
        if planned is None:
            raise UsageError(f"--warm-start: searcher {cfg.searcher} takes no earlier trials here")
        planned.add_observations(plan.warm_start.points, first=plan.warm_start.best())
    guard = MetricGuard(
        *(o.name for o in cfg.objectives),
        constrained=tuple(c.metric for c in cfg.constraint_list),
        max_epochs=cfg.max_epochs,
    )
    watch = StallWatch(cfg.stall_timeout, folder, fate_log=fate_log)
    generator = isinstance(search_alg, BasicVariantGenerator)  # Tune's own: it gets the raw space
    if isinstance(search_alg, Searcher):
        search_alg = StallAwareSearcher(search_alg, watch)
    callbacks: list[Callback] = [
        guard,
        watch,
        StatusRecorder(folder),
        CheckpointManifests(),
        OomNotice(out),
        *guards.all_guards(cfg, folder, fate_log),
        StepEndStop(),
    ]
    live_page = page_file.report_path(folder)
    if live_page is not None:
        callbacks.append(live_report.LiveReport(folder))
        out(
            f"live report: {live_page} (from {live_report.EVERY_S / 3:.0f} s into the sweep, rewritten every "
            f"{live_report.EVERY_S:.0f} s while it runs)"
        )
    budget = next(c for c in callbacks if isinstance(c, BudgetWatch))
    wait_out_storage_outages(cfg.storage_timeout)  # Ray's own writes to a bucket too
    packing_key = None
    if plan.packing is not None and plan.packing.trials_per_gpu > 1:
        packing_key = packings.start(folder, plan.packing.trials_per_gpu)
        callbacks.append(packings.OomWatcher(packing_key, out))
    reporter = build_reporter(
        cfg.objective.name,
        cfg.objective.mode,
        list(plan.space.flat_params),
        cfg.max_epochs,
        also=watched_metrics(cfg)[1:],
        objectives=plan.context.objectives,
        constraints=plan.context.constraints,
        stopped_label=plan.scheduler.stopped_label(plan.context),
        folder=folder,
    )
    callbacks.append(BestSeen(reporter))
    # the trainable's own loop, once a trial ends by it: the scheduler and the live table follow its length
    callbacks.append(
        LoopWatch(
            folder,
            cfg.max_epochs,
            followers(scheduler, TableLength(reporter)),
            out,
            trials_cap=cfg.trials_cap,
            learns=plan.context.own_loop,
        )
    )
    tuner = tune.Tuner(
        wrapped_trainable(plan, packing_key),
        param_space=dict(plan.space.params) if generator else {},
        tune_config=tune.TuneConfig(
            metric=cfg.objective.name,
            mode=cfg.objective.mode,
            scheduler=scheduler,
            search_alg=search_alg,
            num_samples=cfg.trials_cap or -1,  # -1: until the budget ends the sweep
            max_concurrent_trials=None if generator else max_concurrent,
            reuse_actors=reuse_actors and forms.reusable(plan.trainable),
            trial_dirname_creator=functools.partial(trial_folder_name, list(plan.space.flat_params)),
        ),
        run_config=tune.RunConfig(
            name=cfg.name,
            storage_path=cfg.storage_path,
            stop=guards.sweep_stopper(
                watch, budget, cfg.max_epochs if plan.scheduler.ends_at_max_epochs else None
            ),
            callbacks=[
                *callbacks,
                TensorBoardLogger(
                    folder, plan.space.flat_params, cfg.objective.name, cfg.objective.mode, cfg.max_epochs
                ),
                *logger_callbacks(cfg, out),
            ],
            progress_reporter=reporter,
            checkpoint_config=checkpoint_config(plan),
            sync_config=sync_config(cfg),
            failure_config=tune.FailureConfig(max_failures=cfg.max_failures),
            verbose=1,
        ),
    )
    try:
        return fit(tuner, cfg, folder, stop, guard, waiting=plan.trials_waiting)
    finally:
        if packing_key is not None:
            packings.forget(packing_key)


def forget_sidecars(folder: str) -> None:
    """A new sweep at ``folder``, or one refused and removed: what the driver kept beside an earlier sweep at that
    path (its decisions, statuses, spending) is not this one's. A sweep refused at its first result once left its
    rung decisions there, and the next sweep of that name compared its trials with them."""
    from tuner.folder.names import SIDECARS

    for name in SIDECARS:
        storage.sidecar(folder, name).unlink(missing_ok=True)


def fit(
    tuner: Tuner,
    cfg: SweepConfig,
    folder: str,
    stop: OrderlyStop | None = None,
    guard: MetricGuard | None = None,
    waiting: int | None = None,
) -> Summary:
    """Run the sweep to its end and read its summary back; ``waiting``: trials that may wait for a slot at
    once (SweepPlan.trials_waiting)."""
    from tuner import ray_compat
    from tuner.launch.guards import disk
    from tuner.launch.guards.stall import forget_stall, stall_reason
    from tuner.storage_outage import how_to_continue

    ray_compat.quiet_benign_sync_races()
    ray_compat.atomic_local_copies()  # a copy cut short by a full disk never replaces the last good state
    ray_compat.forget_last_step(folder)
    forget_stall(folder)
    forget_metric_problem()
    refused = None
    try:
        with ray_compat.trials_waiting(waiting), ray_compat.frames_unread():
            try:
                tuner.fit()
            finally:
                if stop is not None:
                    stop.run_ended()
    except Exception as exc:
        problem = (guard.problem if guard is not None else None) or metric_problem()
        if problem:
            raise problem from exc
        # Ray fails in many ways when the disk fills under it; its last good state is kept (atomic copies).
        refused = (
            disk.refusal_of(exc) or (stop.reason if stop is not None else None) or disk.room_left(folder)
        )
        if refused is None and stop is not None and stop.received:
            # a signal to the whole group ended Ray's processes too, and Ray failed before the watch saw them go
            raise stop.ended_with_ray() from exc
        if refused is None:
            raise TunerError(f"the sweep failed: {exc}") from exc
    if guard is not None and guard.problem:  # found where Ray goes on past a callback's error (a trial's end)
        raise guard.problem
    try:
        summary = wrap_up(cfg, folder)
    except OSError as exc:
        refused = disk.refusal_of(exc) or refused
        if refused is None:
            raise
        raise StorageRefused(
            f"{refused}: the sweep stopped with its last saved state; {how_to_continue(refused)} continue "
            f"with: tuner resume {folder}"
        ) from exc
    summary.stalled = stall_reason(folder) or None
    if stop is not None and stop.received:
        summary.signal = stop.received
    summary.storage = (stop.reason if stop is not None else None) or refused or None
    ray_compat.forget_last_step(folder)
    forget_stall(folder)
    return summary
