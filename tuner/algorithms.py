"""One set of rules for the scheduler and searcher a run builds, whether it is a sweep or a replay of one.

A replay must decide as the sweep did (tests/integration/test_replay_agrees.py), so both build them here:
their contexts (what a searcher learns from the scheduler: whether it may block, whether only Tune's
generator runs, when a trial counts as stopped early), how many trials run at once, which pairs can decide on
several objectives, and the built pair itself.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.folder.fates import DecisionLog
from tuner.objectives import Constraint, Objective, Objectives
from tuner.schedulers import ENTRIES as SCHEDULERS
from tuner.schedulers import REGISTRY as SCHEDULER_REGISTRY
from tuner.schedulers import SchedulerContext
from tuner.schedulers.comparing import ByFronts, ByValue, Comparison, Constrained
from tuner.searchers import ENTRIES as SEARCHERS
from tuner.searchers import REGISTRY as SEARCHER_REGISTRY
from tuner.searchers import SearcherContext
from tuner.searchers.plan import SearchPlan
from tuner.value_types import Space

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler
    from ray.tune.search import SearchAlgorithm, Searcher


class OneObjective:
    """What a sweep on one objective without bounds may run: every scheduler and searcher, as ``auto`` chooses
    them."""

    def __init__(self, objectives: Sequence[Objective] = ()) -> None:
        self.objectives = tuple(objectives)

    def check(self, scheduler: str, searcher: str | None, warm_start: bool = False) -> None:
        """Nothing to refuse: every pair ranks one value."""

    def scheduler(self, chosen: tuple[str, str]) -> tuple[str, str]:
        return chosen

    def searcher(self, chosen: tuple[str, str]) -> tuple[str, str]:
        return chosen


class Bounded(OneObjective):
    """A sweep with ``--constraint``: ``auto`` takes ASHA, which ranks each rung by fronts of value and
    violation, and a searcher that keeps trials breaking a bound out of what it learns from."""

    FRONTS = "asha", "ASHA ranks each rung by fronts; freeze-thaw models one value"

    def scheduler(self, chosen: tuple[str, str]) -> tuple[str, str]:
        return self.FRONTS

    def searcher(self, chosen: tuple[str, str]) -> tuple[str, str]:
        """Random search where the space leaves nothing to model, a scheduler's own model (freeze-thaw's does
        not rank by the bounds either: the plan says so), or one that weighs them; otherwise Optuna's TPE."""
        entry = SEARCHER_REGISTRY[chosen[0]]
        if chosen[0] == "random" or entry.requires_scheduler or entry.takes_constraints:
            return chosen
        return "optuna", (
            "--constraint: Optuna's TPE keeps trials that break a bound out of its good group "
            f"({chosen[0]}, picked without bounds, does not weigh them)"
        )


class SeveralObjectives(Bounded):
    """What a sweep on several objectives may run: a scheduler and a searcher that decide by fronts, with no
    earlier sweeps' trials; ``auto`` takes ASHA and Optuna's multi-objective TPE."""

    def check(self, scheduler: str, searcher: str | None, warm_start: bool = False) -> None:
        """One line names the flag and those that can decide by fronts."""
        count = f"{len(self.objectives)} objectives ({', '.join(map(str, self.objectives))})"
        for flag, chosen, entries, cannot, besides in (
            ("--scheduler", scheduler, SCHEDULERS, "ranks trials by one value and cannot decide on", ""),
            ("--searcher", searcher, SEARCHERS, "models one value and cannot search", " (or auto)"),
        ):
            able = [e.name for e in entries if e.multi_objective]
            if chosen in {e.name for e in entries} - set(able):
                raise UsageError(
                    f"{flag} {chosen} {cannot} {count}; use one that can: {', '.join(able)}{besides}"
                )
        if warm_start:
            raise UsageError(
                "--warm-start seeds a model with one value per earlier trial; a sweep on several objectives "
                "starts without it"
            )

    def searcher(self, chosen: tuple[str, str]) -> tuple[str, str]:
        """Random search where the space leaves nothing to model, a scheduler's own searcher (the scheduler is
        refused if it cannot decide by fronts); otherwise MOTPE."""
        if chosen[0] == "random" or SEARCHER_REGISTRY[chosen[0]].requires_scheduler:
            return chosen
        return "optuna", (
            f"{len(self.objectives)} objectives: Optuna's multi-objective TPE splits the trials it learns from "
            "by fronts (non-dominated sorting) rather than by one value"
        )


