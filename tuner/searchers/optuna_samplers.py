"""Optuna's samplers as tuner runs them: three changes, each measured (the GP's fourth: tuner/searchers/warped_gp.py) (BENCHMARKS.md, "Search that beats Optuna"
and "TPE under early stopping").

1. **The random start is counted in proposals, not results.** Optuna's samplers draw at random until
   ``n_startup_trials`` results are in; with 8 trials running at once that is the first 17 of a sweep, not
   the first 10. Here the first ``warmup`` proposals are random, whatever runs at once, and the model takes
   over from the next one (with the running trials' outcomes fantasised or lied about, as each model does).
2. **No config proposed twice.** In a space of choices a model proposes a config it has already tried or
   is still running (TPE on HPOLib: one proposal in ten by 64 trials): a trial spent on nothing new. TPE draws
   its candidates at random, so it is asked again (then an unseen config at random); the GP scores untried
   configs only: in a space of choices every config (or a random 4,096 of them and a climb through the
   best one's neighbours), elsewhere its own optimum or, if that was tried, the best of its neighbours.
   Only this sweep's own trials count: a warm start's earlier configs teach the model but stay open to it
   (barred, a warm-started GP needed more trials than a cold one to reach the earlier sweep's best). The
   random start repeats none either where it could (choices and integers only).
3. **TPE ranks trials stopped early at the furthest epoch enough of them reached** (BOHB's choice of budget,
   kept asynchronous). Optuna ranks every finished trial above every pruned one and pruned ones by how far
   they got; under ASHA the few trials that ran to the end then fill TPE's good group whatever their values,
   and a trial stopped at epoch 4 is compared with one stopped at epoch 8 by values from different epochs.
   Here every trial that reached that epoch is ranked by its value there; under ASHA on real learning
   curves that reaches FIFO-random's best in fewer epochs than Optuna's ranking (BENCHMARKS.md, "TPE under
   early stopping").
Three hooks reach into Optuna: TPESampler's ``_sample`` (the trials it splits, read through
``study._get_trials``), GPSampler's ``_sample_relative_impl`` (the results it fits) and ``_optimize_acqf``
(where it searches its acquisition); tests/unit/test_optuna_samplers.py fails when any of them changes. Also
private: ``default_gamma`` (``optuna.samplers._tpe``), ``optuna._gp``'s search space and acquisition, the
samplers' ``_random_sampler``, ``_independent_sampler`` and ``_rng``, and the ``tpe:``/``gp:relative_params``
system attributes; all are indexed in tuner/ray_compat/__init__.py and checked by
tests/unit/test_private_uses.py.
"""

from __future__ import annotations

import copy
import json
import math
import warnings
from collections.abc import Callable, Container, Iterable, Mapping
from typing import Any, TypeAlias, cast

import optuna
from optuna.distributions import BaseDistribution
from optuna.samplers import BaseSampler, TPESampler
from optuna.samplers._tpe.sampler import default_gamma
from optuna.study import Study
from optuna.trial import FrozenTrial, TrialState

from tuner.value_types import Scalar

FINISHED = (TrialState.COMPLETE, TrialState.PRUNED)
TRIED = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING, TrialState.FAIL)
RETRIES = 20  # TPE asked again for an unseen config; then random draws

# A config as Optuna holds it: each parameter's value in its own form (a number or a choice: Scalar); and what it
# is compared as, its parameters' names and reprs in order.
Params: TypeAlias = dict[str, Scalar]
Key: TypeAlias = tuple[tuple[str, str], ...]


def _others(study: Study, trial: FrozenTrial, states: tuple[TrialState, ...] = TRIED) -> list[FrozenTrial]:
    return [t for t in study.get_trials(deepcopy=False, states=states) if t.number != trial.number]


def _key(params: Mapping[str, Scalar]) -> Key:
    return tuple(sorted((k, repr(v)) for k, v in params.items()))


