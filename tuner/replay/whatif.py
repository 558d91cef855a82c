"""``tuner replay``: a finished sweep's own curves replayed under another scheduler, and what that would change.

The sweep's trials are proposed again in the order Tune created them, each with the per-epoch results and
epoch times it recorded, on as many workers as the sweep ran trials at once. The answer: the epochs and
(simulated) time the other scheduler would have used against what the sweep used, whether the sweep's
best trial survives it, and which trials it would have stopped where. A trial the sweep itself ended
early has no later epochs to look up; where the other scheduler would have let it go on, the replay ends
it where its curve ends, and the answer says how many trials that concerns.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, cast

from tuner import storage
from tuner.errors import UsageError
from tuner.experiment import ExperimentRecord, TrialRecord
from tuner.folder import plan as plan_record
from tuner.objectives import Constraint
from tuner.ray_compat.state_file import OPEN_STATUSES
from tuner.replay.curves import CurveTable, metrics_only
from tuner.replay.engine import Curve, FixedOrder, ReplayOutcome, replay
from tuner.review import findings
from tuner.review.replays import ReplayBest, WhatIf, trials_at_once

if TYPE_CHECKING:
    from tuner.replay.outcome import CurveSource
    from tuner.value_types import Config, SpaceEntry, Value


class RecordedOrder:
    """A finished sweep as a curve source: the i-th trial the replay creates gets the i-th recorded curve
    (configs may repeat in a sweep, so they cannot be the key)."""

    def __init__(self, curves: Sequence[Curve]) -> None:
        self._curves, self._next = list(curves), 0

    def curve(self, config: Config) -> Curve | None:
        self._next += 1
        return self._curves[self._next - 1] if self._next <= len(self._curves) else None


def _curve(trial: TrialRecord) -> Curve:
    rows: dict[int, dict[str, str]] = {}  # progress.csv's rows: each column's text
    for row in trial.rows:  # a restored trial may repeat an epoch: the later report stands
        try:
            rows[int(float(row.get("training_iteration") or 0))] = row
        except ValueError:
            continue
    ordered = [rows[e] for e in sorted(rows) if e > 0]
    seconds = []
    for row in ordered:
        try:
            seconds.append(max(float(row.get("time_this_iter_s") or 0.0), 0.0))
        except ValueError:
            seconds.append(0.0)
    # a trial its own loop ended has its whole curve, whatever the loops of the others
    return Curve(
        dict(trial.config), [metrics_only(r) for r in ordered], seconds, whole=trial.loop_end is not None
    )


def check_replayable(experiment: ExperimentRecord, scheduler: str) -> list[TrialRecord]:
    """The trials to replay, or a one-line error: a running sweep, no per-epoch results, a scheduler that
    needs checkpoints the trainable never saved."""
    from tuner import schedulers
    from tuner.claim import describe_holder, holder_elsewhere

    holder = holder_elsewhere(experiment.path)
    if holder is not None:
        raise UsageError(
            f"{experiment.path} is being run by {describe_holder(holder)}; replay it once the sweep has ended"
        )
    reported = [t for t in experiment.trials if t.rows]
    if not reported:
        raise UsageError(
            f"{experiment.path} has no results (no trial reported one): there is nothing to replay"
        )
    if max(t.epochs for t in reported) < 2:
        raise UsageError(
            f"{experiment.path} has one result per trial, not one per epoch: a scheduler has "
            "nothing to decide on (report once per epoch to replay a sweep)"
        )
    ran = schedulers.entry(experiment.config.scheduler)
    if ran.takes_no_searcher:
        raise UsageError(
            f"{experiment.path} ran {ran.name}, whose trials changed configs as they trained (taking other "
            "trials' checkpoints): no curve is one config's, so a replay cannot stand in for them"
        )
    entry = schedulers.entry(scheduler)
    if entry.needs_checkpoints and not entry.takes_no_searcher:
        if not any(d.startswith("checkpoint_") for t in reported for d in storage.list_dirs(t.path)):
            raise UsageError(
                f"--scheduler {scheduler} pauses trials and continues them from their checkpoints, "
                f"and {_space_name(experiment.config.space)}'s trainable saved none; replay it under asha, "
                "median or fifo"
            )
    return reported


def replay_experiment(
    experiment: ExperimentRecord,
    scheduler: str,
    *,
    searcher: str | None = None,
    workers: int | None = None,
    grace_period: int | None = None,
    reduction_factor: int | None = None,
) -> WhatIf:
    """Replay ``experiment``'s curves under ``scheduler`` (with another ``searcher`` only where every config
    it could propose was run), and under the sweep's own scheduler for a like-for-like time."""
    trials = check_replayable(experiment, scheduler)
    config = experiment.config
    workers = workers or experiment.at_once() or trials_at_once(trials)
    options = {k: v for k, v in (("grace", grace_period), ("rf", reduction_factor)) if v is not None}
    curves = [_curve(t) for t in trials]
    table = _table_for(experiment, curves, searcher)
    ours = _run(experiment, curves, table, scheduler, searcher, workers, grace_period, reduction_factor)
    theirs = _run(
        experiment,
        curves,
        None,
        config.scheduler,
        None,
        workers,
        config.grace_period,
        config.reduction_factor,
    )
    used = sum(len(c.rows) for c in curves)
    stopped, cut_short = [], []
    # With the sweep's own configs, the replay's i-th trial is the sweep's i-th: compare them one by one.
    pairs = zip(trials, curves, ours.trials, strict=True) if searcher is None else iter(())
    for trial, curve, done in pairs:
        if done.cut_short:
            cut_short.append(trial.trial_id)
        elif done.epochs < len(curve.rows):
            stopped.append(
                {
                    "trial": trial.trial_id,
                    "epochs": trial.epochs,
                    "at": done.epochs,
                    "why": done.fate or f"stopped at epoch {done.epochs}",
                }
            )
    unfinished = sum(t.status in OPEN_STATUSES for t in experiment.trials)
    # several objectives: the sweep's front, and which of it the replay would have stopped short (by id, so
    # only with the sweep's own configs)
    front = sorted(findings.of(experiment).on_front() or ()) if searcher is None else []
    return WhatIf(
        experiment.path,
        scheduler,
        searcher,
        options,
        workers,
        experiment.metric,
        experiment.mode,
        used,
        theirs.wall,
        ours.epochs,
        ours.wall,
        _best(experiment, trials),
        _replayed_best(ours, trials, searcher, config.constraint_list),
        stopped,
        cut_short,
        unfinished,
        _rungs(experiment, scheduler, len(trials), grace_period, reduction_factor),
        theirs.epochs,
        front,
        [s["trial"] for s in stopped if s["trial"] in front],
    )


