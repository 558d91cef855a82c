"""A replay's scheduler and searcher, built by the same registry entries and rules a sweep uses."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from tuner import algorithms
from tuner.errors import UsageError
from tuner.objectives import Constraint, Objective, Objectives

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler
    from ray.tune.search import Searcher

    from tuner.replay.outcome import FateMemory, FixedOrder
    from tuner.value_types import Space


@dataclass
class Algorithms:
    """What a replay runs: Ray's scheduler and searcher objects, how many trials the searcher may run, and how
    many may wait for a slot where a sweep would set it (tuner/algorithms.py)."""

    scheduler: TrialScheduler
    searcher: Searcher | FixedOrder | None  # None: a recorded order, set by the caller (a FixedOrder)
    fate_log: FateMemory
    max_concurrent: int | None
    waiting: int | None = None


def build(
    params: Space,
    scheduler: str,
    searcher: str | None,
    *,
    objectives: Objectives,
    max_epochs: int,
    num_samples: int,
    seed: int,
    workers: int,
    grace_period: int = 1,
    reduction_factor: int = 2,
    constraints: tuple[Constraint, ...] = (),
    trials_cap: int | None = -1,
    can_pause: bool = True,
    own_loop: bool = True,
) -> Algorithms:
    """The scheduler ``scheduler`` and searcher ``searcher`` (None: a recorded order, set by the caller) for
    a space of Tune domains, as ``tuner sweep`` would build them with ``workers`` trials at once, for the
    sweep's ``objectives`` (and any ``constraints``). ``trials_cap``: the trials the replay may create at most
    (-1: ``num_samples``; None: a budget ends it); ``own_loop``: whether the trainable's own loop may end trials
    sooner (SchedulerContext.own_loop); ``can_pause``: whether the trainable replayed continues from
    checkpoints."""
    from ray.tune.search import Searcher

    from tuner import schedulers, searchers
    from tuner.replay.outcome import FateMemory

    sched = schedulers.entry(scheduler)
    if sched.takes_no_searcher:
        raise UsageError(
            f"--scheduler {scheduler}: {sched.name} changes configs while trials train, so recorded "
            "curves cannot stand in for its trials; replay takes asha, hyperband, median, fifo, bohb or freeze-thaw"
        )
    if searcher is not None and searcher != searchers.AUTO:
        algorithms.check_pair(scheduler, searcher)
    rule = algorithms.for_objectives(objectives, constraints)
    rule.check(scheduler, None)
    fate_log = FateMemory()
    ctx = algorithms.scheduler_context(
        params=params,
        objectives=objectives,
        max_epochs=max_epochs,
        num_samples=num_samples,
        seed=seed,
        grace_period=grace_period,
        reduction_factor=reduction_factor,
        constraints=constraints,
        fate_log=fate_log,
        can_pause=can_pause,
        own_loop=own_loop,
        trials_cap=num_samples if trials_cap == -1 else trials_cap,
    )
    if searcher is None:
        return Algorithms(_told(sched.build(ctx), ctx.objective), None, fate_log, None)
    searcher, _ = algorithms.choose_searcher(  # what a sweep of this space, scheduler and size would run
        scheduler,
        searcher,
        params,
        planned_trials=num_samples,
        objectives=objectives,
        constraints=constraints,
    )
    chosen = searchers.entry(sched.requires_searcher or searcher)
    rule.check(scheduler, chosen.name)
    plan = searchers.plan_search(params, chosen.name, seed)
    max_concurrent = algorithms.at_once(scheduler, chosen.name, workers)
    built_scheduler, built = algorithms.build_pair(
        ctx, scheduler, plan, planned_trials=num_samples, max_concurrent=max_concurrent
    )
    built_scheduler = _told(built_scheduler, ctx.objective)
    if not isinstance(built, Searcher):  # Tune's variant generator, a SearchAlgorithm: it has no suggest
        raise UsageError(
            "replay draws configs one at a time; a space with grid_search parameters is crossed by "
            "Tune's variant generator instead: write the grid as tune.choice to replay it"
        )
    waiting = algorithms.trials_waiting(scheduler, chosen.name, plan, workers, max_concurrent)
    return Algorithms(built_scheduler, built, fate_log, max_concurrent, waiting)


def _told(scheduler: TrialScheduler, first: Objective) -> TrialScheduler:
    """The scheduler with the metric and mode Tune would hand it (a replay has no Tune to do it; Tune hands
    the first objective's); one built with its own keeps them."""
    scheduler.set_search_properties(first.name, first.mode)
    return scheduler
