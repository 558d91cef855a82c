"""Warm starts: a new sweep's searcher begins with what earlier sweeps observed.

Re-tuning after a code change usually searches the same space again; an earlier sweep's trials tell the
model where the good region was. ``gather`` reads the earlier experiments (through the one experiment
reader) and keeps each trial that reported the same metric: its values for this sweep's parameters, its
best value, and, for a trial stopped before its last epoch, that it was stopped (a model that ranks
pruned trials sees how far it got). Parameters the earlier sweep had and this one lacks are dropped; a
trial missing one of this sweep's parameters, or with a value outside this space, is left out. The
searcher's wrapper encodes each kept config as the model sees it and adds it as an evaluated point.

The best of those configs is also this sweep's first trial: after a code change the earlier winner is the
likeliest winner still, and one trial says whether the change helped. Without it the model could only come
near that config, never run it again. The model sees that trial as its own.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from tuner.errors import UsageError
from tuner.objectives import Mode, Objective, pick

if TYPE_CHECKING:
    from tuner.searchers.plan import SearchPlan
    from tuner.value_types import ConfigDraft, Space, SpaceEntry, Value


@dataclass
class Observation:
    config: ConfigDraft
    value: float
    pruned: bool = False  # stopped before its last epoch (by a scheduler or a budget)
    values: list[float] = field(default_factory=list)  # per epoch, for a pruned trial
    source: str = ""  # the experiment it came from


@dataclass
class WarmStart:
    """What earlier sweeps give a new one, and the plan's account of it."""

    sources: list[str]
    observations: list[Observation]
    dropped: list[str]  # parameters the earlier sweeps had that this one does not
    left_out: int  # trials without a usable value, or missing one of this sweep's parameters
    outside: int = 0  # trials with a value outside this space (counted by ``encode``)
    no_result: int = 0  # of ``left_out``: trials that errored or never reported
    epochs: list[int] = field(default_factory=list)  # the earlier sweeps' max epochs
    points: list[tuple[ConfigDraft, Observation]] = field(default_factory=list)  # as the model sees them
    mode: Mode = "min"
    metric: str = ""

    def best(self) -> tuple[ConfigDraft, Observation] | None:
        """The encoded point run again first: the best of the trials that ran all their epochs (a stopped
        trial's early value is no rival), else the best of all."""
        pool = [p for p in self.points if not p[1].pruned] or self.points
        if not pool:
            return None
        return pick(self.mode)(pool, key=lambda p: p[1].value)

    def describe(self) -> str:
        used = len(self.points)
        names = ", ".join(self.sources)
        line = f"warm start: {used} earlier trial(s) from {names} seed the searcher"
        reasons = [
            (self.no_result, "without a result"),
            (self.left_out - self.no_result, "missing a parameter of this space"),
            (self.outside, "with a value outside this space"),
        ]
        left = "; ".join(f"{n} {why}" for n, why in reasons if n)
        if left:
            line += f"; left out: {left}"
        if self.dropped:
            line += f"; parameters this sweep lacks, dropped: {', '.join(self.dropped)}"
        if (best := self.best()) is not None:
            obs = best[1]
            config = ", ".join(
                f"{k}={v:.6g}" if isinstance(v, float) else f"{k}={v}" for k, v in obs.config.items()
            )
            where = f"{self.metric} {obs.value:.6g} in {obs.source}".lstrip()
            if obs.pruned:
                where += f", stopped at epoch {len(obs.values)}"
            line += f"; the first trial runs their best again: {config} ({where})"
        return line

    def epochs_note(self, max_epochs: int) -> str:
        """A line when the earlier sweeps trained for another number of epochs than this one."""
        other = sorted({e for e in self.epochs if e != max_epochs})
        if not other:
            return ""
        return (
            f"  (the earlier trials ran up to {', '.join(map(str, other))} epochs, this sweep {max_epochs}: their "
            "values compare at another point of training)"
        )


def gather(
    refs: Sequence[str], params: Space, objective: Objective, storage_path: str | None = None
) -> WarmStart:
    """The observations of experiments ``refs`` (a name is looked for under ``storage_path``, this sweep's) for
    a sweep over ``params`` optimising ``objective`` (its first)."""
    metric, mode = objective.name, objective.mode
    from tuner import experiment

    observations: list[Observation] = []
    dropped: set[str] = set()
    left_out = no_result = 0
    sources, epochs = [], []
    for ref in refs:
        earlier = experiment.load(ref, storage_path=storage_path)
        if earlier.metric != metric or earlier.mode != mode:
            raise UsageError(
                f"--warm-start {ref}: it optimised {earlier.metric} ({earlier.mode}), this sweep "
                f"optimises {metric} ({mode}); its results cannot seed this search"
            )
        if earlier.config.scheduler == "pbt":
            raise UsageError(
                f"--warm-start {ref}: it ran PBT, whose trials took other trials' checkpoints and configs as they "
                "trained, so no config stands for a trial's value; seed the search from a sweep under another "
                "scheduler"
            )
        sources.append(earlier.config.name or ref)
        epochs.append(earlier.config.max_epochs)
        for trial in earlier.trials:
            dropped |= set(trial.config) - set(params)
            curve = [v for _, v in trial.curve(metric)]
            if trial.status == "ERROR" or not curve or any(name not in trial.config for name in params):
                left_out += 1
                no_result += trial.status == "ERROR" or not curve
                continue
            pruned = trial.epochs < earlier.config.max_epochs
            config = {name: trial.config[name] for name in params}
            # Each epoch's best so far, as the searcher learns a running trial's (tuner/searchers/planned.py).
            curve = list(itertools.accumulate(curve, pick(mode)))
            observations.append(Observation(config, curve[-1], pruned, curve if pruned else [], sources[-1]))
    return WarmStart(
        sources,
        observations,
        sorted(dropped),
        left_out,
        no_result=no_result,
        epochs=epochs,
        mode=mode,
        metric=metric,
    )


def encode(warm: WarmStart, plan: SearchPlan) -> WarmStart:
    """Each observation as the model sees it (``plan``: the sweep's SearchPlan); those with a value outside
    this space are counted and left out."""
    from tuner.searchers.plan import DERIVED, ENCODED, NATIVE

    warm.points, warm.outside = [], 0
    for obs in warm.observations:
        point: ConfigDraft = {}
        try:
            for p in plan.params:
                value = obs.config[p.name]
                if p.treatment == NATIVE:
                    if not inside(p.encoded, value):
                        raise ValueError(f"{value!r} is outside {p.domain_text}")
                    point[p.name] = value
                elif p.treatment == ENCODED:
                    point[p.name] = p.encode(value) if p.encode else value
                elif p.treatment == DERIVED and p.encode:
                    # made from the others: its draw is found given the earlier config
                    point[p.name] = p.encode(value, obs.config)
        except (ValueError, KeyError):
            warm.outside += 1
            continue
        warm.points.append((point, obs))
    return warm


def inside(domain: SpaceEntry, value: Value) -> bool:
    """Whether a Tune domain could have drawn ``value`` (bounds, integers, listed choices)."""
    from ray.tune.search.sample import Categorical, Float, Integer

    if isinstance(domain, Categorical):
        return any(value == c for c in domain.categories)
    if isinstance(domain, (Float, Integer)):
        if not isinstance(value, (int, float)) or isinstance(value, bool) or not math.isfinite(value):
            return False
        upper_ok = value < domain.upper if isinstance(domain, Integer) else value <= domain.upper
        return domain.lower <= value and upper_ok and (not isinstance(domain, Integer) or value == int(value))
    return True