RULES: dict[type[Comparison], type[OneObjective]] = {
    ByValue: OneObjective,
    Constrained: Bounded,
    ByFronts: SeveralObjectives,
}


def for_objectives(objectives: Sequence[Objective], constraints: Sequence[Constraint] = ()) -> OneObjective:
    """What the launch and the replay may run, by how the sweep's trials are compared: ``Comparison.kind``
    asks how many objectives it has and whether it has bounds, for the rules and for this choice alike."""
    return RULES[Comparison.kind(objectives, constraints)](objectives)


def scheduler_context(
    *,
    params: Space,
    objectives: Objectives,
    max_epochs: int,
    num_samples: int,
    seed: int,
    grace_period: int,
    reduction_factor: int,
    constraints: Sequence[Constraint] = (),
    fate_log: DecisionLog | None = None,
    can_pause: bool = True,
    own_loop: bool = True,
    trials_cap: int | None = None,
) -> SchedulerContext:
    return SchedulerContext(
        max_epochs,
        objectives,
        params,
        num_samples,
        seed,
        fate_log=fate_log,
        grace_period=grace_period,
        reduction_factor=reduction_factor,
        constraints=tuple(constraints),
        can_pause=can_pause,
        own_loop=own_loop,
        trials_cap=trials_cap,
    )


def searcher_context(
    scheduler: str, ctx: SchedulerContext, *, planned_trials: int, max_concurrent: int | None
) -> SearcherContext:
    """What the searcher under ``scheduler`` is built from: the scheduler's context, and what it means for a
    searcher (sync brackets must never be waited on; PBT runs over Tune's generator only)."""
    entry = SCHEDULER_REGISTRY[scheduler]
    return SearcherContext(
        ctx.objectives,
        planned_trials,
        ctx.seed,
        max_concurrent,
        never_wait=entry.pauses_trials,
        generator_only=entry.takes_no_searcher,
        full_epochs=ctx.max_epochs,
        constraints=ctx.constraints,
    )


def at_once(
    scheduler: str, searcher: str, slots: int, *, given: int | None = None, adaptive: bool = False
) -> int | None:
    """Trials running at once, when tuner limits it (None: as many as fit).

    Model-based searchers propose as trials free up, so what they learn reaches the next proposal; an
    ``adaptive`` placement (auto GPU packing) does the same for random search, so trials created after an
    out-of-memory error get the lowered share. Schedulers that pause trials get no limit: it would count the
    paused trials and wait for ever for their bracket to fill. ``given`` (--max-concurrent) overrides all.
    """
    if given:
        return given
    if SCHEDULER_REGISTRY[scheduler].pauses_trials:
        return None
    return slots if (SEARCHER_REGISTRY[searcher].model_based or adaptive) else None


def trials_waiting(
    scheduler: str, searcher: str, search_plan: SearchPlan, slots: int, max_concurrent: int | None
) -> int | None:
    """Trials that may wait for a slot at once, where tuner sets it (None: Tune's own rule).

    Tune lets a searcher other than its variant generator keep one trial waiting unless a concurrency limit
    allows more, and a trial waits while its worker process starts (1-2 s): the trials of a first wave would
    start one after another, and an instant one can finish before the next worker is up, which the sweep
    then waits for only to stop it. A searcher that learns nothing from results loses nothing by proposing a
    trial for every slot; a model keeps proposing as results come in (``at_once``). Under a concurrency limit
    as many may wait as the limit allows: Ray 2.60 decides so by itself, Ray 2.50 to 2.55 keep one, and the
    count set here makes every tested Ray start a first wave alike (and as the replay engine does).
    """
    entry = SEARCHER_REGISTRY[searcher]
    generator = entry.runs_as_generator(search_plan, SCHEDULER_REGISTRY[scheduler].takes_no_searcher)
    if generator:
        return None
    if max_concurrent:
        return max_concurrent
    if slots <= 1 or entry.model_based:
        return None
    return slots


