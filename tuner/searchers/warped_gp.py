"""Optuna's GP as tuner runs it: the random start and no-repeat rules of tuner/searchers/optuna_samplers.py,
and one change of its own, measured (BENCHMARKS.md, "Search that beats Optuna").

**The GP sees its results through a power transform** (Box-Cox for positive values, Yeo-Johnson otherwise),
fitted afresh at each proposal. Validation losses span decades (1e-5 to 1e-1 on HPOLib's naval table); a GP on
the raw values fits the bad tail and cannot tell the good configs apart.

Two of GPSampler's hooks are overridden: ``_sample_relative_impl`` (the results it fits) and ``_optimize_acqf``
(where it searches its acquisition, untried configs only); tests/unit/test_optuna_samplers.py fails when
either changes. Also private: ``optuna._gp``'s search space and acquisition, ``_independent_sampler`` and
``_rng``; indexed in tuner/ray_compat/__init__.py and checked by tests/unit/test_private_uses.py.
"""

from __future__ import annotations

import copy
import math
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from optuna.distributions import BaseDistribution
from optuna.samplers import GPSampler
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial

from tuner.searchers.optuna_samplers import Params, StartCounted, _params_of

if TYPE_CHECKING:
    from optuna._gp.acqf import BaseAcquisitionFunc
    from optuna._gp.search_space import SearchSpace

GRID_ALL = 8192  # a space of choices with at most this many configs has every one scored
GRID_SAMPLE = 4096  # else this many at random, then a climb through neighbours
CLIMB_STEPS = 20


class WarpedGP(StartCounted, GPSampler):
    """Optuna's GP (log EI; fantasised outcomes for running trials) on power-transformed results, proposing
    only configs not tried yet."""

    _min_results = 2  # a GP fitted to one point has nothing to say

    # ``kwargs``: GPSampler's own options, passed on untouched
    def __init__(self, warmup: int, seed: int | None = None, **kwargs: Any) -> None:
        kwargs.setdefault("warn_independent_sampling", False)
        GPSampler.__init__(self, n_startup_trials=0, seed=seed, **kwargs)
        self._count_from(warmup)
        self._tried_normalized: np.ndarray | None = None
        self._space: SearchSpace | None = None  # the space of the proposal being made

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> Params:
        if not search_space:
            return {}
        if self._starting(study, trial):
            draw = self._independent_sampler.sample_independent
            return self._start_unseen(study, trial, search_space, draw)
        from optuna._gp import search_space as gp_search_space

        self._space = gp_search_space.SearchSpace(search_space)
        others = [(t, _params_of(t)) for t in self._tried_here(study, trial)]
        others = [(t, p) for t, p in others if search_space.keys() <= p.keys()]
        self._tried_normalized = (
            self._space.get_normalized_params([t for t, _ in others], [p for _, p in others])
            if others
            else None
        )
        return GPSampler.sample_relative(self, study, trial, search_space)

    def _sample_relative_impl(
        self,
        study: Study,
        completed_trials: list[FrozenTrial],
        running_trials: list[FrozenTrial],
        search_space: dict[str, BaseDistribution],
    ) -> Params:
        """Optuna's GP step on the completed trials seen through the power warp; running ones fantasised."""
        minimize = study.direction == StudyDirection.MINIMIZE
        raw = np.array([t.value for t in completed_trials], dtype=float)
        warped = power_warp(raw if minimize else -raw)
        seen = []
        for t, v in zip(completed_trials, warped if minimize else -warped, strict=True):
            view = copy.copy(t)
            view.values = [float(v)]
            seen.append(view)
        return GPSampler._sample_relative_impl(self, study, seen, running_trials, search_space)

    def _optimize_acqf(self, acqf: BaseAcquisitionFunc, best_params: np.ndarray | None) -> np.ndarray:
        tried = self._tried_normalized
        assert self._space is not None, "set by sample_relative, whose GPSampler step calls this"
        if not len(self._space.continuous_indices):  # a space of choices and integers: untried configs only
            found = _best_untried(acqf, self._space, tried, best_params, self._rng.rng)
            if found is not None:
                return found
        proposal = GPSampler._optimize_acqf(self, acqf, best_params)
        if tried is None or not _matches(proposal, tried).any():
            return proposal
        candidates = np.vstack(
            [_neighbours(proposal, self._space), self._space.sample_normalized_params(512, self._rng.rng)]
        )
        candidates = candidates[~_matches(candidates, tried)]
        if len(candidates) == 0:  # every config has been tried: a repeat is all that is left
            return proposal
        return candidates[int(np.argmax(acqf.eval_acqf_no_grad(candidates)))]


