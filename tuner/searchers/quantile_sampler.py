"""Conformalised quantile regression as an Optuna sampler: the model behind ``--searcher cqr``.

Made for early stopping. Under ASHA most trials stop at the first rungs, so a model that learns only from
trials that ran to the end learns from few, and late. This one learns from every trial at once, as ASHA-CQR
does (Salinas, Golebiowski, Klein, Seeger, Archambeau, "Optimizing Hyperparameters with Conformal Quantile
Regression", ICML 2023), each trial scored by its rank among the trials that got as far as it did: a loss at
epoch 1 is never compared with one at epoch 27, so the few trials promoted early (while the rungs were empty)
do not pull the search towards themselves.

Gradient-boosted trees (scikit-learn) predict several quantiles of a config's rank-normalised value; once
there are enough trials a held-out fifth calibrates them (split conformal prediction), so their spread says how
sure the model is. Each proposal scores a few thousand random configs and the neighbours of the best ones, each
by one of its predicted quantiles drawn at random (a cheap Thompson sampling), and takes the lowest: a config
the model is unsure of can win by its optimistic quantile, so the search keeps exploring where it knows
little. The random start is counted in proposals, no config is proposed twice, and the trees are fitted again
only once a tenth more results are in.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np
from optuna.distributions import (
    BaseDistribution,
    CategoricalDistribution,
    FloatDistribution,
    IntDistribution,
)
from optuna.samplers import BaseSampler, RandomSampler
from optuna.search_space import IntersectionSearchSpace
from optuna.study import Study, StudyDirection
from optuna.trial import FrozenTrial, TrialState

from tuner.searchers.optuna_samplers import Params, StartCounted, _params_of
from tuner.value_types import Scalar

if TYPE_CHECKING:
    from sklearn.ensemble import GradientBoostingRegressor

# wider quantiles explored too much (BENCHMARKS.md, "Early stopping on continuous spaces")
QUANTILES = (0.25, 0.5, 0.75)
PEERS = 3  # a trial is ranked at the furthest epoch it reached with at least this many trials there
RANDOM_CANDIDATES = 2000
NEIGHBOURS_OF = 5  # the best this many configs seen get candidates around them
NEIGHBOURS = 100  # for each of them
CALIBRATE_FROM = 20  # results before a fifth of them is held out to calibrate the quantiles
REFIT_GROWTH = 0.1  # the trees are fitted again once this share more results are in
TREES = dict(n_estimators=30, max_depth=3, learning_rate=0.1, subsample=0.9, min_samples_leaf=2)
SEEN = (TrialState.COMPLETE, TrialState.PRUNED, TrialState.RUNNING)


class QuantileSampler(StartCounted, BaseSampler):
    """Random for the first ``warmup`` proposals; then the config whose sampled quantile is best."""

    _min_results = 3

    def __init__(self, warmup: int, seed: int | None = None) -> None:
        # the candidates come from a stream seeded as the random start's: the first candidates repeat its values,
        # which the model ranks as any other (apart, they measured no better: BENCHMARKS.md, 2026-11-29 (fifth))
        self._rng = np.random.RandomState(seed)
        self._random_sampler = RandomSampler(seed=seed)
        self._space_of = IntersectionSearchSpace(include_pruned=True)
        # (results, space, models) of the last fit
        self._fitted: tuple[int, tuple[str, ...], list[tuple[GradientBoostingRegressor, float]]] | None = None
        self._count_from(warmup)

    def reseed_rng(self) -> None:
        self._rng = np.random.RandomState()
        self._random_sampler.reseed_rng()

    def infer_relative_search_space(self, study: Study, trial: FrozenTrial) -> dict[str, BaseDistribution]:
        space = self._space_of.calculate(study)
        return {n: d for n, d in space.items() if not d.single()}

    def sample_independent(
        self, study: Study, trial: FrozenTrial, param_name: str, param_distribution: BaseDistribution
    ) -> Scalar:
        return self._random_sampler.sample_independent(study, trial, param_name, param_distribution)

    def sample_relative(
        self, study: Study, trial: FrozenTrial, search_space: dict[str, BaseDistribution]
    ) -> Params:
        if not search_space:
            return {}
        if self._starting(study, trial):
            return self._start_unseen(study, trial, search_space, self._random_sampler.sample_independent)
        names = sorted(search_space)
        seen = _observations(study, names)
        if len(seen) < self._min_results:
            return {}
        codec = _Codec([search_space[n] for n in names])
        points = codec.points([[p[n] for n in names] for p, _ in seen])
        y = _normal_scores(np.array([v for _, v in seen]))
        models = self._models(codec.features(points), y, tuple(names))
        candidates = np.vstack(
            [codec.random(RANDOM_CANDIDATES, self._rng)]
            + [codec.near(points[i], NEIGHBOURS, self._rng) for i in np.argsort(y)[:NEIGHBOURS_OF]]
        )
        tried = [[_params_of(t).get(n) for n in names] for t in self._tried_here(study, trial)]
        tried = [row for row in tried if all(v is not None for v in row)]
        if tried:
            candidates = candidates[~_matches(candidates, codec.points(tried))]
        if not len(candidates):
            return {}
        scores = _sampled_quantiles(models, codec.features(candidates), self._rng)
        return dict(zip(names, codec.values(candidates[int(np.argmin(scores))]), strict=True))

    def _models(
        self, x: np.ndarray, y: np.ndarray, space: tuple[str, ...]
    ) -> list[tuple[GradientBoostingRegressor, float]]:
        if self._fitted is not None:
            count, fitted_space, models = self._fitted
            if fitted_space == space and len(y) < count * (1 + REFIT_GROWTH):
                return models
        models = _fit(x, y, self._rng)
        self._fitted = (len(y), space, models)
        return models


def _observations(study: Study, names: list[str]) -> list[tuple[Params, float]]:
    """Every trial with a result and every searched parameter: its params and its score, smaller is better.

    A trial's score is its rank (0: the best, 1: the worst) among the trials that reported at the furthest
    epoch it reached where at least ``PEERS`` did: a loss at epoch 1 is compared with other losses at epoch 1,
    never with one at epoch 27, and a trial that ran to the end is ranked among those that did too.
    """
    from scipy.stats import rankdata

    sign = 1.0 if study.direction == StudyDirection.MINIMIZE else -1.0
    curves: list[tuple[Params, dict[float, float]]] = []
    for t in study.get_trials(deepcopy=False, states=SEEN):
        params = _params_of(t)
        if not set(names) <= params.keys():
            continue
        curve = {
            float(e): sign * v for e, v in t.intermediate_values.items() if v is not None and math.isfinite(v)
        }
        if not curve and t.state == TrialState.COMPLETE and t.value is not None and math.isfinite(t.value):
            curve[math.inf] = sign * t.value  # a result without epochs (an earlier sweep's, one epoch)
        if curve:
            curves.append((params, curve))
    ranks: list[dict[float, float]] = [{} for _ in curves]
    for epoch in {e for _, curve in curves for e in curve}:
        at = [(i, curve[epoch]) for i, (_, curve) in enumerate(curves) if epoch in curve]
        if len(at) < PEERS:
            continue
        shares = (rankdata([v for _, v in at]) - 0.5) / len(at)
        for (i, _), share in zip(at, shares, strict=True):
            ranks[i][epoch] = float(share)
    return [(params, r[max(r)] if r else 0.5) for (params, _), r in zip(curves, ranks, strict=True)]


def _normal_scores(values: np.ndarray) -> np.ndarray:
    """Scores as normal quantiles of their ranks: the trees fit an evenly spread target."""
    from scipy.stats import norm, rankdata

    return norm.ppf((rankdata(values) - 0.5) / len(values))


def _fit(
    x: np.ndarray, y: np.ndarray, rng: np.random.RandomState
) -> list[tuple[GradientBoostingRegressor, float]]:
    """One model per quantile, each with the shift split conformal prediction gives it (0 until there are
    enough results to hold some out)."""
    from sklearn.ensemble import GradientBoostingRegressor

    seed = int(rng.randint(2**31 - 1))
    order = rng.permutation(len(y))
    held = order[: len(y) // 5] if len(y) >= CALIBRATE_FROM else order[:0]
    train = order[len(held) :]
    models = []
    for q in QUANTILES:
        model = GradientBoostingRegressor(loss="quantile", alpha=q, random_state=seed, **TREES)
        models.append(model.fit(x[train], y[train]))
    shifts = [0.0] * len(QUANTILES)
    if len(held):
        predicted = [m.predict(x[held]) for m in models]
        for lo in range(len(QUANTILES) // 2):  # each pair (q, 1 - q) widened to cover 1 - 2q of held results
            hi = len(QUANTILES) - 1 - lo
            errors = np.maximum(predicted[lo] - y[held], y[held] - predicted[hi])
            level = min(1.0, math.ceil((len(held) + 1) * (1 - 2 * QUANTILES[lo])) / len(held))
            shift = float(np.quantile(errors, level))
            shifts[lo], shifts[hi] = -shift, shift
    return list(zip(models, shifts, strict=True))


def _sampled_quantiles(
    models: list[tuple[GradientBoostingRegressor, float]], x: np.ndarray, rng: np.random.RandomState
) -> np.ndarray:
    """Each candidate's score: one of its calibrated quantiles, drawn at random."""
    predicted = np.stack([m.predict(x) + shift for m, shift in models])  # quantiles x candidates
    predicted.sort(axis=0)  # quantile trees fitted apart can cross
    return predicted[rng.randint(len(models), size=x.shape[0]), np.arange(x.shape[0])]