def _rungs(
    experiment: ExperimentRecord, scheduler: str, trials: int, grace: int | None, rf: int | None
) -> list[str]:
    from tuner import schedulers

    c = experiment.config
    ctx = schedulers.SchedulerContext(
        c.max_epochs,
        c.objectives,
        {},
        trials,
        c.seed,
        grace_period=grace or c.grace_period,
        reduction_factor=rf or c.reduction_factor,
        constraints=tuple(c.constraint_list),
    )
    lines = schedulers.entry(scheduler).describe(ctx)
    # the rule and, for HyperBand and BOHB, its brackets; not an estimate of epochs the replay itself answers
    return lines[:1] + [line.strip() for line in lines[1:] if line.strip().startswith("bracket ")]


def _table_for(experiment: ExperimentRecord, curves: list[Curve], searcher: str | None) -> CurveTable | None:
    """With another searcher, the sweep must have run every config the space holds."""
    if searcher is None:
        return None
    from ray.tune.search.sample import Categorical

    from tuner.launch.registry import load_space

    params = load_space(experiment.config.space).flat_params
    size = 1
    for name, value in params.items():
        if not isinstance(value, Categorical):
            raise UsageError(
                f"--searcher {searcher}: a replay can look up only configs the sweep ran, and "
                f"parameter {name} is not a choice; without --searcher the replay keeps the sweep's "
                "own configs"
            )
        size *= len(value.categories)
    table = CurveTable(curves, list(params))
    ran = len({json.dumps([c.config.get(p) for p in params], default=str) for c in curves})
    if ran < size:
        raise UsageError(
            f"--searcher {searcher}: a replay can look up only configs the sweep ran, and it ran "
            f"{ran} of the space's {size}; without --searcher the replay keeps the sweep's own configs"
        )
    return table