def build_pair(
    ctx: SchedulerContext,
    scheduler: str,
    search_plan: SearchPlan,
    *,
    planned_trials: int,
    max_concurrent: int | None,
) -> tuple[TrialScheduler, Searcher | SearchAlgorithm]:
    """The scheduler and the searcher of a run, built from one context: Tune's own objects, ready for
    ``tune.TuneConfig`` or the replay engine."""
    from tuner.searchers import build_searcher

    search = build_searcher(  # first, as it always was: a seeded sweep draws in the same order
        search_plan,
        searcher_context(scheduler, ctx, planned_trials=planned_trials, max_concurrent=max_concurrent),
    )
    built = SCHEDULER_REGISTRY[scheduler]().build(ctx)
    if SCHEDULER_REGISTRY[scheduler].gates_new_trials:
        from ray.tune.search import Searcher

        from tuner.schedulers.curve_gate import NewTrialGate

        if not isinstance(search, Searcher):
            raise UsageError(
                f"--scheduler {scheduler} proposes one config at a time; a space of grid_search parameters is "
                "crossed by Tune's own generator: use --scheduler asha, or write the grid as tune.choice"
            )
        if hasattr(search, "attach"):  # proposals from the scheduler's own model (searcher curves)
            search.attach(built)
        search = NewTrialGate(search, built)
    return built, search


# What the frozen protocol's held-out half showed for the default (BENCHMARKS.md, "Search quality on held-out
# tasks"), by trials at once and whether the trainable keeps checkpoints: the figure the plan prints beside it.
HELD_OUT = "on the 17 LCBench tasks the search protocol holds out (fresh seeds, 1,000 epochs)"
HELD_OUT_FIGURES = {
    (
        1,
        True,
    ): "first of 15 methods at half the budget and at the end (mean rank 3.6 at the end; its own form for "
    "trainables without checkpoints 4.1; next, Ray's BOHB, 6.0; Wilcoxon-Holm p = 0.0059 at half, 0.00037 at "
    "the end); against Ray's BOHB over all 20 held-out seeds, ahead at half (p = 0.0046) and at the end "
    "(p = 1.5e-05)",
    (2, True): "second of 15 methods at half the budget and at the end, after its own form for trainables "
    "without checkpoints (mean rank 3.6 against 3.3 at the end, p = 0.58); of the rest, ahead of Ray's BOHB "
    "(p = 0.045 at half, 0.0023 at the end) and Syne Tune's synchronous BOHB (6.2; p = 0.053, 0.011); over 12 "
    "seeds ahead of both BOHBs at half (p = 0.00023 and 0.046) and at the end (p = 4.6e-05 and 0.00031)",
    (8, True): "second of 10 methods at the end, after its own form for trainables without checkpoints (mean "
    "rank 2.55 against 2.25, p = 0.045), and ahead of every other; of the next, Syne Tune's synchronous BOHB "
    "(4.9), beyond chance at the end (p = 0.046), not at half the budget (p = 0.18)",
    (
        1,
        False,
    ): "second of 15 methods at the end (mean rank 4.1; its own form with checkpoints 3.6, p = 0.33), "
    "ahead of Ray's BOHB (6.0; Wilcoxon-Holm p = 0.035 at half, 0.0012 at the end) and of every form of ASHA "
    "(6.6 to 10.2); Ray's BOHB's final regret reached with 0.49 of the budget",
    (
        2,
        False,
    ): "first of 15 methods at half the budget and at the end (mean rank 3.3 at the end; its own form "
    "with checkpoints 3.6, p = 0.58; next, Syne Tune's synchronous BOHB, 6.2, Wilcoxon-Holm p = 0.019 at half, "
    "0.00043 at the end; Ray's BOHB p = 0.017 and 0.00021; every form of ASHA 8.0 to 10.1)",
    (
        8,
        False,
    ): "first of 10 methods at the end (mean rank 2.25; its own form with checkpoints 2.55; ASHA's 5.8 to 6.3)",
}