def _matches(points: np.ndarray, tried: np.ndarray) -> np.ndarray:
    """For each candidate (row), whether it is a config already tried."""
    seen = {row.tobytes() for row in np.round(tried, 12)}
    return np.array([row.tobytes() in seen for row in np.round(points, 12)], dtype=bool)


class _Codec:
    """Configs as rows of numbers (a numeric parameter in its own units, rounded to its grid; a choice by
    its index), the model's features (the unit cube; a choice one-hot) and back."""

    def __init__(self, distributions: list[BaseDistribution]) -> None:
        self.distributions = distributions

    def points(self, configs: list[list[Scalar]]) -> np.ndarray:
        out = np.empty((len(configs), len(self.distributions)))
        for j, d in enumerate(self.distributions):
            column = [c[j] for c in configs]
            if isinstance(d, CategoricalDistribution):
                out[:, j] = [d.to_internal_repr(v) for v in column]
            else:
                out[:, j] = np.asarray(column, dtype=float)
        return out

    def values(self, point: np.ndarray) -> list[Scalar]:
        out: list[Scalar] = []
        for d, v in zip(self.distributions, point, strict=True):
            if isinstance(d, CategoricalDistribution):
                out.append(d.choices[int(v)])
            elif isinstance(d, IntDistribution):
                out.append(int(round(v)))
            else:
                out.append(float(v))
        return out

    def features(self, points: np.ndarray) -> np.ndarray:
        columns = []
        for j, d in enumerate(self.distributions):
            if isinstance(d, CategoricalDistribution):
                columns.append(np.eye(len(d.choices))[points[:, j].astype(int)])
            else:
                assert isinstance(d, (FloatDistribution, IntDistribution))
                low, high = _bounds(d)
                at = np.log(points[:, j]) if d.log else points[:, j]
                columns.append(((at - low) / (high - low) if high > low else at * 0 + 0.5)[:, None])
        return np.hstack(columns)

    def random(self, n: int, rng: np.random.RandomState) -> np.ndarray:
        out = np.empty((n, len(self.distributions)))
        for j, d in enumerate(self.distributions):
            if isinstance(d, CategoricalDistribution):
                out[:, j] = rng.randint(len(d.choices), size=n)
            else:
                out[:, j] = _from_unit(d, rng.rand(n))
        return out

    def near(self, point: np.ndarray, n: int, rng: np.random.RandomState) -> np.ndarray:
        """``n`` configs around ``point``: each numeric parameter moved a little (a tenth of its range, in its
        own scale), and now and then one choice changed."""
        out = np.repeat(point[None, :], n, axis=0)
        for j, d in enumerate(self.distributions):
            if isinstance(d, CategoricalDistribution):
                change = rng.rand(n) < 1 / max(2, len(self.distributions))
                out[change, j] = rng.randint(len(d.choices), size=int(change.sum()))
            else:
                assert isinstance(d, (FloatDistribution, IntDistribution))
                low, high = _bounds(d)
                at = np.log(point[j]) if d.log else point[j]
                u = (at - low) / (high - low) if high > low else 0.5
                out[:, j] = _from_unit(d, np.clip(u + rng.normal(0, 0.1, size=n), 0.0, 1.0))
        return out


def _bounds(d: FloatDistribution | IntDistribution) -> tuple[float, float]:
    if d.log:
        return math.log(d.low), math.log(d.high)
    return float(d.low), float(d.high)


def _from_unit(d: BaseDistribution, u: np.ndarray) -> np.ndarray:
    """Points of the unit interval as values of ``d``: on its scale, on its grid, within its bounds."""
    assert isinstance(d, (FloatDistribution, IntDistribution))
    low, high = _bounds(d)
    at = low + u * (high - low)
    value = np.exp(at) if d.log else at
    step = d.step if d.step is not None else (1 if isinstance(d, IntDistribution) else None)
    if step is not None:
        value = d.low + np.round((value - d.low) / step) * step
    return np.clip(value, d.low, d.high)
