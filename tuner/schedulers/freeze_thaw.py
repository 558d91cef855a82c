"""Freeze-thaw: trials paused and continued by a model of their learning curves (tuner/schedulers/curve_scheduler.py)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from tuner.schedulers.base import SchedulerContext, SchedulerEntry

if TYPE_CHECKING:
    from ray.tune.schedulers import TrialScheduler

# Decisions at the first epoch, then at each doubling of a trial's epochs (1, 2, 4, 8, ...): a trial runs as
# many epochs again as it has before it is weighed again, so a pause costs a checkpoint's save and load at most
# once per doubling.
GROWTH = 2.0
# A trial is weighed first after two epochs: on LCBench the first epoch ranks configs no better than chance
# (rank correlation with the final best about 0 on most tasks) and a model sure of a flat curve after one epoch
# froze the slow starters that held the best configs (BENCHMARKS.md). --grace-period can only make it later.
FIRST_DECISION = 2


class FreezeThaw(SchedulerEntry):
    name = "freeze-thaw"
    summary = (
        "a model of every learning curve so far decides which trial runs next: paused trials are continued "
        "when they promise most, hopeless ones stopped"
    )
    pauses_trials = True  # a concurrency limit would count the paused trials and wait for ever
    stops_as = "freeze-thaw"
    gates_new_trials = True  # its searcher makes a new trial only when the model wants one (curve_gate.py)
    reads = ("grace_period",)

    def settings_said(self, ctx: SchedulerContext) -> dict[str, str]:
        checks = checks_of(ctx)
        if not checks:
            return {
                "grace_period": f"freeze-thaw weighs no trial: every one runs all {ctx.max_epochs} epochs",
                "reduction_factor": "not used by freeze-thaw",
            }
        grows = "double" if GROWTH == 2 else f"grow {GROWTH:g}-fold"
        said = {
            "reduction_factor": f"not used by freeze-thaw: it weighs a trial again each time its epochs {grows}, at "
            f"{epochs_said(checks)}"
        }
        if checks[0] != ctx.grace_period:
            said["grace_period"] = f"freeze-thaw weighs a trial first at epoch {checks[0]}"
        return said

    def stopped_label(self, ctx: SchedulerContext) -> str | None:
        return None  # its own status line counts its pauses and stops

    def build(self, ctx: SchedulerContext) -> TrialScheduler:
        from tuner.schedulers.config_features import ConfigFeatures
        from tuner.schedulers.curve_scheduler import FreezeThawScheduler

        return FreezeThawScheduler(
            ctx.max_epochs,
            ConfigFeatures(ctx.params, ctx.seed),
            can_pause=ctx.can_pause,
            own_loop=ctx.own_loop,
            seed=ctx.seed,
            grace=first_decision(ctx),
            growth=GROWTH,
            trials_cap=ctx.trials_cap,
            fate_log=ctx.fate_log,
            metric=ctx.objective.name,
            mode=ctx.objective.mode,
        )

    def describe(self, ctx: SchedulerContext) -> list[str]:
        from tuner.schedulers.better_half import share_said
        from tuner.schedulers.curve_fitting import MIN_TRIALS
        from tuner.schedulers.curve_verdicts import HOPELESS

        checks = checks_of(ctx)
        head = (
            f"freeze-thaw: a model of every learning curve so far (an ensemble of power laws, refitted as results "
            f"come) predicts where each trial's best {ctx.objective.name} ends at epoch {ctx.max_epochs} (mean ± one "
            "standard deviation)"
        )
        if not checks:
            return [
                head,
                f"  no epoch before the last to weigh a trial at: every trial runs all {ctx.max_epochs}",
            ]
        small = ctx.trials_cap is not None and ctx.trials_cap < MIN_TRIALS  # never enough for a model
        hopeless = f"a trial with under a {HOPELESS:.1%} chance to beat the best is stopped"
        if ctx.can_pause:
            start = (
                f"  the model needs {MIN_TRIALS} trials with results, more than this sweep's {ctx.trials_cap}: each "
                f"trial pauses at epoch {checks[0]} until all have started, then runs to its end"
                if small
                else f"  the first {MIN_TRIALS} trial(s) wait for the first model; {hopeless}"
            )
            return [
                head,
                f"  at {epochs_said(checks)} of a trial, it goes on only while its expected "
                "improvement over the best is at least a waiting trial's or a new config's; otherwise it is paused "
                "(continued later if it comes to promise most)",
                start,
            ]
        model = (
            f"no model is fitted (it needs {MIN_TRIALS} trials with results, more than this sweep's "
            f"{ctx.trials_cap}), so the better {share_said(GROWTH)} alone decides"
            if small
            else f"until the first model (fitted once {MIN_TRIALS} trials have results) the better "
            f"{share_said(GROWTH)} alone decides; {hopeless}"
        )
        return [
            head,
            f"  at {epochs_said(checks)} of a trial, it goes on while its best so far is in the "
            f"better {share_said(GROWTH)} of all trials' at that epoch (a halving rule like ASHA's), or while its "
            "expected improvement over the best is at least a waiting trial's or a new config's; otherwise it is "
            "stopped",
            f"  the trainable keeps no checkpoints, so no trial is paused and a stop is final; {model}",
        ]


def epochs_said(checks: list[int]) -> str:
    """ "epoch 2", "epochs 2 and 4", "epochs 2, 4 and 8"."""
    if len(checks) == 1:
        return f"epoch {checks[0]}"
    return f"epochs {', '.join(map(str, checks[:-1]))} and {checks[-1]}"


def checks_of(ctx: SchedulerContext) -> list[int]:
    """The epochs before the last at which a trial is weighed."""
    checks, epoch = [], first_decision(ctx)
    while epoch < ctx.max_epochs:
        checks.append(epoch)
        epoch = max(epoch + 1, int(-(-epoch * GROWTH // 1)))
    return checks


def first_decision(ctx: SchedulerContext) -> int:
    """The epoch at which a trial is first weighed."""
    return min(max(ctx.grace_period, FIRST_DECISION), ctx.max_epochs)