def _tried(trials: list[FrozenTrial], names: Iterable[str]) -> set[Key]:
    """The configs (over ``names``) of ``trials``."""
    names = set(names)
    out: set[Key] = set()
    for t in trials:
        params = _params_of(t)
        if names <= params.keys():
            out.add(_key({k: params[k] for k in names}))
    return out


def _params_of(trial: FrozenTrial) -> Params:
    """A trial's parameters; a running trial's relative ones are in its system attributes until it asks."""
    if trial.state.is_finished() or not trial.system_attrs:
        return trial.params
    for prefix in ("gp:relative_params", "tpe:relative_params"):
        parts, i = [], 0
        while (part := trial.system_attrs.get(f"{prefix}:{i}")) is not None:
            parts.append(part)
            i += 1
        if parts:
            return {**json.loads("".join(parts)), **trial.params}
    return trial.params


class StartCounted(BaseSampler):
    """Random for the first ``warmup`` proposals of a study, however many run at once; the model after, once
    it has at least one result. Also which trials are this sweep's own (a warm start's come before them)."""

    _warmup: int
    _first_own: int | None = 0  # the first trial this sweep asked for (None until then); 0 in older pickles

    def _count_from(self, warmup: int) -> None:
        """At construction: the random start, and no trial of its own seen yet."""
        self._warmup = warmup
        self._first_own = None

    def before_trial(self, study: Study, trial: FrozenTrial) -> None:
        if self._first_own is None:
            self._first_own = trial.number
        super().before_trial(study, trial)

    def _starting(self, study: Study, trial: FrozenTrial) -> bool:
        others = _others(study, trial)
        results = [t for t in others if t.state in FINISHED]
        return len(others) < self._warmup or len(results) < self._min_results

    def _tried_here(self, study: Study, trial: FrozenTrial) -> list[FrozenTrial]:
        """This sweep's other trials, finished or running. An earlier sweep's trials (``--warm-start``) teach
        the model but do not bar their configs: after a code change an earlier config is worth running again,
        and its best one may well be the best still."""
        first = self._first_own if self._first_own is not None else trial.number
        return [t for t in _others(study, trial) if t.number >= first]

    def _start_unseen(
        self,
        study: Study,
        trial: FrozenTrial,
        search_space: dict[str, BaseDistribution],
        draw: Callable[[Study, FrozenTrial, str, BaseDistribution], Scalar],
    ) -> Params:
        """The random start without repeats where a repeat can happen: in a space of choices and integers
        (12 configs and 4 random starts repeated one in a sweep of 12), a random config not tried yet in this
        sweep. The draws are made in the order Optuna asks for the parameters, so a config that is new anyway
        is the very config Optuna's own random start would have drawn. {}: Optuna draws as it does."""
        from optuna.distributions import CategoricalDistribution, FloatDistribution

        def finite(d: BaseDistribution) -> bool:
            continuous = isinstance(d, FloatDistribution) and d.step is None
            return isinstance(d, CategoricalDistribution) or not continuous

        tried = self._tried_here(study, trial)
        if not search_space or not tried or not all(finite(d) for d in search_space.values()):
            return {}
        order = [name for name in _params_of(tried[-1]) if name in search_space]
        if set(order) != set(search_space):  # conditional: Optuna asks for other parameters in between
            return {}
        seen = _tried(tried, order)
        params: Params = {}
        for _ in range(RETRIES):
            params = {name: draw(study, trial, name, search_space[name]) for name in order}
            if _key(params) not in seen:
                break
        return params

    _min_results = 1


