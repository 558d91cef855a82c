"""Everything that happens before launch: a resolved config becomes a ``SweepPlan`` that can run.

``prepare`` does what needs no cluster (the space, the trainable, the searcher's and scheduler's plans,
the data, decoded once) so bad input fails in a second; ``place`` meets the cluster (GPU share, auto
packing, trials at once, storage visibility). ``describe`` is what ``tuner sweep`` prints before the
first trial, and all that ``--dry-run`` prints.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from tuner import algorithms, schedulers, searchers
from tuner.errors import UsageError
from tuner.launch.registry import IN_MEMORY, load_space, resolve_trainable
from tuner.launch.trial import forms
from tuner.launch.trial.forms import check_form, checkpoint_advice, declared_keywords
from tuner.objectives import check_satisfiable
from tuner.searchers.plan import grid_points, is_grid
from tuner.settings import GPUS_AUTO, SweepConfig
from tuner.spec import SearchSpace, contract

if TYPE_CHECKING:
    from tuner.launch.placement.packing import MeasureFn, Packing
    from tuner.launch.placement.resources import NodeResources
    from tuner.launch.trial.forms import TrainableForm
    from tuner.launch.trial.ray_train import TrainerWorkers
    from tuner.launch.warm_start import WarmStart
    from tuner.schedulers import SchedulerContext, SchedulerEntry
    from tuner.searchers import SearcherEntry, SearchPlan

# Settings a trainable (or its data loader) may declare as keyword arguments; ``data`` is what the
# trainable's ``data_loader`` returns, loaded once per sweep and shared with every trial.
RUN_SETTINGS = (
    "max_epochs",
    "seed",
    "dataset",
    "data_dir",
    "synthetic_size",
    "download",
    "cpus_per_trial",
    "gpus_per_trial",
)
Print = Callable[[str], None]


@dataclass(frozen=True)
class SweepPlan:
    """A sweep ready to launch."""

    config: SweepConfig
    space: SearchSpace
    trainable: TrainableForm
    search_plan: SearchPlan
    scheduler: SchedulerEntry
    context: SchedulerContext
    kwargs: dict[str, Any]  # what the trainable receives besides its config: run settings, the user's data
    data_note: str = ""
    slots: int = 0  # trials that fit at once on the cluster
    packing: Packing | None = None  # --gpus-per-trial auto's decision
    warm_start: WarmStart | None = None  # earlier trials that seed the searcher
    trainer: TrainerWorkers | None = None  # the Ray Train trainer's workers each trial runs, if it runs one
    room: int | None = (
        None  # trials at once whose trainers' workers fit beside them (``trainer``'s size known)
    )

    @property
    def searcher(self) -> SearcherEntry:
        return searchers.entry(self.config.searcher or searchers.AUTO)  # resolved: always a name by now

    @property
    def max_concurrent(self) -> int | None:
        """Trials running at once, when tuner limits it (tuner/algorithms.py says when); where each runs a Ray
        Train trainer, the trials whose workers fit too (``slots``), unless trials may be paused (a limit counts
        the paused ones)."""
        adaptive = self.packing is not None and self.packing.trials_per_gpu > 1
        if self.leaves_trainers_room:
            return self.room
        return algorithms.at_once(
            self.scheduler.name,
            self.searcher.name,
            self.slots,
            given=self.config.max_concurrent,
            adaptive=adaptive,
        )

    @property
    def wants_dashboard(self) -> bool:
        """Whether a local Ray starts its dashboard: when asked, and where a Ray Train trainer runs in each trial
        (its cleaner frees a stopped trainer's placement group through the state API, which the dashboard serves;
        without it the next trial's workers wait for ever)."""
        return self.config.dashboard or self.trainer is not None

    @property
    def leaves_trainers_room(self) -> bool:
        """Whether tuner holds the trials at once to those whose Ray Train workers fit beside them."""
        pauses = self.scheduler.pauses_trials and self.context.can_pause  # a limit would count paused trials
        return self.room is not None and not self.config.max_concurrent and not pauses

    @property
    def trials_at_once(self) -> int:
        """Trials the plan lets run at once: the slots the cluster has, fewer where tuner limits it."""
        return min(self.slots, self.max_concurrent or self.slots)

    @property
    def trials_waiting(self) -> int | None:
        """Trials that may wait for a slot at once, where tuner sets it (tuner/algorithms.py says when)."""
        return algorithms.trials_waiting(
            self.scheduler.name, self.searcher.name, self.search_plan, self.slots, self.max_concurrent
        )


def prepare(config: SweepConfig, out: Print = print, resuming: bool = False) -> SweepPlan:
    """The plan of a sweep, checked and with its data loaded, before any cluster is touched.

    ``config`` is complete: settings come down from ``resolve`` (or an experiment's saved settings, which
    ``resolve`` completed when it started) and are not decided again here. A new sweep never writes into an
    existing experiment; ``resuming`` is ``tuner resume`` on its own.
    """
    from tuner import storage

    if config.name is None or config.searcher in (None, searchers.AUTO):
        raise TypeError(
            "prepare() takes the settings tuner.launch.resolve.resolve() completed (name and searcher set)"
        )
    space = load_space(config.space)
    storage.check_usable(config.storage_path)
    if not resuming:  # an experiment saved with them still reads
        check_satisfiable(config.constraint_list)
    if not resuming and (holder := _inside_experiment(config.storage_path)) is not None:
        raise UsageError(  # a sweep never writes into an existing experiment
            f"--storage-path {config.storage_path} is inside the experiment {holder}; keep experiments side by side"
        )
    if not resuming:
        from tuner.launch.guards.disk import room_left

        short = room_left(config.storage_path)
        if short:
            raise UsageError(
                f"--storage-path {config.storage_path}: {short}; free space or pass another folder"
            )
    if not resuming and storage.holds_experiment(config.experiment_path):
        resume = (  # a SearchSpace object tuner.sweep was given lives in its process: no shell can resume it
            ""
            if config.space.startswith(IN_MEMORY)
            else f"continue it with 'tuner resume {config.experiment_path}' (a finished one grows with "
            "--num-samples N), or "
        )
        raise UsageError(
            f"experiment {config.name} already exists in {config.storage_path}; {resume}pass another name "
            "(--name; a sweep never writes into an existing one)"
        )
    trainable = resolve_trainable(space.trainable)
    check_form(trainable, space.trainable_name, RUN_SETTINGS)
    contract(trainable)  # a misnamed or mistyped declaration is one line now, before anything starts
    scheduler = schedulers.entry(config.scheduler)
    context = algorithms.scheduler_context(
        params=space.flat_params,
        objectives=config.objectives,
        max_epochs=config.max_epochs,
        num_samples=config.planned_trials * grid_points(space.flat_params),
        seed=config.seed,
        grace_period=config.grace_period,
        reduction_factor=config.reduction_factor,
        constraints=config.constraint_list,
        can_pause=keeps_checkpoints(trainable),
        own_loop=forms.loop_is_its_own(trainable),
        trials_cap=config.trials_cap,
    )
    if scheduler.gates_new_trials:
        grids = [name for name, value in space.flat_params.items() if is_grid(value)]
        if grids:
            raise UsageError(
                f"{config.scheduler} chooses one config at a time and {', '.join(grids)} "
                f"{'is a grid' if len(grids) == 1 else 'are grids'} (tune.grid_search), which Tune's variant "
                "generator crosses: write it as tune.choice, or use --scheduler asha (or median, hyperband, fifo)"
            )
    search_plan = searchers.plan_search(space.flat_params, config.searcher, config.seed)
    if scheduler.needs_checkpoints and not keeps_checkpoints(trainable):
        why = (
            "continues trials from other trials' checkpoints"
            if config.scheduler == "pbt"
            else "pauses trials and continues them from their checkpoints"
        )
        raise UsageError(
            f"--scheduler {config.scheduler} {why}, but trainable {space.trainable_name} does not continue from "
            f"a checkpoint; {checkpoint_advice(trainable)}, or choose another scheduler "
            f"({', '.join(e.name for e in schedulers.ENTRIES if not e.needs_checkpoints)})"
        )
    if config.scheduler == "pbt":
        from tuner.schedulers.pbt import mutations

        if not mutations(space.flat_params):
            raise UsageError("pbt has nothing to perturb: the space has no continuous or choice parameter")
    warm = None if resuming or not config.warm_start else _warm_start(config, space, search_plan)
    kwargs, note = trainable_kwargs(trainable, config)
    return SweepPlan(
        config, space, trainable, search_plan, scheduler, context, kwargs, note, warm_start=warm,
        trainer=_trainer_of(trainable),
    )  # fmt: skip


def _warm_start(config: SweepConfig, space: SearchSpace, search_plan: SearchPlan) -> WarmStart:
    """Earlier sweeps' trials, encoded for this sweep's searcher; a searcher that cannot take them is a
    one-line error."""
    from tuner.launch import warm_start

    # several objectives were refused before (algorithms.SeveralObjectives.check)
    entry = searchers.entry(search_plan.searcher)
    conditional = search_plan.conditionals or _conditionals(space)
    # a searcher that asks conditional parameters as it runs (define-by-run) cannot be told earlier trials
    able = [
        e.name
        for e in searchers.ENTRIES
        if e.takes_earlier_results and not (conditional and e.models_conditionals)
    ]
    if not entry.takes_earlier_results:
        chosen = (
            "auto chose searcher" if (config.searcher_chosen or "").startswith("auto chose") else "searcher"
        )
        raise UsageError(
            f"--warm-start: {chosen} {entry.name}, which cannot take earlier results; pass --searcher with one "
            f"that can{' here' if conditional else ''}: {', '.join(able)}"
        )
    if search_plan.conditionals:
        names = ", ".join(p.name for p in search_plan.conditionals)
        raise UsageError(
            f"--warm-start: this space has conditional parameters ({names}), which {entry.name} asks as it runs "
            f"and so cannot take earlier results; pass --searcher with one that draws them at random and takes "
            f"the rest: {', '.join(able)} (or start without --warm-start)"
        )
    warm = warm_start.gather(
        config.warm_start or [], space.flat_params, config.objective, config.storage_path
    )
    return warm_start.encode(warm, search_plan)


def _conditionals(space: SearchSpace) -> list[str]:
    """The space's conditional parameters as a searcher that models them plans them (none where it cannot)."""
    try:
        return [p.name for p in searchers.plan_search(space.flat_params, "optuna").conditionals]
    except UsageError:
        return []


def _inside_experiment(storage_path: str) -> Path | None:
    from tuner import storage
    from tuner.where import experiment_above

    plain = storage.local_path(storage_path)
    return experiment_above(plain) if plain is not None else None


def keeps_checkpoints(trainable: TrainableForm) -> bool:
    """Whether a trainable continues from a checkpoint: it says so (``train.checkpoints``), a class saves and
    loads them, or a function's source asks Tune for one."""
    return forms.keeps_checkpoints(trainable, contract(trainable).checkpoints)


def trainable_kwargs(trainable: TrainableForm, config: SweepConfig) -> tuple[dict[str, Any], str]:
    """The run settings the trainable declares, with its data loaded once here if it asks for ``data``."""
    declared = forms.settings_keywords(trainable)
    settings = {name: getattr(config, name) for name in RUN_SETTINGS}
    if declared is None:
        return settings, ""
    kwargs = {k: v for k, v in settings.items() if k in declared}
    if "data" not in declared:
        return kwargs, ""
    loader = contract(trainable).data_loader
    if loader is None:
        name = getattr(trainable, "__qualname__", "the trainable")
        raise UsageError(
            f"{name} takes `data` but declares no data_loader to load it (set {name}.data_loader)"
        )
    wanted = declared_keywords(loader, after_config=False)
    data = loader(**{k: v for k, v in settings.items() if wanted is None or k in wanted})
    kwargs["data"] = data
    size = getattr(data, "nbytes", None)
    described = f"{getattr(data, 'name', type(data).__name__)}"
    if hasattr(data, "train_labels"):
        described += f", {len(data.train_labels)} training images"
    if size:
        described += f" ({size / 2**20:.1f} MiB)"
    return kwargs, f"data: {described}, decoded once and shared with every trial"


def place(plan: SweepPlan, memory_probe: MeasureFn | None = None) -> SweepPlan:
    """Meet the connected cluster: the GPU share (measured for ``auto``) and the trials that fit at once.

    A trial no node can hold is refused here, never left PENDING.
    """
    from tuner.launch.placement import resources
    from tuner.launch.placement.cluster import check_storage_reachable

    cfg = plan.config
    nodes = resources.alive_nodes()
    trainer = plan.trainer
    packing = None
    if cfg.gpus_per_trial == GPUS_AUTO and trainer is not None:  # its workers hold the GPUs, not the trial
        gpus = 0.0
    elif cfg.gpus_per_trial == GPUS_AUTO:
        packing = _auto_packing(plan, nodes, memory_probe)
        gpus = packing.share if packing.trials_per_gpu else 0.0
    elif cfg.gpus_per_trial is None:  # a Ray Train trainer's workers hold the GPUs, not the trial
        gpus = 0.0 if trainer is not None else resources.default_gpus_per_trial(nodes)
    else:
        gpus = cfg.gpus_per_trial
    resources.check_trial_fits(cfg.cpus_per_trial, gpus, nodes)
    _check_budget_unit(cfg, gpus)
    check_storage_reachable(cfg.storage_path, cfg.allow_local_storage)
    kwargs = dict(plan.kwargs)
    if "gpus_per_trial" in kwargs:
        kwargs["gpus_per_trial"] = gpus
    slots = resources.concurrent_slots(cfg.cpus_per_trial, gpus, nodes)
    room = None
    if trainer is not None and trainer.known:
        room = min(slots, _room_for_trainers(trainer, cfg.cpus_per_trial, gpus, nodes))
    config = dataclasses.replace(cfg, gpus_per_trial=gpus)
    return dataclasses.replace(plan, config=config, kwargs=kwargs, slots=slots, packing=packing, room=room)


def _trainer_of(trainable: TrainableForm) -> TrainerWorkers | None:
    from tuner.launch.trial.ray_train import trainer_workers
    from tuner.ray_compat import own_code

    own = own_code(trainable)
    return None if forms.is_class(own) else trainer_workers(own)


def _room_for_trainers(trainer: TrainerWorkers, cpus: float, gpus: float, nodes: list[NodeResources]) -> int:
    """Trials at once that leave their trainers' workers room; one line when not even one trial's do fit."""
    total_cpus, total_gpus = sum(n.cpus for n in nodes), sum(n.gpus for n in nodes)
    fit = trainer.trials_at_once(cpus, gpus, total_cpus, total_gpus)
    if fit < 1:
        raise UsageError(
            f"each trial runs a Ray Train trainer whose workers need {trainer.cpus:g} CPUs and {trainer.gpus:g} GPUs "
            f"beside the trial's own {cpus:g} CPU(s): more than the cluster's {total_cpus:g} CPUs and "
            f"{total_gpus:g} GPUs; lower ScalingConfig's num_workers or resources_per_worker"
        )
    return fit


def _check_budget_unit(cfg: SweepConfig, gpus: float) -> None:
    from tuner.limits import GPU_HOURS, Budget

    if cfg.budget is not None and Budget.parse(cfg.budget).kind == GPU_HOURS and not gpus:
        raise UsageError(
            f"--budget {cfg.budget} counts GPU-hours, but trials run on CPUs only (0 GPUs per trial); "
            "give the budget in time (e.g. 2h) or epochs (e.g. 500ep)"
        )


def _auto_packing(plan: SweepPlan, nodes: list[NodeResources], memory_probe: MeasureFn | None) -> Packing:
    """Measure the most demanding config on a GPU and pack trials by it (tuner/launch/placement/packing.py)."""
    from tuner.launch.placement import packing

    cfg = plan.config
    gpu_nodes = [n for n in nodes if n.gpus > 0]
    if not gpu_nodes:
        return packing.no_gpu_packing()
    config = packing.demanding_config(plan.space.flat_params, cfg.seed)
    if memory_probe is None:
        probe = packing.memory_probe_of(plan.trainable)
        if probe is None:
            return packing.Packing(
                1,
                1,
                1,
                None,
                None,
                "the trainable declares no memory probe "
                "(train.memory_probe), so each trial gets one whole GPU",
            )
        declared = declared_keywords(probe)
        probe_kwargs = {k: v for k, v in plan.kwargs.items() if declared is None or k in declared}
        measured = packing.measure_on_gpu(probe, config, probe_kwargs, cpus=cfg.cpus_per_trial)
    else:
        measured = memory_probe(config)
    cpus_per_gpu = min(n.cpus / n.gpus for n in gpu_nodes)
    return packing.plan_packing(measured, cpus_per_gpu, cfg.cpus_per_trial, packing.mps_running())
