"""The one place that builds ``ray.tune.Tuner``: from a resolved config to a finished sweep.

Everything that can be checked without Ray (space, searcher/space pair, data) is checked first, so bad
input fails in a second, before a cluster starts or a trial launches.
"""

from __future__ import annotations

import dataclasses
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tuner import storage
from tuner.config import SweepConfig, default_name, save_config
from tuner.errors import TunerError, UsageError
from tuner.registry import declared_keywords, is_space_path, load_space, resolve_trainable, space_label
from tuner.spec import SearchSpace

log = logging.getLogger(__name__)

# Settings a trainable may declare as keyword arguments; ``data`` is the dataset decoded once per sweep.
RUN_SETTINGS = (
    "max_epochs",
    "seed",
    "dataset",
    "data_dir",
    "synthetic_size",
    "cpus_per_trial",
    "gpus_per_trial",
)
Print = Callable[[str], None]


@dataclass(frozen=True)
class SweepPlan:
    """A sweep ready to launch: the resolved config, its space, trainable and search plan."""

    config: SweepConfig
    space: SearchSpace
    trainable: Callable[..., Any]
    search_plan: Any

    @property
    def experiment_path(self) -> str:
        return self.config.experiment_path


def resolve(config: SweepConfig) -> SweepPlan:
    """Load the space and fill every setting still open, without starting Ray."""
    from tuner.searchers import plan_search

    space = load_space(config.space)
    updates: dict[str, Any] = {}
    if config.metric is None:
        updates["metric"] = space.metric
    if config.mode is None:
        updates["mode"] = space.mode
    if config.name is None:
        updates["name"] = default_name(space_label(config.space), config.scheduler, config.searcher)
    if is_space_path(config.space):
        updates["space"] = str(Path(config.space).expanduser().resolve())
    if "://" not in config.storage_path:
        updates["storage_path"] = str(Path(config.storage_path).expanduser().resolve())
    updates["data_dir"] = str(Path(config.data_dir).expanduser().resolve())
    config = dataclasses.replace(config, **updates)
    plan = plan_search(space.params, config.searcher)
    return SweepPlan(config, space, resolve_trainable(space.trainable), plan)


def trainable_kwargs(plan: SweepPlan, out: Print) -> dict[str, Any]:
    """The run settings the trainable declares, with the dataset loaded once here if it asks for ``data``."""
    cfg = plan.config
    declared = declared_keywords(plan.trainable)
    settings = {name: getattr(cfg, name) for name in RUN_SETTINGS}
    if declared is None:
        return settings
    kwargs = {k: v for k, v in settings.items() if k in declared}
    if "data" in declared:
        from trainables.data import load_dataset

        data = load_dataset(cfg.dataset, cfg.data_dir, cfg.synthetic_size, cfg.download, seed=cfg.seed)
        out(
            f"data: {data.name}, {len(data.train_labels)} training images ({data.nbytes / 2**20:.1f} MiB), "
            "decoded once and shared with every trial"
        )
        kwargs["data"] = data
    return kwargs


def run_sweep(
    config: SweepConfig,
    out: Print = print,
    num_cpus: int | None = None,
    reuse_actors: bool = True,
    memory_probe: Any = None,
) -> dict[str, Any]:
    """Run a sweep to the end and return its summary (also written to ``best_config.json``).

    ``reuse_actors`` keeps one Ray actor per slot across trials (a trial's state lives in its function,
    so nothing leaks between trials); turning it off exists for comparison in benchmarks.
    ``memory_probe`` (config -> ``packing.MemoryProbe``) replaces the GPU measurement behind
    ``--gpus-per-trial auto``.
    """
    plan = resolve(config)
    kwargs = trainable_kwargs(plan, out)  # data errors surface before Ray starts
    from tuner import cluster

    started = cluster.connect(plan.config.address, num_cpus=num_cpus, dashboard=plan.config.dashboard)
    try:
        return launch(plan, kwargs, out, reuse_actors=reuse_actors, memory_probe=memory_probe)
    finally:
        cluster.disconnect(started)


