"""What the plan prints before launch (and ``--dry-run`` stops after): settings, scheduler and searcher with why
they were chosen, the search plan, objectives, resources, epochs, budget and trial timeout."""

from __future__ import annotations

from tuner.algorithms import held_out_figure
from tuner.launch.plan import SweepPlan
from tuner.searchers.plan import grid_points
from tuner.settings import SweepConfig

DATA_SETTINGS = ("dataset", "data_dir", "synthetic_size", "download")


def _reads_data(plan: SweepPlan) -> bool:
    """Whether the trainable receives a data setting, or data its loader read by them."""
    return "data" in plan.kwargs or any(k in plan.kwargs for k in DATA_SETTINGS)


def _resolved(plan: SweepPlan) -> dict[str, str]:
    """What the plan makes of a setting left unset, in words beside it."""
    cfg, said = plan.config, {}
    if cfg.num_samples is None:
        said["num_samples"] = "no cap: trials come until the budget is spent"
    if cfg.max_concurrent is None:
        said["max_concurrent"] = f"{plan.trials_at_once} trial(s) at once: as many as there is room for now"
    if cfg.trial_timeout is None:
        said["trial_timeout"] = "from the slowest epoch seen: see trial timeout below"
    if cfg.address is None:
        said["address"] = "a Ray of its own on this machine"
    return said


# settings the dry run leaves out while unset: what auto chose, and where a grown sweep came from
QUIET_WHEN_UNSET = ("scheduler_chosen", "searcher_chosen", "origin")


def describe(plan: SweepPlan, dry_run: bool = False) -> list[str]:
    """What the sweep will do, printed before the first trial (and all of ``--dry-run``)."""
    cfg = plan.config
    lines = []
    if dry_run:
        lines.append("settings:")
        unused: tuple[str, ...] = () if _reads_data(plan) else DATA_SETTINGS
        said = {**plan.scheduler.settings_said(plan.context), **_resolved(plan)}
        for k, v in cfg.as_text().items():
            if v is None and k in QUIET_WHEN_UNSET:
                continue
            if k not in unused:
                lines.append(f"  {k}: {'none' if v is None else v}" + (f" ({said[k]})" if k in said else ""))
            elif k == unused[0]:
                lines.append(f"  {', '.join(unused)}: not used (the trainable takes none of them, nor data)")
    lines.append(f"experiment: {cfg.experiment_path}" + (" (not created: dry run)" if dry_run else ""))
    if plan.data_note:
        lines.append(plan.data_note)
    from tuner.ray_compat import old_api_notice

    notice = old_api_notice(plan.trainable)
    if notice:
        lines.append(notice)
    lines.append(f"scheduler: {plan.scheduler.describe(plan.context)[0]}")
    lines += plan.scheduler.describe(plan.context)[1:]
    if cfg.scheduler_chosen:
        lines.append(f"  {cfg.scheduler_chosen}")
        if plan.scheduler.name == "freeze-thaw" and plan.searcher.name == "curves":  # the pair measured
            lines.append(f"  held out: {held_out_figure(plan.context.can_pause, plan.trials_at_once)}")
    if cfg.searcher_chosen:
        lines.append(f"searcher: {cfg.searcher_chosen}")
    lines.append(
        plan.searcher.intro(cfg.planned_trials, len(plan.warm_start.points) if plan.warm_start else 0)
    )
    lines += plan.search_plan.lines()
    if plan.space.native is not None:
        lines.append(f"  {plan.space.native.describe()}")
    lines += objective_lines(plan)
    if plan.warm_start is not None:
        lines.append(plan.warm_start.describe())
        note = plan.warm_start.epochs_note(cfg.max_epochs)
        if note:
            lines.append(note)
    if plan.packing is not None:
        lines += plan.packing.describe()
    lines.append(
        f"resources: {cfg.cpus_per_trial:g} CPU and {cfg.gpus_per_trial:g} GPU per trial; "
        f"{plan.trials_at_once} trial(s) at once"
    )
    if plan.trainer is not None:
        lines.append(f"  each trial runs a Ray Train trainer: {plan.trainer.describe()}" + _room(plan))
        if cfg.address is None and not cfg.dashboard:
            lines.append(
                "  Ray's dashboard starts with the local Ray (on 127.0.0.1): Ray Train frees the workers of a "
                "trainer whose trial was stopped through it"
            )
    lines += _turns(plan)
    if 0 < float(cfg.gpus_per_trial or 0) < 1 and cfg.address is None and plan.packing is None:
        from tuner.launch.placement.packing import mps_running

        if not mps_running():
            lines.append(
                "  trials sharing a GPU take turns on it; with NVIDIA MPS running they train side by "
                "side (docs/gpus.md: 'Many trials on one GPU')"
            )
    grids = grid_points(plan.space.flat_params)
    trials = f"{cfg.num_samples} trial(s)"
    if grids > 1 and cfg.num_samples is not None:
        trials = f"{cfg.num_samples * grids} trial(s): {cfg.num_samples} sample(s) x {grids} grid points"
    if cfg.trials_cap is None:
        lines.append(
            f"epochs: as many as the budget allows, up to {cfg.max_epochs} per trial; trials keep coming "
            "until it is spent"
        )
    else:
        worst = plan.scheduler.worst_case_epochs(plan.context)
        lines.append(f"epochs: at most {worst} in all ({trials}, up to {cfg.max_epochs} each)")
        from tuner.launch.trial import forms
        from tuner.ray_compat import own_code

        if plan.scheduler.runs_epochs_again and not forms.is_class(own_code(plan.trainable)):
            lines.append(
                f"  distinct epochs: {plan.scheduler.name} pauses trials at epochs it sets, and a function that "
                "reported no checkpoint there runs the epochs since again when continued (the summary counts them)"
            )
    lines += limit_lines(cfg, trials)
    return lines