def _best_untried(
    acqf: BaseAcquisitionFunc,
    space: SearchSpace,
    tried: np.ndarray | None,
    start: np.ndarray | None,
    rng: np.random.RandomState,
) -> np.ndarray | None:
    """The untried config of a discrete space that scores best: every config where there are at most
    ``GRID_ALL``, else a random ``GRID_SAMPLE`` of them and the best's neighbours, then a climb from the best
    one neighbour at a time while the acquisition rises. None if every config has been tried."""
    choices = [np.asarray(c, dtype=float) for c in space.get_choices_of_discrete_params()]
    if math.prod(len(c) for c in choices) <= GRID_ALL:
        candidates = _grid(space, choices)
    else:
        candidates = np.empty((GRID_SAMPLE, space.dim))
        for i, c in zip(space.discrete_indices, choices, strict=True):
            candidates[:, i] = rng.choice(c, GRID_SAMPLE)
        if start is not None:
            candidates = np.vstack([candidates, _neighbours(start[0], space)])
    if tried is not None:
        candidates = candidates[~_matches(candidates, tried)]
    if not len(candidates):
        return None
    scores = acqf.eval_acqf_no_grad(candidates)
    best, score = candidates[int(np.argmax(scores))], float(np.max(scores))
    for _ in range(CLIMB_STEPS):
        around = _neighbours(best, space)
        if tried is not None:
            around = around[~_matches(around, tried)]
        if not len(around):
            break
        scores = acqf.eval_acqf_no_grad(around)
        if float(np.max(scores)) <= score:
            break
        best, score = around[int(np.argmax(scores))], float(np.max(scores))
    return best


def _matches(points: np.ndarray, tried: np.ndarray) -> np.ndarray:
    """For each point (row), whether it equals a tried config (normalized coordinates)."""
    points = np.atleast_2d(points)
    seen = {row.tobytes() for row in np.round(tried, 9)}
    return np.array([row.tobytes() in seen for row in np.round(points, 9)], dtype=bool)


def _grid(space: SearchSpace, choices: list[np.ndarray]) -> np.ndarray:
    """Every config of a space of choices and integers (normalized coordinates)."""
    columns = np.meshgrid(*choices, indexing="ij")
    grid = np.empty((columns[0].size, space.dim))
    for i, column in zip(space.discrete_indices, columns, strict=True):
        grid[:, i] = column.ravel()
    return grid


def _neighbours(point: np.ndarray, space: SearchSpace) -> np.ndarray:
    """The configs one step away from ``point`` in one discrete parameter (any other value of a categorical)."""
    out = []
    for i, choices in zip(space.discrete_indices, space.get_choices_of_discrete_params(), strict=True):
        choices = np.asarray(choices, dtype=float)
        at = int(np.argmin(np.abs(choices - point[i])))
        steps = choices if space.is_categorical[i] else choices[max(0, at - 1) : at + 2]
        for value in steps:
            if value != choices[at]:
                moved = point.copy()
                moved[i] = value
                out.append(moved)
    return np.array(out).reshape(-1, len(point))


def power_warp(values: np.ndarray) -> np.ndarray:
    """Results to minimise, power-transformed and standardised: Box-Cox when all are positive, Yeo-Johnson
    otherwise; as they are when too few or all equal. Infinite values are held at the worst finite one."""
    values = np.asarray(values, dtype=float)
    finite = np.isfinite(values)
    if finite.sum() < 3 or np.ptp(values[finite]) == 0:
        return values
    values = np.where(finite, values, values[finite].max())
    from sklearn.preprocessing import PowerTransformer

    column = values.reshape(-1, 1)
    if (column > 0).all():
        method = "box-cox"
    else:
        method = "yeo-johnson"
        column = (column - column.mean()) / column.std()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an ill-fitting lambda warns; the transform stays monotone
        out = PowerTransformer(method=method).fit_transform(column).ravel()
    return out if np.isfinite(out).all() else values


__all__ = ["WarpedGP", "power_warp"]