class FreshTPE(StartCounted, TPESampler):
    """Optuna's TPE (multivariate, grouped, constant liar) that never proposes a config already tried."""

    # ``kwargs``: TPESampler's own options, passed on untouched
    def __init__(self, warmup: int, seed: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("multivariate", True)
        kwargs.setdefault("constant_liar", True)
        with (
            warnings.catch_warnings()
        ):  # multivariate, group and constant_liar are 'experimental' in Optuna 5
            warnings.simplefilter("ignore", optuna.exceptions.ExperimentalWarning)
            TPESampler.__init__(self, n_startup_trials=0, seed=seed, **kwargs)
        self._count_from(warmup)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> Params:
        if not search_space:
            return {}
        if self._starting(study, trial):
            return self._start_unseen(study, trial, search_space, self._random_sampler.sample_independent)
        params: Params = TPESampler.sample_relative(self, study, trial, search_space)
        if not params:
            return params
        tried = _tried(self._tried_here(study, trial), params)
        for _ in range(RETRIES):  # TPE's candidates are random draws: another call, another best candidate
            if _key(params) not in tried:
                return params
            params = TPESampler.sample_relative(self, study, trial, search_space)
        for _ in range(RETRIES):  # the model keeps to tried configs: an unseen one at random
            if _key(params) not in tried:
                break
            params = {
                n: self._random_sampler.sample_independent(study, trial, n, d)
                for n, d in search_space.items()
            }
        return params

    def sample_independent(
        self, study: Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Scalar:
        if self._starting(study, trial):
            return self._random_sampler.sample_independent(study, trial, param_name, param_distribution)
        return TPESampler.sample_independent(self, study, trial, param_name, param_distribution)

    def _sample(self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]) -> Params:
        """Optuna's TPE step on the trials as seen at the furthest epoch enough of them reached (with several
        objectives, as they were told: each at its last epoch)."""
        if len(study.directions) > 1:  # several objectives
            return TPESampler._sample(self, study, trial, search_space)
        trials = study._get_trials(deepcopy=False, states=(*FINISHED, TrialState.RUNNING), use_cache=False)
        seen = cast(Study, _StudyAs(study, at_furthest_epoch(trials)))  # a Study where TPE reads its trials
        return TPESampler._sample(self, seen, trial, search_space)


RAN_TO_THE_END = 2**62  # how far a completed trial counts as having got, whatever epochs it reported


def _reached(trial: FrozenTrial) -> int:
    if trial.state == TrialState.COMPLETE:
        return RAN_TO_THE_END
    return max(trial.intermediate_values, default=0)


def at_furthest_epoch(
    trials: list[FrozenTrial], enough: Callable[[int], int] = default_gamma
) -> list[FrozenTrial]:
    """``trials`` with every finished one that reached the furthest epoch at least ``enough(n)`` of the ``n``
    finished trials reached shown as completed there, valued at that epoch (its value reported at it or last
    before it); the others (stopped sooner, or still running) as they are. Optuna's TPE then fills its good
    group with the best trials at that epoch, and ranks those stopped sooner by how far they got."""
    reached = {t.number: _reached(t) for t in trials if t.state in FINISHED}
    if not reached:
        return trials
    furthest = sorted(reached.values(), reverse=True)[min(enough(len(reached)), len(reached)) - 1]
    out = []
    for t in trials:
        if reached.get(t.number, -1) < furthest:  # stopped sooner, or still running
            out.append(t)
            continue
        reported = [e for e in t.intermediate_values if e <= furthest]
        value = t.intermediate_values[max(reported)] if reported else t.value
        if value is None or math.isnan(value):
            out.append(t)
            continue
        view = copy.copy(t)
        view.state, view.values = TrialState.COMPLETE, [float(value)]
        out.append(view)
    return out


class _StudyAs:
    """A study that answers with other views of its trials: where TPESampler reads them (``_get_trials``)."""

    def __init__(self, study: Study, trials: list[FrozenTrial]) -> None:
        self._study, self._trials = study, trials

    def __getattr__(self, name: str) -> Any:  # the study's own attribute, whatever it is
        return getattr(self._study, name)

    def _get_trials(
        self, deepcopy: bool = False, states: Container[TrialState] | None = None, use_cache: bool = False
    ) -> list[FrozenTrial]:
        return [t for t in self._trials if states is None or t.state in states]


__all__ = ["FreshTPE", "at_furthest_epoch"]