def objective_lines(plan: SweepPlan) -> list[str]:
    """What the sweep optimises when it is more than one metric, and the bounds it keeps to."""
    from tuner.launch.watching.front_marks import marks

    cfg = plan.config
    shown = marks(cfg.objectives)
    lines = shown.plan_lines()
    if cfg.constraint_list:
        told = (
            "told to " + plan.searcher.name
            if plan.searcher.takes_constraints
            else f"not modelled by {plan.searcher.name}"
        )
        decides = (
            f"ranked last by {plan.scheduler.name}"
            if plan.scheduler.ranks_constraints
            else f"not seen by {plan.scheduler.name}"
        )
        lines.append(
            f"constraints: {', '.join(map(str, cfg.constraint_list))} on each trial's last result: a trial "
            f"that breaks one is {shown.never} "
            f"({told}; {decides})"
        )
    return lines


def limit_lines(cfg: SweepConfig, trials: str) -> list[str]:
    """How the sweep ends on its own: its budget, and when a silent trial counts as hung."""
    from tuner.limits import Budget, TrialTimeout

    if cfg.budget is None:
        lines = [
            f"budget: none; the sweep ends after {trials} (--budget caps it by time, epochs or GPU-hours)"
        ]
    else:
        budget = Budget.parse(cfg.budget)
        cap = f", at most {trials}" if cfg.num_samples is not None else ""
        lines = [
            f"budget: {budget.describe()}, {budget.counted}{cap}; when it is spent, running trials "
            "stop with their last checkpoint"
        ]
    return [*lines, TrialTimeout.parse(cfg.trial_timeout).describe()]


def _turns(plan: SweepPlan) -> list[str]:
    """PBT's population larger than the trials that run at once: what taking turns costs, said before it does."""
    from tuner.launch.trial import forms

    population = plan.config.planned_trials
    if plan.scheduler.name != "pbt" or population <= plan.trials_at_once:
        return []
    line = (
        f"  PBT's {population} trials take turns on {plan.trials_at_once} slot(s): at each perturbation a trial is "
        "paused while another waits, and continued later from its checkpoint"
    )
    if plan.trainer is not None:
        line += "; each turn starts a new process, as every trial of a Ray Train trainer does"
    elif not forms.reusable(plan.trainable):
        from tuner.ray_compat import own_code

        name = getattr(own_code(plan.trainable), "__name__", "the trainable")
        line += f"; {name} has no reset_config, so each turn starts a new process (define it to reuse one)"
    return [line]


def _room(plan: SweepPlan) -> str:
    """How the trials at once leave a Ray Train trainer's workers room, where its size is known."""
    if plan.room is None:
        return ""
    if plan.leaves_trainers_room:
        return f", so {plan.trials_at_once} trial(s) at once leave them room"
    if plan.config.max_concurrent:
        crowded = " (more than leave their workers room)" if plan.config.max_concurrent > plan.room else ""
        return f"; --max-concurrent {plan.config.max_concurrent} sets the trials at once{crowded}"
    return (
        f"; {plan.room} trial(s) at once would leave them room, but {plan.scheduler.name} pauses trials, and a limit "
        "would count the paused ones and wait for ever, so tuner sets none: trials that find no room for their "
        "workers wait until others end"
    )