def visible_params(params: dict[str, Any]) -> list[str]:
    """Parameters shown in the live table (test hooks, named with a leading underscore, are not)."""
    return [name for name in params if not name.startswith("_")]


def _wrapped_trainable(plan: SweepPlan, kwargs: dict[str, Any], gpus: float, packing_key: str | None = None) -> Any:
    """The trainable with its data and resources; with auto packing, each trial's share is decided when
    the trial is created, so a lowered packing reaches the trials that follow."""
    import functools

    from ray import tune

    from tuner import packing, resources

    if packing_key is not None:
        request: Any = functools.partial(packing.trial_resources, packing_key, plan.config.cpus_per_trial)
    else:
        request = resources.trial_resources(plan.config.cpus_per_trial, gpus)
    return tune.with_resources(tune.with_parameters(plan.trainable, **kwargs), request)


def _check_resources(
    plan: SweepPlan, kwargs: dict[str, Any], memory_probe: Any = None
) -> tuple[SweepConfig, int, Any]:
    """Fill the GPU share from the cluster (measuring it for ``auto``) and refuse trials no node can hold.

    Returns the config with its real share, the trials that fit at once, and the packing (``auto`` only).
    """
    from tuner import resources
    from tuner.config import GPUS_AUTO

    cfg = plan.config
    nodes = resources.alive_nodes()
    packing = None
    if cfg.gpus_per_trial == GPUS_AUTO:
        packing = _auto_packing(plan, kwargs, nodes, memory_probe)
        gpus = packing.share if packing.trials_per_gpu else 0.0
    elif cfg.gpus_per_trial is None:
        gpus = resources.default_gpus_per_trial(nodes)
    else:
        gpus = cfg.gpus_per_trial
    resources.check_trial_fits(cfg.cpus_per_trial, gpus, nodes)
    if "gpus_per_trial" in kwargs:
        kwargs["gpus_per_trial"] = gpus
    slots = resources.concurrent_slots(cfg.cpus_per_trial, gpus, nodes)
    return dataclasses.replace(cfg, gpus_per_trial=gpus), slots, packing


def _auto_packing(plan: SweepPlan, kwargs: dict[str, Any], nodes: list[Any], memory_probe: Any) -> Any:
    """Measure the most demanding config on a GPU and pack trials by it (tuner/packing.py)."""
    from tuner import packing

    cfg = plan.config
    gpu_nodes = [n for n in nodes if n.gpus > 0]
    if not gpu_nodes:
        return packing.no_gpu_packing()
    config = packing.demanding_config(plan.space.params, cfg.seed)
    if memory_probe is None:
        probe = packing.memory_probe_of(plan.trainable)
        if probe is None:
            return packing.Packing(1, 1, 1, None, None, "the trainable declares no memory probe "
                                   "(train.memory_probe), so each trial gets one whole GPU")  # fmt: skip
        declared = declared_keywords(probe)
        probe_kwargs = {k: v for k, v in kwargs.items() if declared is None or k in declared}
        measured = packing.measure_on_gpu(probe, config, probe_kwargs, cpus=cfg.cpus_per_trial)
    else:
        measured = memory_probe(config)
    cpus_per_gpu = min(n.cpus / n.gpus for n in gpu_nodes)
    return packing.plan_packing(measured, cpus_per_gpu, cfg.cpus_per_trial, packing.mps_running())