def _run(
    experiment: ExperimentRecord,
    curves: list[Curve],
    table: CurveTable | None,
    scheduler: str,
    searcher: str | None,
    workers: int,
    grace: int | None,
    rf: int | None,
) -> ReplayOutcome:
    from tuner import schedulers
    from tuner.replay.setup import build

    config = experiment.config
    params: dict[str, SpaceEntry] = {}
    if table is not None:
        from tuner.launch.registry import load_space

        params = load_space(config.space).flat_params
    elif schedulers.REGISTRY[
        scheduler
    ].gates_new_trials:  # its model reads the configs: their values stand in
        params = _observed_space(curves)
    algorithms = build(
        params,
        scheduler,
        searcher,
        objectives=config.objectives,
        max_epochs=config.max_epochs,
        num_samples=len(curves),
        seed=config.seed,
        workers=workers,
        grace_period=grace or config.grace_period,
        reduction_factor=rf or config.reduction_factor,
        constraints=tuple(config.constraint_list),
        can_pause=_kept_checkpoints(experiment),
        own_loop=plan_record.own_loop(experiment.path),
    )
    if searcher is None:
        algorithms.searcher = FixedOrder(c.config for c in curves)
        source: CurveSource = RecordedOrder(curves)
    else:
        source = cast("CurveTable", table)  # with a searcher, _table_for made one
    return replay(
        source,
        algorithms,
        workers=workers,
        metric=experiment.metric,
        mode=experiment.mode,
        num_samples=len(curves),
        max_epochs=config.max_epochs,  # a curve that ends where the trainable's own loop does is whole
    )


def _observed_space(curves: list[Curve]) -> dict[str, SpaceEntry]:
    """The sweep's parameters as choices among the values its trials ran (enough for a model that reads
    configs; the space itself may not be importable where the review runs)."""
    from ray import tune

    from tuner.nesting import flatten

    seen: dict[str, list[Value]] = {}
    for curve in curves:
        for name, value in flatten(curve.config).items():
            values = seen.setdefault(name, [])
            if value not in values:
                values.append(value)
    numbers = (int, float)
    return {
        # sorted only where every value is a number
        name: tune.choice(_sorted_if_numbers(values))
        for name, values in seen.items()
        if len(values) > 1 and all(isinstance(v, (str, bool, *numbers)) for v in values)
    }


def _kept_checkpoints(experiment: ExperimentRecord) -> bool:
    """Whether the sweep's trainable saved checkpoints (a replay then may pause trials as the sweep could)."""
    return any(d.startswith("checkpoint_") for t in experiment.trials for d in storage.list_dirs(t.path))


def _best(experiment: ExperimentRecord, trials: list[TrialRecord]) -> ReplayBest | None:
    best = experiment.best_trial()
    value = best.best(experiment.metric, experiment.mode) if best is not None else None
    if best is None or value is None:
        return None
    row = best.best_row(experiment.metric, experiment.mode) or {}
    return ReplayBest(best.trial_id, value, int(float(row.get("training_iteration") or 0)))


def _replayed_best(
    outcome: ReplayOutcome,
    trials: list[TrialRecord],
    searcher: str | None,
    constraints: Sequence[Constraint] = (),
) -> ReplayBest | None:
    best = outcome.best_trial(constraints)
    if best is None:
        return None
    value = best.best(outcome.mode)
    if value is None:
        return None
    epoch = best.values.index(value) + 1
    if searcher is None:  # the sweep's own configs in its own order: the i-th replayed trial is its i-th
        trial = trials[outcome.trials.index(best)].trial_id
    else:  # a config the searcher proposed, which the sweep ran too: named as the sweep's trial that ran it
        ran = {_config_key(t.config): t.trial_id for t in trials}
        trial = ran.get(_config_key(best.config), best.trial_id)
    return ReplayBest(trial, value, epoch, best.config)


def _config_key(config: Config) -> str:
    from tuner.nesting import flatten
    from tuner.values import plain

    return json.dumps({k: plain(v) for k, v in sorted(flatten(config).items())}, default=str)


def _sorted_if_numbers(values: list[Value]) -> list[Value] | list[float]:
    numbers = [v for v in values if isinstance(v, (int, float))]
    return sorted(numbers) if len(numbers) == len(values) else values


def _space_name(space: str) -> str:
    """The space as its user knows it: a space made in a notebook is kept under a name tuner gave it
    (``python:train-7fee3fddf410``), which says nothing to them."""
    return "the sweep" if space.startswith("python:") else space
