"""The one place that builds ``ray.tune.Tuner``: from a plan to a finished sweep, and resume.

Everything that can be checked without Ray is checked first (tuner/plan.py), so bad input fails in a
second, before a cluster starts or a trial launches.
"""

from __future__ import annotations

import dataclasses
import functools
import logging
import re
from typing import Any

from tuner import storage
from tuner.config import SweepConfig, save_config
from tuner.errors import TunerError, UsageError
from tuner.plan import Print, SweepPlan, describe, place, prepare

log = logging.getLogger(__name__)


def run_sweep(
    config: SweepConfig,
    out: Print = print,
    num_cpus: int | None = None,
    reuse_actors: bool = True,
    memory_probe: Any = None,
    dry_run: bool = False,
) -> dict[str, Any] | None:
    """Run a sweep to the end and return its summary (also written to ``best_config.json``).

    ``dry_run`` prints the whole plan, meets the cluster (the GPU share, auto packing), and stops there:
    no experiment folder, no trial. ``reuse_actors`` keeps one Ray actor per slot across trials (a
    trial's state lives in its function, so nothing leaks between trials); turning it off exists for
    comparison in benchmarks. ``memory_probe`` (config -> ``packing.MemoryProbe``) replaces the GPU
    measurement behind ``--gpus-per-trial auto``.
    """
    from tuner import cluster

    plan = prepare(config, out)  # data errors surface before Ray starts
    started = cluster.connect(config.address, num_cpus=num_cpus, dashboard=config.dashboard)
    try:
        plan = place(plan, memory_probe)
        for line in describe(plan, dry_run=dry_run):
            out(line)
        if dry_run:
            out("dry run: nothing was written and no trial started")
            return None
        return launch(plan, out, reuse_actors=reuse_actors)
    finally:
        cluster.disconnect(started)


def _wrapped_trainable(plan: SweepPlan, packing_key: str | None = None) -> Any:
    """The trainable with its data and resources; with auto packing, each trial's share is decided when
    the trial is created, so a lowered packing reaches the trials that follow."""
    from ray import tune

    from tuner import packing, resources
    from tuner.ray_compat import plain_worker_logs, tutorial_api

    cfg = plan.config
    if packing_key is not None:
        request: Any = functools.partial(packing.trial_resources, packing_key, cfg.cpus_per_trial)
    else:
        request = resources.trial_resources(cfg.cpus_per_trial, cfg.gpus_per_trial)
    trainable = plain_worker_logs(tutorial_api(plan.trainable))
    return tune.with_resources(tune.with_parameters(trainable, **plan.kwargs), request)


def launch(plan: SweepPlan, out: Print, reuse_actors: bool = True) -> dict[str, Any]:
    """Start the trials of a placed plan on the connected Ray and wait for them."""
    import numpy as np
    from ray import tune
    from ray.tune.search import BasicVariantGenerator

    from tuner import packing as packings
    from tuner.fates import FateLog
    from tuner.ray_compat import StatusRecorder
    from tuner.reporting import MetricGuard, OomNotice, build_reporter, logger_callbacks
    from tuner.searchers import build_searcher
    from tuner.stall import StallAwareSearcher, StallStopper, StallWatch
    from tuner.tensorboard_log import TensorBoardLogger

    cfg = plan.config
    folder = cfg.experiment_path
    storage.prepare(folder)
    save_config(cfg, folder)

    np.random.seed(cfg.seed)  # sample_from functions draw from numpy's global generator
    max_concurrent = plan.max_concurrent
    search_alg = build_searcher(plan.search_plan, cfg.metric, cfg.mode, cfg.num_samples, cfg.seed, max_concurrent,
                                never_wait=plan.scheduler.pauses_trials,
                                generator_only=plan.scheduler.takes_no_searcher,
                                full_epochs=cfg.max_epochs)  # fmt: skip
    guard, watch = MetricGuard(cfg.metric), StallWatch(cfg.stall_timeout, folder)
    generator = isinstance(search_alg, BasicVariantGenerator)  # Tune's own: it gets the raw space
    if not generator:
        search_alg = StallAwareSearcher(search_alg, watch)
    callbacks: list[Any] = [guard, watch, StatusRecorder(folder), OomNotice(out)]
    packing_key = None
    if plan.packing is not None and plan.packing.trials_per_gpu > 1:
        packing_key = packings.start(folder, plan.packing.trials_per_gpu)
        callbacks.append(packings.OomWatcher(packing_key, out))
    tuner = tune.Tuner(
        _wrapped_trainable(plan, packing_key),
        param_space=dict(plan.space.params) if generator else {},
        tune_config=tune.TuneConfig(
            metric=cfg.metric,
            mode=cfg.mode,
            scheduler=plan.scheduler.build(dataclasses.replace(plan.context, fate_log=FateLog(folder))),
            search_alg=search_alg,
            num_samples=cfg.num_samples,
            max_concurrent_trials=None if generator else max_concurrent,
            reuse_actors=reuse_actors,
            trial_dirname_creator=functools.partial(trial_folder_name, list(plan.space.params)),
        ),
        run_config=tune.RunConfig(
            name=cfg.name,
            storage_path=cfg.storage_path,
            stop=StallStopper(watch),
            callbacks=[*callbacks, TensorBoardLogger(folder, dict(plan.space.params), cfg.metric, cfg.mode,
                                                     cfg.max_epochs), *logger_callbacks(cfg, out)],  # fmt: skip
            progress_reporter=build_reporter(cfg.metric, cfg.mode, list(plan.space.params), cfg.max_epochs),
            checkpoint_config=tune.CheckpointConfig(num_to_keep=plan.scheduler.checkpoints_to_keep,
                                                    checkpoint_score_attribute=cfg.metric,
                                                    checkpoint_score_order=cfg.mode),  # fmt: skip
            failure_config=tune.FailureConfig(max_failures=cfg.max_failures),
            verbose=1,
        ),
    )
    try:
        return _fit(tuner, cfg, folder, guard)
    finally:
        if packing_key is not None:
            packings.forget(packing_key)