def launch(
    plan: SweepPlan, kwargs: dict[str, Any], out: Print, reuse_actors: bool = True, memory_probe: Any = None
) -> dict[str, Any]:
    """Start the trials of a resolved plan on the connected Ray and wait for them."""
    import numpy as np
    from ray import tune

    from tuner import packing as packings
    from tuner.cluster import check_storage_reachable
    from tuner.reporting import MetricGuard, build_reporter, logger_callbacks
    from tuner.schedulers import build_scheduler, describe_scheduler
    from tuner.searchers import build_searcher, searcher_intro
    from tuner.trial_states import StatusRecorder

    cfg, slots, packing = _check_resources(plan, kwargs, memory_probe)
    check_storage_reachable(cfg.storage_path, cfg.allow_local_storage)
    gpus = cfg.gpus_per_trial
    adaptive = packing is not None and packing.trials_per_gpu > 1
    # Model-based searchers propose as trials free up; with adaptive packing, random search must too,
    # so that trials created after an out-of-memory error get the lowered share.
    limit_concurrency = cfg.searcher != "random" or adaptive
    max_concurrent = cfg.max_concurrent or (slots if limit_concurrency else None)

    folder = cfg.experiment_path
    storage.prepare(folder)
    save_config(cfg, folder)
    out(f"experiment: {folder}")
    out(f"scheduler: {describe_scheduler(cfg.scheduler, cfg.max_epochs)}")
    out(searcher_intro(plan.search_plan, cfg.num_samples))
    for line in plan.search_plan.lines():
        out(line)
    for line in packing.describe() if packing is not None else []:
        out(line)
    out(
        f"resources: {cfg.cpus_per_trial:g} CPU and {gpus:g} GPU per trial; "
        f"{min(slots, max_concurrent or slots)} trial(s) at once"
    )
    if 0 < gpus < 1 and cfg.address is None and packing is None and not packings.mps_running():
        out("  trials sharing a GPU take turns on it; with NVIDIA MPS running they train side by side "
            "(README: 'Many trials on one GPU')")  # fmt: skip

    np.random.seed(cfg.seed)  # sample_from functions draw from numpy's global generator
    guard = MetricGuard(cfg.metric)
    searcher = build_searcher(plan.search_plan, cfg.metric, cfg.mode, cfg.num_samples, cfg.seed,
                              max_concurrent if cfg.searcher == "random" else None)  # fmt: skip
    extra_callbacks = []
    packing_key = None
    if adaptive:
        packing_key = folder
        packings.start(packing_key, packing.trials_per_gpu)
        extra_callbacks.append(packings.oom_watcher(packing_key, out))
    tuner = tune.Tuner(
        _wrapped_trainable(plan, kwargs, gpus, packing_key),
        param_space=dict(plan.space.params) if cfg.searcher == "random" else {},
        tune_config=tune.TuneConfig(
            metric=cfg.metric,
            mode=cfg.mode,
            scheduler=build_scheduler(cfg.scheduler, cfg.max_epochs),
            search_alg=searcher,
            num_samples=cfg.num_samples,
            max_concurrent_trials=max_concurrent if cfg.searcher != "random" else None,
            reuse_actors=reuse_actors,
        ),
        run_config=tune.RunConfig(
            name=cfg.name,
            storage_path=cfg.storage_path,
            callbacks=[guard, StatusRecorder(str(folder)), *extra_callbacks, *logger_callbacks(cfg, out)],
            progress_reporter=build_reporter(cfg.metric, cfg.mode, visible_params(plan.space.params)),
            checkpoint_config=tune.CheckpointConfig(
                num_to_keep=1, checkpoint_score_attribute=cfg.metric, checkpoint_score_order=cfg.mode
            ),
            failure_config=tune.FailureConfig(max_failures=cfg.max_failures),
            verbose=1,
        ),
    )
    try:
        return _fit(tuner, cfg, folder, guard)
    finally:
        if packing_key is not None:
            packings.stop(packing_key)