def held_out_figure(can_pause: bool, at_once: int) -> str:
    """The default's held-out figure at the measured concurrency nearest this sweep's."""
    measured = 1 if at_once <= 1 else 2 if at_once <= 4 else 8
    runs = "" if measured == at_once else f" (this sweep runs {at_once})"
    trials = "1 trial" if measured == 1 else f"{measured} trials"
    return f"{HELD_OUT}, {trials} at once{runs}: {HELD_OUT_FIGURES[measured, can_pause]}"


def default_scheduler(can_pause: bool = True, grids: Sequence[str] = ()) -> tuple[str, str]:
    """The scheduler a sweep on one objective without bounds runs with no --scheduler (``auto``), and why: the
    one the frozen protocol's held-out tasks put ahead for this kind of sweep (the plan prints the figure:
    ``held_out_figure``). ``for_objectives`` decides it for several objectives and for bounds."""
    if grids:
        named = ", ".join(grids)
        return (
            "asha",
            f"{named} {'is a grid' if len(grids) == 1 else 'are grids'}, which Tune crosses; freeze-thaw proposes one config at a time",
        )
    if not can_pause:
        return "freeze-thaw", (
            "a model of the learning curves weighs every trial; the trainable keeps no checkpoints, so it stops "
            "trials rather than pausing them"
        )
    return "freeze-thaw", "a model of the learning curves pauses trials and continues those that promise most"


def choose_searcher(
    scheduler: str,
    searcher: str | None,
    params: Space,
    *,
    planned_trials: int,
    budgeted: bool = False,
    objectives: Sequence[Objective] = (),
    constraints: Sequence[Constraint] = (),
    warm_start: bool = False,
) -> tuple[str, str | None]:
    """The searcher a sweep (or a replay of one) runs, and why when ``auto`` chose it (None otherwise): the one
    given, else the one the scheduler brings, else what ``auto`` picks for the space, the scheduler and the
    sweep's size (tuner/searchers/auto.py)."""
    from tuner.searchers import AUTO
    from tuner.searchers.auto import choose

    brings = SCHEDULER_REGISTRY[scheduler].requires_searcher
    if searcher not in (None, AUTO):
        return searcher, None
    if brings and searcher is None:
        return brings, None
    return for_objectives(objectives, constraints).searcher(
        choose(params, scheduler, planned_trials, budgeted=budgeted, warm_start=warm_start)
    )


def check_names(scheduler: str, searcher: str | None) -> None:
    """Known names, and a pair that works together: one line naming the flag otherwise."""
    from tuner import schedulers, searchers
    from tuner.settings import check_choice

    check_choice("scheduler", scheduler, schedulers.CHOICES)
    if searcher is not None:
        check_choice("searcher", searcher, searchers.CHOICES)
        if searcher != searchers.AUTO and scheduler != schedulers.AUTO:
            check_pair(scheduler, searcher)


def check_pair(scheduler: str, searcher: str) -> None:
    """A scheduler that brings its own searcher runs with that one, and a searcher that needs its scheduler
    runs only under it: one line says which to drop."""
    brings = SCHEDULER_REGISTRY[scheduler].requires_searcher
    if brings and searcher != brings:
        raise UsageError(
            f"--scheduler {scheduler} brings its own searcher ({brings}); drop --searcher {searcher} or use "
            "another scheduler"
        )
    needs = SEARCHER_REGISTRY[searcher].requires_scheduler if searcher in SEARCHER_REGISTRY else None
    if needs and scheduler != needs:
        raise UsageError(f"--searcher {searcher} works only with --scheduler {needs}")