def trial_folder_name(params: list[str], trial: Any) -> str:
    """A trial's folder (and its run name in TensorBoard): its id, then its tuned values, short."""
    from tuner.values import plain

    resolved = {**trial.config, **(getattr(trial, "evaluated_params", None) or {})}
    parts = []
    for name in params:
        value = plain(resolved.get(name))
        if not isinstance(value, (int, float, str, bool)):
            continue  # drawn later (sample_from), or not a plain value
        if isinstance(value, float):
            value = f"{value:.3g}"
        text = re.sub(r"[^\w.+-]+", "_", str(value))[:16]  # a path or long text stays out of a folder name
        parts.append(f"{name}={text}")
    return f"{trial.trial_id}_{','.join(parts)}"[:120]


def _fit(tuner: Any, cfg: SweepConfig, folder: str, guard: Any = None) -> dict[str, Any]:
    from tuner import experiment, fates, ray_compat
    from tuner.results import summarize
    from tuner.stall import forget_stall, stall_reason

    ray_compat.quiet_benign_sync_races()
    ray_compat.forget_last_step(folder)
    forget_stall(folder)
    try:
        tuner.fit()
    except Exception as exc:
        if guard is not None and guard.problem:
            raise UsageError(guard.problem) from exc
        raise TunerError(f"the sweep failed: {exc}") from exc
    if guard is not None and guard.problem:
        raise UsageError(guard.problem)
    statuses = ray_compat.last_step(folder)
    if statuses is not None:
        ray_compat.repair_saved_statuses(folder, statuses)
    fates.persist(folder)
    summary = summarize(experiment.load(folder))
    summary["unfinished"] = _unfinished_trials(cfg, folder, statuses)
    stalled = stall_reason(folder)
    if stalled:
        summary["stalled"] = stalled
    ray_compat.forget_last_step(folder)
    forget_stall(folder)
    return summary


def _unfinished_trials(cfg: SweepConfig, folder: str, statuses: dict[str, str] | None) -> int:
    """Trials not yet run to their end: non-zero after Ctrl-C (Ray turns it into an orderly stop) or a
    stall. ``statuses`` are the sweep's own last-step statuses; without them the saved state is read."""
    from tuner.ray_compat import UNFINISHED
    from tuner.ray_state import saved_trial_states

    if statuses is None:
        try:
            statuses = {trial_id: state["status"] for trial_id, state in saved_trial_states(folder).items()}
        except UsageError:
            return 0
    open_trials = sum(status in UNFINISHED for status in statuses.values())
    never_started = max(cfg.num_samples - len(statuses), 0)  # a searcher creates trials as slots free up
    return open_trials + never_started


ERRORED_CHOICES = ("resume", "restart", "skip")


def resume_sweep(ref: str, errored: str = "skip", out: Print = print, num_samples: int | None = None) -> dict[str, Any]:
    """Continue a stopped sweep from its folder: unfinished trials go on from their last checkpoint.

    Settings come from the saved ``tuner_config.yaml``; everything is read and checked before Ray
    touches the folder, so a bad experiment is reported and left exactly as it was. ``num_samples``
    (more than before) grows the sweep: the searcher, with all it learnt, proposes the extra trials.
    """
    from tuner import cluster, experiment
    from tuner.ray_state import latest_state_name, saved_trial_states

    if errored not in ERRORED_CHOICES:
        raise UsageError(f"--errored {errored!r} is not valid; use one of: {', '.join(ERRORED_CHOICES)}")
    folder = experiment.locate(ref)
    config = experiment.load_saved_config(folder)
    statuses = {tid: state["status"] for tid, state in saved_trial_states(folder).items()}
    if latest_state_name(folder) is None or not storage.exists(folder, "tuner.pkl"):
        raise UsageError(f"{folder} has no saved sweep state to resume (it stopped before its first trial)")
    if num_samples is not None:
        config = _grown(folder, config, num_samples)
    plan = prepare(config, out, resuming=True)
    started = cluster.connect(config.address)
    try:
        from ray import tune

        plan = place(plan)
        done = sum(status == "TERMINATED" for status in statuses.values())
        out(f"resuming {folder}: {done} of {len(statuses)} trial(s) finished; errored trials: {errored}")
        if num_samples is not None:
            from tuner.config import save_config
            from tuner.ray_compat import extend_saved_search

            extend_saved_search(folder, num_samples)
            save_config(config, folder)
            out(f"growing the sweep to {num_samples} trials: {num_samples - len(statuses)} more")
        tuner = tune.Tuner.restore(
            folder,
            trainable=_wrapped_trainable(plan),
            resume_unfinished=True,
            resume_errored=errored == "resume",
            restart_errored=errored == "restart",
        )
        return _fit(tuner, plan.config, folder)
    finally:
        cluster.disconnect(started)


def _grown(folder: str, config: SweepConfig, num_samples: int) -> SweepConfig:
    """The saved settings with more trials, or a one-line error saying why the sweep cannot grow."""
    from tuner.ray_compat import can_grow

    if num_samples <= config.num_samples:
        raise UsageError(f"--num-samples {num_samples}: the sweep already has {config.num_samples}; pass more to grow it")
    if not can_grow(folder):
        raise UsageError(f"{folder} crosses a grid or runs PBT, whose trials were all planned at the start; it "
                         "cannot grow: start a new sweep instead")  # fmt: skip
    return dataclasses.replace(config, num_samples=num_samples)