def _fit(tuner: Any, cfg: SweepConfig, folder: str, guard: Any = None) -> dict[str, Any]:
    from tuner import trial_states
    from tuner.reporting import quiet_benign_sync_races
    from tuner.results import summarize

    quiet_benign_sync_races()
    trial_states.forget(folder)
    try:
        grid = tuner.fit()
    except Exception as exc:
        if guard is not None and guard.problem:
            raise UsageError(guard.problem) from exc
        raise TunerError(f"the sweep failed: {exc}") from exc
    if guard is not None and guard.problem:
        raise UsageError(guard.problem)
    statuses = trial_states.last_step(folder)
    if statuses is not None:
        trial_states.repair_saved_statuses(folder, statuses)
    summary = summarize(grid, cfg.metric, cfg.mode, folder)
    summary["unfinished"] = _unfinished_trials(cfg, folder, statuses)
    return summary


def _unfinished_trials(cfg: SweepConfig, folder: str, statuses: dict[str, str] | None) -> int:
    """Trials not yet run to their end: non-zero after Ctrl-C, which Ray turns into an orderly stop.

    ``statuses`` are the sweep's own last-step statuses; without them (an experiment started before
    they were recorded) the saved state is read instead.
    """
    from tuner.experiment import saved_trial_states
    from tuner.trial_states import UNFINISHED

    if statuses is None:
        try:
            statuses = {trial_id: state["status"] for trial_id, state in saved_trial_states(folder).items()}
        except UsageError:
            return 0
    open_trials = sum(status in UNFINISHED for status in statuses.values())
    never_started = max(cfg.num_samples - len(statuses), 0) if cfg.searcher != "random" else 0
    return open_trials + never_started


ERRORED_CHOICES = ("resume", "restart", "skip")


def resume_sweep(ref: str, errored: str = "skip", out: Print = print) -> dict[str, Any]:
    """Continue a stopped sweep from its folder: unfinished trials go on from their last checkpoint.

    Settings come from the saved ``tuner_config.yaml``; everything is read and checked before Ray
    touches the folder, so a bad experiment is reported and left exactly as it was.
    """
    from tuner import cluster
    from tuner.experiment import latest_state_name

    if errored not in ERRORED_CHOICES:
        raise UsageError(f"--errored {errored!r} is not valid; use one of: {', '.join(ERRORED_CHOICES)}")
    folder, config, statuses = _saved_sweep(ref)  # raises on a missing, foreign or corrupted experiment
    if latest_state_name(folder) is None or not storage.exists(folder, "tuner.pkl"):
        raise UsageError(f"{folder} has no saved sweep state to resume (it stopped before its first trial)")
    plan = resolve(config)
    kwargs = trainable_kwargs(plan, out)
    started = cluster.connect(plan.config.address)
    try:
        from ray import tune

        from tuner.cluster import check_storage_reachable

        cfg, _, packing = _check_resources(plan, kwargs)
        for line in packing.describe() if packing is not None else []:
            out(line)
        check_storage_reachable(cfg.storage_path, cfg.allow_local_storage)
        done = sum(status == "TERMINATED" for status in statuses.values())
        out(f"resuming {folder}: {done} of {len(statuses)} trial(s) finished; errored trials: {errored}")
        tuner = tune.Tuner.restore(
            folder,
            trainable=_wrapped_trainable(plan, kwargs, cfg.gpus_per_trial),
            resume_unfinished=True,
            resume_errored=errored == "resume",
            restart_errored=errored == "restart",
        )
        return _fit(tuner, cfg, folder)
    finally:
        cluster.disconnect(started)


def _saved_sweep(ref: str) -> tuple[str, SweepConfig, dict[str, str]]:
    """Folder, settings and trial statuses of a saved sweep: a local folder (or name), or a storage URI."""
    from tuner import experiment
    from tuner.config import load_saved_config

    if storage.is_uri(ref):
        folder = ref.rstrip("/")
        config = load_saved_config(folder)
        return (
            folder,
            config,
            {tid: state["status"] for tid, state in experiment.saved_trial_states(folder).items()},
        )
    record = experiment.load(ref)
    return str(record.path), record.config, {t.trial_id: t.status for t in record.trials}
